/* The two ways of running a collective: NCCL on GPU memory and MPI on host memory. The harness (ar_bench.c)
 * sees only this table; each backend adds the call of every collective. */
#ifndef AR_BACKEND_H
#define AR_BACKEND_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ar_coll.h"
#include "ar_setup.h"

typedef struct {
    ar_coll_id coll;
    ar_dtype type;
    ar_op op;
    int root;
    ar_counts counts;
    bool in_place;
    int agg; /* nccl-tests' -m: operations grouped per iteration (0 or 1: none) */
} ar_call;

/* Where a call reads its input and leaves its output, NCCL's convention: out of place the send and receive
 * buffers; in place both inside the receive buffer, at the rank's offset (nccl-tests' in-place offsets). */
static inline char *ar_call_input(const ar_call *c, int rank, char *send, char *recv)
{
    if (!c->in_place)
        return send;
    return recv + c->counts.send_inplace_off * (size_t)rank * ar_dtype_get(c->type)->size;
}

static inline char *ar_call_output(const ar_call *c, int rank, char *recv)
{
    if (!c->in_place)
        return recv;
    return recv + c->counts.recv_inplace_off * (size_t)rank * ar_dtype_get(c->type)->size;
}

typedef struct ar_backend ar_backend;
struct ar_backend {
    const char *name; /* "nccl" or "mpi", as the report names it */
    MPI_Comm comm;    /* the ranks of the collective (the world, or a pair) */
    int rank, nranks;
    void *impl;
    /* Whether the backend can check this collective in place (NCCL cannot run alltoall or sendrecv in
     * place; nccl-tests times them without a check). */
    bool (*inplace_checkable)(ar_coll_id coll);
    /* Makes ready what a call of bytes needs before it is timed (the host path maps its pages); returns
     * whether it had anything to do. NULL: nothing to do. */
    bool (*prepare)(ar_backend *b, size_t bytes);
    /* Poisons the output, then writes send_count elements of input where the call reads them. */
    void (*put_input)(ar_backend *b, const ar_call *c, const void *host);
    /* Reads recv_count elements of output from where the call left them. */
    void (*get_output)(ar_backend *b, const ar_call *c, void *host);
    /* The device check (the GPU path; NULL on the host path, which fills and compares on the host through
     * put_input and get_output): fill_input poisons the output and generates the input of pattern p where
     * the call reads it; count_wrong compares the output with the exact expected values and returns the
     * wrong elements (its wait bounded by -T); corrupt_first adds 5 to the output's first element (the test
     * hook GPUACCEPT_TEST_WRONG_RANK). The maths is ar_elem.h's, as the host check's. */
    void (*fill_input)(ar_backend *b, const ar_call *c, const ar_pattern *p);
    int64_t (*count_wrong)(ar_backend *b, const ar_call *c, const ar_pattern *p, const char *what);
    void (*corrupt_first)(ar_backend *b, const ar_call *c);
    /* Runs iters operations and returns when they are complete; every wait is bounded by -T. what names the
     * operation for the timeout message. */
    void (*run)(ar_backend *b, const ar_call *c, int iters, const char *what);
    /* CUDA graphs (nccl-tests' -G), NULL where not used: graph_capture records iters operations into a graph
     * and instantiates it, without running them; graph_launch launches it `launches` times, waits for the
     * completion (bounded by -T) and destroys it. The harness times the launches only, as nccl-tests does. */
    void (*graph_capture)(ar_backend *b, const ar_call *c, int iters, const char *what);
    void (*graph_launch)(ar_backend *b, int launches, const char *what);
    int graph_launches; /* -G: launches of the timed graph (0: no graphs) */
    /* -M: this rank's GPU memory use in bytes: at communicator init, of the buffers and their registration,
     * and during the collectives (nccl-tests' three figures). NULL where there is no such figure. */
    void (*memory_use)(ar_backend *b, int64_t used[3]);
    void (*destroy)(ar_backend *b);
};

/* Both allocate buffers of max_bytes (plus the -u padding) for send and receive. Collective over comm. setup
 * may be NULL (all defaults); the host path applies -u only. */
ar_backend *ar_host_backend_new(MPI_Comm comm, size_t max_bytes, const ar_backend_setup *setup);
/* Why the host path cannot run a type (fp8), or NULL. */
const char *ar_host_unsupported(ar_dtype type);
#if GA_HAVE_CUDA
ar_backend *ar_nccl_backend_new(MPI_Comm comm, size_t max_bytes, double timeout_s, const char *what,
                                const ar_backend_setup *setup);
#endif

#endif
