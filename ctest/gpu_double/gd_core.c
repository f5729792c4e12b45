/* The double's engine: the environment, and streams as in-order queues of operations run on the calling
 * thread when a stream is polled (cudaStreamQuery, cudaStreamSynchronize, cudaEventSynchronize, an enqueue).
 * gd.h says who uses what. */
#include "gd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- environment ---- */

long gd_env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

bool gd_fault_here(void)
{
    long want = gd_env_long("GA_DOUBLE_FAULT_RANK", -1);
    return want < 0 || want == gd_env_long("OMPI_COMM_WORLD_RANK", gd_env_long("PMIX_RANK", 0));
}

/* "Op[:n]" names op and its n-th call (1-based)? */
bool gd_fault_matches(const char *var, const char *op, long call)
{
    const char *v = getenv(var);
    if (!v || !*v || !gd_fault_here())
        return false;
    size_t len = strcspn(v, ":");
    long n = v[len] == ':' ? strtol(v + len + 1, NULL, 10) : 1;
    return strlen(op) == len && strncmp(v, op, len) == 0 && call == n;
}

double gd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gd_nap(void)
{
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
}

gd_counters gd_counts;
static long fn_calls[GD_FN_COUNT];
static const char *const fn_names[GD_FN_COUNT] = {
    "cudaStreamBeginCapture", "cudaStreamEndCapture",   "cudaGraphInstantiate", "cudaGraphLaunch",
    "ncclCommRegister",       "ncclCommWindowRegister", "ncclMemAlloc"};

bool gd_fail_now(int f)
{
    return gd_fault_matches("GA_DOUBLE_FAIL", fn_names[f], ++fn_calls[f]);
}

static void print_counts(void)
{
    static bool printed;
    if (!gd_tracing() || printed)
        return;
    printed = true;
    fprintf(
        stderr,
        "[gpu-double] rank %ld: captures %ld instantiated %ld launches %ld execs_destroyed %ld "
        "graphs_destroyed %ld registered %ld deregistered %ld windows %ld windows_freed %ld mem_allocs %ld "
        "mem_frees %ld default_stream_colls %ld colls %ld unaligned_colls %ld issued %ld groups %ld "
        "grouped_colls %ld "
        "max_group %ld distinct_inputs %ld ar_fills %ld ar_verifies %ld ar_wrong %ld\n",
        gd_world_rank(), gd_counts.captures, gd_counts.instantiated, gd_counts.launches,
        gd_counts.execs_destroyed, gd_counts.graphs_destroyed, gd_counts.registered, gd_counts.deregistered,
        gd_counts.windows, gd_counts.windows_freed, gd_counts.mem_allocs, gd_counts.mem_frees,
        gd_counts.default_stream_colls, gd_counts.colls, gd_counts.unaligned_colls, gd_counts.issued,
        gd_counts.groups, gd_counts.grouped_colls, gd_counts.max_group, gd_counts.distinct_inputs,
        gd_counts.ar_fills, gd_counts.ar_verifies, gd_counts.ar_wrong);
}

__attribute__((destructor)) static void print_counts_at_exit(void)
{
    print_counts();
}

/* The counts are printed before MPI_Finalize too: Open MPI's finalize waits for every rank, so each rank's
 * line is out before any rank exits. At exit alone, a rank that exits non-zero first gets the others killed
 * by mpiexec before their destructors print. */
EXPORT int MPI_Finalize(void)
{
    print_counts();
    fflush(stderr);
    int (*real)(void) = (int (*)(void))(void (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");
    return real ? real() : 0;
}

bool gd_tracing(void)
{
    return getenv("GA_DOUBLE_TRACE") != NULL;
}

long gd_world_rank(void)
{
    return gd_env_long("OMPI_COMM_WORLD_RANK", gd_env_long("PMIX_RANK", 0));
}

struct CUstream_st gd_legacy_stream;
struct CUstream_st *gd_streams = &gd_legacy_stream;
cudaError_t gd_last_error = cudaSuccess;

struct CUstream_st *gd_stream_of(cudaStream_t s)
{
    return s ? s : &gd_legacy_stream;
}

/* Runs the first operation of s if it can; true when it is done. */
static bool run_op(work *o)
{
    switch (o->kind) {
    case OP_COPY:
        if (o->host_link && !o->started) { /* the link is busy until the stream is polled again */
            memmove(o->dst, o->src, o->bytes);
            o->started = true;
            return false;
        }
        if (o->host_link)
            return true;
        memmove(o->dst, o->src, o->bytes);
        for (double until = gd_now() + o->value * 1e-6; gd_now() < until;)
            ;
        return true;
    case OP_SET:
        memset(o->dst, o->value, o->bytes);
        return true;
    case OP_KERNEL:
        if (o->kernel)
            o->kernel(o->words, o->grid);
        return true;
    case OP_EVENT:
        o->event->t = gd_now();
        o->event->pending = false;
        return true;
    case OP_WAIT_EVENT:
        return !o->event->pending;
    case OP_COLL:
        return gd_coll_progress(o->coll);
    case OP_GEMM:
        o->kernel(o->words, o->grid);
        return true;
    case OP_NEVER:
        return false;
    }
    return true;
}

static bool stream_progress(struct CUstream_st *s)
{
    while (s->head) {
        if (!run_op(s->head))
            return false;
        work *done = s->head;
        s->head = done->next;
        if (!s->head)
            s->tail = NULL;
        free(done);
    }
    return true;
}

/* For the NVML double (gd_nvml.c, found with dlsym): is a host copy in flight, the PCIe link under load? */
EXPORT bool gd_host_link_busy(void)
{
    for (struct CUstream_st *s = gd_streams; s; s = s->next_stream)
        if (s->head && s->head->kind == OP_COPY && s->head->host_link && s->head->started)
            return true;
    return false;
}

void gd_progress_all(void)
{
    for (struct CUstream_st *s = gd_streams; s; s = s->next_stream)
        stream_progress(s);
}

work *gd_work_new(op_kind kind)
{
    work *o = calloc(1, sizeof *o);
    if (!o)
        abort();
    o->kind = kind;
    return o;
}

void gd_enqueue(cudaStream_t stream, work *o)
{
    struct CUstream_st *s = gd_stream_of(stream);
    if (s->capturing) {
        if (s->cap_tail)
            s->cap_tail->next = o;
        else
            s->cap_head = o;
        s->cap_tail = o;
        return;
    }
    if (s->tail)
        s->tail->next = o;
    else
        s->head = o;
    s->tail = o;
    gd_progress_all();
}
