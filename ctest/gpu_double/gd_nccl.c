/* The double's NCCL communicators. A communicator is a shared-memory segment between the processes of one
 * node (its name travels in the ncclUniqueId). As in NCCL 2.28:
 * - blocking communicators block: init until every rank has joined, the first collective until every rank has
 *   issued its own (runtime connection), a window registration until every rank has made it, finalize until
 *   the communicator's work is done; non-blocking ones (config.blocking = 0, or NCCL_COMM_BLOCKING=0 in the
 *   environment, which overrides the config) answer ncclInProgress and ncclCommGetAsyncError says when done;
 * - ncclCommAbort completes the aborted work (its collectives end, so their streams drain) and frees the
 *   communicator: any later call on it is a use after free, and so is a call made while another thread is
 *   inside one on the same communicator: the double ends the process there (gd_comm_enter). */
#include "double_nccl_log.h"
#include "gd_nccl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char last_error[256]; /* ncclGetLastError: the process's last error, whatever the communicator */

void gd_nccl_error(struct ncclComm *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (c)
        snprintf(c->last_error, sizeof c->last_error, "%s", last_error);
}

_Noreturn static void die(const struct ncclComm *c, const char *fn, const char *why)
{
    fprintf(stderr, "[gpu-double] FATAL: %s (rank %d of %d): %s\n", fn, c->rank, c->nranks, why);
    fflush(stderr);
    abort();
}

void gd_comm_enter(struct ncclComm *c, const char *fn)
{
    if (!c)
        return;
    if (c->magic == COMM_FREED)
        die(c, fn, "the communicator was freed by ncclCommAbort or ncclCommDestroy: a use after free");
    if (atomic_fetch_add(&c->in_call, 1) != 0)
        die(c, fn,
            "another thread is inside an NCCL call on the same communicator (NCCL calls on one "
            "communicator must not run concurrently)");
}

void gd_comm_leave(struct ncclComm *c)
{
    if (c)
        atomic_fetch_sub(&c->in_call, 1);
}

static bool all_at_least(atomic_int *v, int n, int at_least)
{
    for (int r = 0; r < n; r++)
        if (atomic_load(&v[r]) < at_least)
            return false;
    return true;
}

/* Is any work of c still queued on a stream? */
static bool comm_busy(const struct ncclComm *c)
{
    gd_progress_all();
    for (struct CUstream_st *s = gd_streams; s; s = s->next_stream)
        for (work *w = s->head; w; w = w->next)
            if (w->kind == OP_COLL && w->coll->comm == c)
                return true;
    return false;
}

bool gd_comm_pending_done(struct ncclComm *c)
{
    switch (c->pending) {
    case PEND_INIT:
        return c->h && atomic_load(&c->h->attached) >= c->nranks;
    case PEND_CONNECT:
        return all_at_least(c->h->connected, c->nranks, 1);
    case PEND_WINDOW:
        for (int r = 0; r < c->nranks; r++)
            if (atomic_load(&c->h->windows[r]) < c->windows_wanted)
                return false;
        return true;
    case PEND_FINALIZE:
        return !comm_busy(c);
    case PEND_NEVER:
        return false;
    default:
        return true;
    }
}

/* GA_DOUBLE_NCCL_CONNECT_HANG=1: the rank never connects (a peer that never comes). */
ncclResult_t gd_comm_connect(struct ncclComm *c)
{
    if (c->connected)
        return ncclSuccess;
    c->connected = true;
    bool hang = gd_env_long("GA_DOUBLE_NCCL_CONNECT_HANG", 0) && gd_fault_here();
    if (!hang)
        atomic_store(&c->h->connected[c->rank], 1);
    if (c->nonblocking) {
        c->pending = hang ? PEND_NEVER : PEND_CONNECT;
        return ncclInProgress;
    }
    while (hang || !all_at_least(c->h->connected, c->nranks, 1))
        gd_nap();
    return ncclSuccess;
}

/* GA_DOUBLE_NCCL_VERSION=22703: the library reports that version code (an older NCCL than the headers, as a
 * node with another NCCL installed would), on the ranks gd_fault_here selects. */
EXPORT ncclResult_t ncclGetVersion(int *v)
{
    long code = gd_env_long("GA_DOUBLE_NCCL_VERSION", 0);
    *v = code > 0 && gd_fault_here() ? (int)code : NCCL_VERSION_CODE;
    return ncclSuccess;
}

EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess:
        return "no error (test double)";
    case ncclInProgress:
        return "operation in progress (test double)";
    case ncclRemoteError:
        return "remote process exited or there was a network error (test double)";
    case ncclInvalidArgument:
        return "invalid argument (test double)";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (test double)";
    default:
        return "NCCL error (test double)";
    }
}

EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm; /* as NCCL: the last error of the process, whatever the communicator */
    return last_error;
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static int counter;
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "/ga-double-%d-%d-%ld", (int)getpid(), counter++,
             (long)(gd_now() * 1e6));
    return ncclSuccess;
}

/* NCCL_COMM_BLOCKING=0 or 1 in the environment overrides config.blocking (NCCL 2.28's parseCommConfig). */
static bool blocking_of(const ncclConfig_t *config)
{
    const char *env = getenv("NCCL_COMM_BLOCKING");
    if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0))
        return env[0] == '1';
    return !config || config->blocking != 0; /* NCCL_CONFIG_UNDEF_INT: blocking */
}

static ncclResult_t attach(struct ncclComm *c, const ncclUniqueId *id)
{
    int fd = shm_open(id->internal, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)c->map_bytes) != 0) {
        gd_nccl_error(c, "test double: shm_open %s: %s", id->internal, strerror(errno));
        if (fd >= 0)
            close(fd);
        return ncclSystemError;
    }
    c->h = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (c->h == MAP_FAILED) {
        c->h = NULL;
        return ncclSystemError;
    }
    /* The last rank to attach removes the name; the mapping stays. */
    if (atomic_fetch_add(&c->h->attached, 1) + 1 == c->nranks)
        shm_unlink(id->internal);
    return ncclSuccess;
}

/* Once every rank has joined: what NCCL's debug output says about the communicator (issue 25), once. */
static void init_done(struct ncclComm *c)
{
    if (c->logged)
        return;
    c->logged = true;
    double_nccl_log_comm(c->id_name, c, c->rank, c->nranks);
}

EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *out, int nranks, ncclUniqueId id, int rank,
                                           ncclConfig_t *config)
{
    *out = NULL;
    if (nranks > MAX_RANKS || rank < 0 || rank >= nranks)
        return ncclInvalidArgument;
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    c->magic = COMM_LIVE;
    c->rank = rank;
    c->nranks = nranks;
    c->slot_bytes = (size_t)gd_env_long("GA_DOUBLE_SLOT_BYTES", 1 << 20);
    c->map_bytes = sizeof(shm_header) + (size_t)nranks * c->slot_bytes;
    c->nonblocking = !blocking_of(config);
    if (gd_tracing())
        fprintf(stderr,
                "[gpu-double] ncclCommInitRankConfig rank %d of %d CTAPolicy %d nvlinkCentricSched %d "
                "blocking %d\n",
                rank, nranks, config ? config->CTAPolicy : NCCL_CONFIG_UNDEF_INT,
                config ? config->nvlinkCentricSched : NCCL_CONFIG_UNDEF_INT, !c->nonblocking);
    c->comm_bytes = (uint64_t)gd_env_long("GA_DOUBLE_COMM_BYTES", 64L << 20);
    gd_device_used += c->comm_bytes;
    *out = c;
    if (gd_env_long("GA_DOUBLE_NCCL_INIT_HANG", 0) && gd_fault_here()) {
        /* Never joins: a blocking init never returns; a non-blocking one stays in progress. */
        if (!c->nonblocking)
            for (;;)
                gd_nap();
        c->pending = PEND_INIT;
        return ncclInProgress;
    }
    ncclResult_t r = attach(c, &id);
    if (r != ncclSuccess)
        return r;
    snprintf(c->id_name, sizeof c->id_name, "%s", id.internal);
    c->pending = PEND_INIT;
    if (c->nonblocking) {
        if (!gd_comm_pending_done(c))
            return ncclInProgress;
        c->pending = PEND_NONE;
        init_done(c);
        return ncclSuccess;
    }
    while (!gd_comm_pending_done(c))
        gd_nap();
    c->pending = PEND_NONE;
    init_done(c);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
{
    gd_comm_enter(comm, "ncclCommGetAsyncError");
    *err = (ncclResult_t)atomic_load(&comm->async_error);
    if (*err == ncclSuccess && comm->pending != PEND_NONE) {
        /* A non-blocking call finishes in NCCL's own thread: in progress at least at the first look. */
        bool done = comm->pending != PEND_ONCE && gd_comm_pending_done(comm);
        if (done && comm->pending == PEND_INIT)
            init_done(comm);
        if (comm->pending == PEND_ONCE || done)
            comm->pending = PEND_NONE;
        *err = done ? ncclSuccess : ncclInProgress;
    }
    gd_comm_leave(comm);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    gd_comm_enter(comm, "ncclCommAbort");
    if (gd_tracing())
        fprintf(stderr, "[gpu-double] ncclCommAbort (rank %d of %d)\n", comm->rank, comm->nranks);
    fflush(stderr);
    /* The kernels see the abort flag and exit: every collective of the communicator completes (its output
     * undefined), and the streams it held drain. Then the communicator is freed. */
    atomic_store(&comm->aborted, true);
    gd_progress_all();
    gd_device_used -= comm->comm_bytes;
    comm->magic = COMM_FREED;
    atomic_fetch_sub(&comm->in_call, 1);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    gd_comm_enter(comm, "ncclCommFinalize");
    ncclResult_t r = ncclSuccess;
    if (comm->finalized) {
        r = ncclInvalidArgument; /* NCCL: a second finalize */
    } else {
        comm->finalized = true;
        comm->pending = PEND_FINALIZE;
        if (comm->nonblocking) {
            r = ncclInProgress;
        } else {
            while (!gd_comm_pending_done(comm))
                gd_nap();
            comm->pending = PEND_NONE;
        }
    }
    gd_comm_leave(comm);
    return r;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    gd_comm_enter(comm, "ncclCommDestroy");
    if (comm->h)
        munmap(comm->h, comm->map_bytes);
    comm->h = NULL;
    gd_device_used -= comm->comm_bytes;
    comm->magic = COMM_FREED;
    atomic_fetch_sub(&comm->in_call, 1);
    return ncclSuccess;
}
