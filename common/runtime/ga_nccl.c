#include "ga_nccl.h"

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_nccl_log.h"
#include "ga_time.h"
#include "ga_transport_capture.h"

/* What the messages say about a communicator: its label and this rank's place in it. Programs hold a few
 * communicators at most (one per pair round, one at a time). */
typedef struct {
    ncclComm_t comm;
    char label[96];
    int rank, size;
} comm_info;

static comm_info comms[8];

static const comm_info *info_of(ncclComm_t comm)
{
    for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++)
        if (comms[i].comm == comm)
            return &comms[i];
    static const comm_info unknown = {NULL, "?", -1, -1};
    return &unknown;
}

static void describe(ncclComm_t comm, const char *what, char *out, size_t len)
{
    const comm_info *c = info_of(comm);
    snprintf(out, len, "%s on NCCL communicator '%s' (rank %d of %d)", what, c->label, c->rank, c->size);
}

static double bound_of(double timeout_s)
{
    return timeout_s > 0 ? timeout_s : 1e9;
}

/* Aborts the communicator, on the main thread (the only one that calls NCCL: the deadline watcher hands its
 * expiries over, ga_deadline_hand_expiry_to_main), and ends the job. NCCL frees the communicator in the
 * abort: nothing may touch it afterwards. */
static _Noreturn void abort_comm(ncclComm_t comm, int exit_code, const char *why)
{
    ncclCommAbort(comm);
    if (exit_code == GA_EXIT_TIMEOUT)
        ga_deadline_expired("%s; communicator aborted", why); /* names the rank(s) that did not arrive */
    GA_FATAL(exit_code, "%s; communicator aborted", why);
}

/* At every poll of a wait: an expiry the watcher handed over is acted on here, NCCL's abort pattern for a
 * communicator whose calls do not block (the waits on a blocking one poll too). */
static void act_on_expiry(ncclComm_t comm)
{
    char msg[512];
    if (ga_deadline_expiry_pending(msg, sizeof msg))
        abort_comm(comm, GA_EXIT_TIMEOUT, msg);
}

static void check_deadline(ncclComm_t comm, double deadline, double timeout_s, const char *desc);

static size_t live_comms(void)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++)
        n += comms[i].comm != NULL;
    return n;
}

/* Polls a non-blocking communicator's ncclInProgress out (ncclCommGetAsyncError), bounded by timeout_s and
 * by the watcher's expiries; the final state. */
static ncclResult_t poll_in_progress(ncclComm_t comm, double timeout_s, const char *desc)
{
    double bound = bound_of(timeout_s), start = ga_now(), deadline = start + bound;
    ncclResult_t st = ncclInProgress;
    for (;;) {
        ncclResult_t r = ncclCommGetAsyncError(comm, &st);
        if (r != ncclSuccess)
            return r;
        if (st != ncclInProgress)
            break;
        act_on_expiry(comm);
        check_deadline(comm, deadline, bound, desc);
        ga_wait_pause(ga_now() - start); /* NCCL's own threads are finishing it: leave them the CPU */
    }
    return st;
}

/* Fatal, after aborting the communicator, on an asynchronous error. */
static void check_async(ncclComm_t comm, const char *desc)
{
    ncclResult_t st = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comm, &st);
    if (r != ncclSuccess)
        st = r;
    if (st == ncclSuccess || st == ncclInProgress)
        return;
    char why[768];
    snprintf(why, sizeof why, "NCCL error during %s: %s (%s)", desc, ncclGetErrorString(st),
             ncclGetLastError(comm));
    abort_comm(comm, GA_EXIT_ENV, why);
}

static void check_deadline(ncclComm_t comm, double deadline, double timeout_s, const char *desc)
{
    if (ga_now() <= deadline)
        return;
    char why[768];
    /* The same words as the watcher's, whichever of the two sees the expiry first. */
    snprintf(why, sizeof why, "timeout: %s did not complete within %g s", desc, timeout_s);
    abort_comm(comm, GA_EXIT_TIMEOUT, why);
}

ncclComm_t ga_nccl_comm_init(MPI_Comm comm, double timeout_s, const char *label)
{
    return ga_nccl_comm_init_cta(comm, timeout_s, label, -1);
}

/* NCCL_COMM_BLOCKING=0 in the environment overrides config.blocking (NCCL 2.28): every call then answers
 * ncclInProgress and completes on a thread of NCCL's. The waits here poll it out; the timed loops measure it
 * (env_audit flags the variable). */
static void note_nonblocking(const char *label)
{
    static bool said;
    const char *env = getenv("NCCL_COMM_BLOCKING");
    if (!said && env && strcmp(env, "0") == 0)
        ga_log("SETUP",
               "NCCL_COMM_BLOCKING=0 in the environment: communicator '%s' is non-blocking (every NCCL "
               "call answers ncclInProgress and completes on NCCL's thread)",
               label);
    said = true;
}

/* Refuses an NCCL library older in major.minor than the headers this program was built with
 * (ga_nccl_runtime_older): a 2.27 library under 2.28 headers lacks ncclGather and takes config fields it does
 * not know. Agreed over comm at every communicator (an int, beside the id's MPI_Bcast), so that every member
 * takes the same path: the lowest world rank with such a library prints the one line and ends the job with
 * exit 3; the others wait for its MPI_Abort (bounded: they end quietly after 10 s). */
static void refuse_old_library(MPI_Comm comm)
{
    int v = 0, world = 0;
    bool old = ncclGetVersion(&v) == ncclSuccess && ga_nccl_runtime_older(v, NCCL_VERSION_CODE);
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    int mine = old ? world : INT_MAX, lowest = INT_MAX;
    GA_MPI_CHECK(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm));
    if (lowest == INT_MAX)
        return;
    if (old && lowest == world) {
        char lib[32], hdr[32];
        ga_nccl_versions(lib, sizeof lib, hdr, sizeof hdr);
        GA_FATAL(
            GA_EXIT_ENV,
            "the NCCL library loaded (%s, ncclGetVersion) is older than the NCCL headers this program was "
            "built with (%s): install NCCL %s or newer on this node, or rebuild against the library the "
            "nodes have",
            lib, hdr, hdr);
    }
    sleep(10);
    ga_fatal_quiet(GA_EXIT_ENV);
}

/* NCCL binds its proxy thread, which posts every network transfer, inside this process's CPU mask (the GPU's
 * local CPUs AND the mask the launcher gave: src/graph/topo.cc, ncclTopoGetCpuAffinity, "Use a subset of the
 * GPU affinity set"). With one CPU in the mask (Slurm's default binding of --ntasks-per-node=8 without
 * --cpus-per-task) the proxy thread and the main thread share it: said once per process, as a warning
 * (deploy/slurm requests --cpus-per-task; docs/deployment.md, "CPUs for each rank"). */
static void warn_narrow_cpu_mask(void)
{
    static bool said;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (said || sched_getaffinity(0, sizeof mask, &mask) != 0)
        return;
    said = true;
    if (CPU_COUNT(&mask) == 1)
        ga_log_rank(
            "COMM",
            "warning ENV_CPU_MASK_NARROW: this rank may run on one CPU only, which NCCL's proxy thread "
            "(it posts every network transfer) shares with the main thread: inter-node figures may "
            "be low for that reason alone. Give each rank the CPUs near its GPU (srun "
            "--cpus-per-task, mpirun --map-by ppr:8:node:PE=N --bind-to core)");
}

static size_t free_slot(void)
{
    size_t slot = 0;
    while (slot < sizeof comms / sizeof comms[0] && comms[slot].comm)
        slot++;
    if (slot == sizeof comms / sizeof comms[0])
        GA_FATAL(GA_EXIT_INTERNAL, "more than %zu NCCL communicators at once", slot);
    return slot;
}

ncclComm_t ga_nccl_comm_init_cta(MPI_Comm comm, double timeout_s, const char *label, int cta_policy)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    warn_narrow_cpu_mask();
    ga_nccl_debug_comm_begin(label); /* the transport NCCL chooses is read from its log (issue 25) */
    ncclUniqueId id;
    if (rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            GA_FATAL(GA_EXIT_ENV, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    }
    size_t slot = free_slot();
    note_nonblocking(label);
    ga_deadline_hand_expiry_to_main(true);
    ga_deadline_arm_for(bound_of(timeout_s), "NCCL communicator init ('%s', rank %d of %d)", label, rank,
                        size);
    refuse_old_library(comm); /* within the init's bound: a rank that never comes is named */
    GA_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1; /* see ga_nccl.h: the watcher bounds it */
    if (cta_policy >= 0)
        config.CTAPolicy = cta_policy;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    /* As nccl-tests 2.19 does: NCCL applies it on compute capability 10 and newer with a CUDA 13 driver. */
    config.nvlinkCentricSched = 1;
#endif
    ncclComm_t nc = NULL;
    ncclResult_t r = ncclCommInitRankConfig(&nc, size, id, rank, &config);
    comms[slot] = (comm_info){nc, "", rank, size};
    snprintf(comms[slot].label, sizeof comms[slot].label, "%s", label);
    if (r == ncclInProgress && nc) {
        char desc[512];
        snprintf(desc, sizeof desc, "NCCL communicator init ('%s', rank %d of %d)", label, rank, size);
        r = poll_in_progress(nc, timeout_s, desc);
    }
    ga_deadline_disarm();
    if (r != ncclSuccess) {
        if (nc)
            ncclCommAbort(nc);
        GA_FATAL(GA_EXIT_ENV, "ncclCommInitRankConfig ('%s', rank %d of %d): %s", label, rank, size,
                 ncclGetErrorString(r));
    }
    return nc;
}

void ga_nccl_bound(ncclComm_t comm, double timeout_s, const char *what)
{
    char desc[512];
    describe(comm, what, desc, sizeof desc);
    ga_deadline_arm_for(bound_of(timeout_s), "%s", desc);
}

void ga_nccl_unbound(void)
{
    ga_deadline_disarm();
}

void ga_nccl_wait(ncclComm_t comm, cudaStream_t stream, double timeout_s, const char *what)
{
    char desc[512];
    describe(comm, what, desc, sizeof desc);
    /* The watcher enforces the bound (it aborts the communicator, then the job); the loop checks it too, a
     * little later, in case a bug left the watcher unarmed. */
    double bound = bound_of(timeout_s), start = ga_now(), deadline = start + bound + 0.5;
    ga_deadline_arm_for(bound, "%s", desc);
    /* Poll, yielding between polls as nccl-tests does (ga_wait_pause: yield only at first, then short sleeps
     * bounded to under 1 % of the wait): NCCL's proxy thread shares this process's CPUs, and a spinning main
     * thread starves it. The deadline is checked whatever the communicator reports: a collective that never
     * completes reports no error. */
    for (;;) {
        cudaError_t e = cudaStreamQuery(stream);
        if (e == cudaSuccess)
            break;
        if (e != cudaErrorNotReady) {
            char why[768];
            snprintf(why, sizeof why, "CUDA error during %s: %s", desc, cudaGetErrorString(e));
            abort_comm(comm, GA_EXIT_ENV, why);
        }
        check_async(comm, desc);
        act_on_expiry(comm);
        check_deadline(comm, deadline, bound, desc);
        ga_wait_pause(ga_now() - start);
    }
    check_async(comm, desc);
    ga_deadline_disarm();
}

void ga_nccl_enqueued(ncclComm_t comm, ncclResult_t result, double timeout_s, const char *what)
{
    char desc[512];
    describe(comm, what, desc, sizeof desc);
    if (result == ncclInProgress)
        result = poll_in_progress(comm, timeout_s, desc);
    if (result != ncclSuccess) {
        char why[768];
        snprintf(why, sizeof why, "%s: %s (%s)", desc, ncclGetErrorString(result), ncclGetLastError(comm));
        abort_comm(comm, GA_EXIT_ENV, why);
    }
}

void ga_nccl_mem_alloc(ncclComm_t comm, void **p, size_t bytes, const char *what)
{
    ncclResult_t r = ncclMemAlloc(p, bytes);
    if (r == ncclSuccess)
        return;
    /* NCCL reports the driver's error in its last-error text ("Cuda failure 2 'out of memory'"); the free
     * memory says the same when it is shorter than the request. */
    const char *last = ncclGetLastError(comm);
    size_t free_b = 0, total_b = 0;
    bool oom = (last && strstr(last, "out of memory")) ||
               (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b < bytes);
    char desc[512], why[768], name[160];
    snprintf(name, sizeof name, "ncclMemAlloc of %s", what);
    describe(comm, name, desc, sizeof desc);
    snprintf(why, sizeof why, "%s: %zu bytes: %s%s%s%s%s", desc, bytes, oom ? "out of memory: " : "",
             ncclGetErrorString(r), last && *last ? " (" : "", last ? last : "", last && *last ? ")" : "");
    abort_comm(comm, oom ? GA_EXIT_INTERNAL : GA_EXIT_ENV, why);
}

void ga_nccl_comm_destroy(ncclComm_t comm, double timeout_s)
{
    if (!comm)
        return;
    ga_nccl_debug_comm_end(info_of(comm)->label);
    ga_nccl_bound(comm, timeout_s, "NCCL communicator finalize");
    ncclResult_t r = ncclCommFinalize(comm);
    if (r == ncclInProgress) {
        char desc[512];
        describe(comm, "NCCL communicator finalize", desc, sizeof desc);
        r = poll_in_progress(comm, timeout_s, desc);
    }
    ga_deadline_disarm();
    if (r != ncclSuccess) {
        char why[512];
        snprintf(why, sizeof why, "ncclCommFinalize: %s", ncclGetErrorString(r));
        abort_comm(comm, GA_EXIT_ENV, why);
    }
    ncclCommDestroy(comm);
    for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++)
        if (comms[i].comm == comm)
            memset(&comms[i], 0, sizeof comms[i]);
    if (live_comms() == 0)
        ga_deadline_hand_expiry_to_main(false);
}

void ga_nccl_versions(char *library, size_t liblen, char *header, size_t hdrlen)
{
    int v = 0, major, minor, patch;
    if (ncclGetVersion(&v) == ncclSuccess) {
        ga_nccl_version_split(v, &major, &minor, &patch);
        snprintf(library, liblen, "%d.%d.%d", major, minor, patch);
    } else {
        snprintf(library, liblen, "unknown");
    }
    snprintf(header, hdrlen, "%d.%d.%d", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
}
