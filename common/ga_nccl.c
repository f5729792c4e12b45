#include "ga_nccl.h"

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_time.h"

static void pause_briefly(void)
{
    struct timespec ts = {0, 200 * 1000}; /* 0.2 ms: short against any collective worth timing */
    nanosleep(&ts, NULL);
}

static _Noreturn void abort_comm(ncclComm_t comm, int exit_code, const char *why)
{
    ncclCommAbort(comm);
    GA_FATAL(exit_code, "%s", why);
}

/* One look at the communicator: true when idle, false while an operation is in progress. Fatal (after
 * aborting the communicator) on an asynchronous error or once the deadline has passed. */
static bool comm_poll(ncclComm_t comm, double deadline, double timeout_s, const char *what)
{
    char why[512];
    ncclResult_t st = ncclInProgress;
    ncclResult_t r = ncclCommGetAsyncError(comm, &st);
    if (r != ncclSuccess)
        st = r;
    if (st == ncclSuccess)
        return true;
    if (st != ncclInProgress) {
        snprintf(why, sizeof why, "NCCL error during %s: %s (%s)", what, ncclGetErrorString(st),
                 ncclGetLastError(comm));
        abort_comm(comm, GA_EXIT_ENV, why);
    }
    if (ga_now() > deadline) {
        snprintf(why, sizeof why, "timeout: %s did not complete within %g s", what, timeout_s);
        abort_comm(comm, GA_EXIT_TIMEOUT, why);
    }
    return false;
}

static void wait_comm_ready(ncclComm_t comm, double deadline, double timeout_s, const char *what)
{
    while (!comm_poll(comm, deadline, timeout_s, what))
        pause_briefly();
}

ncclComm_t ga_nccl_comm_init(MPI_Comm comm, double timeout_s, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ncclUniqueId id;
    if (rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            GA_FATAL(GA_EXIT_ENV, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    }
    GA_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0; /* so that a peer that never arrives cannot hang us: we poll with a deadline */
    ncclComm_t nc = NULL;
    double deadline = ga_now() + timeout_s;
    ncclResult_t r = ncclCommInitRankConfig(&nc, size, id, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
        if (nc)
            ncclCommAbort(nc);
        GA_FATAL(GA_EXIT_ENV, "ncclCommInitRankConfig (%s, rank %d of %d): %s", what, rank, size,
                 ncclGetErrorString(r));
    }
    char phase[256];
    snprintf(phase, sizeof phase, "NCCL communicator init (%s, rank %d of %d)", what, rank, size);
    wait_comm_ready(nc, deadline, timeout_s, phase);
    return nc;
}

void ga_nccl_wait(ncclComm_t comm, cudaStream_t stream, double timeout_s, const char *what)
{
    double start = ga_now(), deadline = start + timeout_s;
    for (;;) {
        cudaError_t e = cudaStreamQuery(stream);
        if (e == cudaSuccess) {
            wait_comm_ready(comm, deadline, timeout_s, what);
            return;
        }
        if (e != cudaErrorNotReady) {
            char why[512];
            snprintf(why, sizeof why, "CUDA error during %s: %s", what, cudaGetErrorString(e));
            abort_comm(comm, GA_EXIT_ENV, why);
        }
        /* The stream is busy: the communicator may be in progress, failed, or past the deadline. */
        (void)comm_poll(comm, deadline, timeout_s, what);
        /* Callers time this wait (allreduce_bw divides it by the iterations): a 0.2 ms sleep between polls
         * would inflate a small message's time, so spin (as nccl-tests does) for the first 10 ms. */
        if (ga_now() - start > 0.010)
            pause_briefly();
    }
}

void ga_nccl_enqueued(ncclComm_t comm, ncclResult_t result, double timeout_s, const char *what)
{
    if (result == ncclSuccess)
        return;
    if (result != ncclInProgress) {
        char why[512];
        snprintf(why, sizeof why, "%s: %s (%s)", what, ncclGetErrorString(result), ncclGetLastError(comm));
        abort_comm(comm, GA_EXIT_ENV, why);
    }
    wait_comm_ready(comm, ga_now() + timeout_s, timeout_s, what);
}

void ga_nccl_comm_destroy(ncclComm_t comm)
{
    if (!comm)
        return;
    /* Finalize is non-blocking on this communicator too: let it flush before destroying. */
    ncclCommFinalize(comm);
    wait_comm_ready(comm, ga_now() + 60.0, 60.0, "NCCL communicator finalize");
    ncclCommDestroy(comm);
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
