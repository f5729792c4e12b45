#include "ga_nccl.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
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

/* Called by the deadline watcher on expiry (from its own thread), before it takes the job down. */
static void abort_on_expiry(void *user)
{
    ncclCommAbort((ncclComm_t)user);
}

static _Noreturn void abort_comm(ncclComm_t comm, int exit_code, const char *why)
{
    ga_deadline_set_abort_hook(NULL, NULL);
    ncclCommAbort(comm);
    if (exit_code == GA_EXIT_TIMEOUT)
        ga_deadline_expired("%s; communicator aborted", why); /* names the rank(s) that did not arrive */
    GA_FATAL(exit_code, "%s; communicator aborted", why);
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

ncclComm_t ga_nccl_comm_init_cta(MPI_Comm comm, double timeout_s, const char *label, int cta_policy)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ga_nccl_debug_comm_begin(label); /* the transport NCCL chooses is read from its log (issue 25) */
    ncclUniqueId id;
    if (rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            GA_FATAL(GA_EXIT_ENV, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    }
    ga_deadline_arm_for(bound_of(timeout_s), "NCCL communicator init ('%s', rank %d of %d)", label, rank,
                        size);
    GA_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1; /* see ga_nccl.h: the watcher bounds it */
    if (cta_policy >= 0)
        config.CTAPolicy = cta_policy;
    ncclComm_t nc = NULL;
    ncclResult_t r = ncclCommInitRankConfig(&nc, size, id, rank, &config);
    ga_deadline_disarm();
    if (r != ncclSuccess) {
        if (nc)
            ncclCommAbort(nc);
        GA_FATAL(GA_EXIT_ENV, "ncclCommInitRankConfig ('%s', rank %d of %d): %s", label, rank, size,
                 ncclGetErrorString(r));
    }
    size_t slot = 0;
    while (slot < sizeof comms / sizeof comms[0] && comms[slot].comm)
        slot++;
    if (slot == sizeof comms / sizeof comms[0])
        GA_FATAL(GA_EXIT_INTERNAL, "more than %zu NCCL communicators at once", slot);
    comms[slot].comm = nc;
    snprintf(comms[slot].label, sizeof comms[slot].label, "%s", label);
    comms[slot].rank = rank;
    comms[slot].size = size;
    ga_deadline_set_abort_hook(abort_on_expiry, nc);
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
    double bound = bound_of(timeout_s), deadline = ga_now() + bound + 0.5;
    ga_deadline_arm_for(bound, "%s", desc);
    /* Spin, as nccl-tests does: callers time this wait, and a sleep between polls would be measured. The
     * deadline is checked whatever the communicator reports: a collective that never completes reports no
     * error. */
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
        check_deadline(comm, deadline, bound, desc);
    }
    check_async(comm, desc);
    ga_deadline_disarm();
}

void ga_nccl_enqueued(ncclComm_t comm, ncclResult_t result, double timeout_s, const char *what)
{
    char desc[512];
    describe(comm, what, desc, sizeof desc);
    if (result == ncclInProgress) {
        double bound = bound_of(timeout_s), deadline = ga_now() + bound;
        ncclResult_t st = ncclInProgress;
        while (st == ncclInProgress) {
            if (ncclCommGetAsyncError(comm, &st) != ncclSuccess)
                break;
            check_deadline(comm, deadline, bound, desc);
        }
        result = st;
    }
    if (result != ncclSuccess) {
        char why[768];
        snprintf(why, sizeof why, "%s: %s (%s)", desc, ncclGetErrorString(result), ncclGetLastError(comm));
        abort_comm(comm, GA_EXIT_ENV, why);
    }
}

void ga_nccl_comm_destroy(ncclComm_t comm, double timeout_s)
{
    if (!comm)
        return;
    ga_nccl_debug_comm_end(info_of(comm)->label);
    ga_nccl_bound(comm, timeout_s, "NCCL communicator finalize");
    ncclResult_t r = ncclCommFinalize(comm);
    ga_deadline_disarm();
    ga_deadline_set_abort_hook(NULL, NULL);
    if (r != ncclSuccess) {
        char why[512];
        snprintf(why, sizeof why, "ncclCommFinalize: %s", ncclGetErrorString(r));
        abort_comm(comm, GA_EXIT_ENV, why);
    }
    ncclCommDestroy(comm);
    for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++)
        if (comms[i].comm == comm)
            memset(&comms[i], 0, sizeof comms[i]);
}

void ga_nccl_versions(char *library, size_t liblen, char *header, size_t hdrlen)
{
    int v = 0;
    if (ncclGetVersion(&v) == ncclSuccess)
        snprintf(library, liblen, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    else
        snprintf(library, liblen, "unknown");
    snprintf(header, hdrlen, "%d.%d.%d", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
}
