/* The GPU path: NCCL on device memory, one stream, every wait through ga_nccl_wait (bounded by -T). Inputs
 * are generated and outputs checked on the host (ar_coll.c), copied through cudaMemcpy outside the timed
 * loops, so no kernel is needed. */
#if GA_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdlib.h>

#include "ar_backend.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_cuda.h"
#include "ga_nccl.h"

typedef struct {
    ncclComm_t comm;
    cudaStream_t stream;
    char *send, *recv;
    size_t max_bytes;
    double timeout_s;
} nccl_impl;

/* Every NCCL call's result is checked (an error aborts the communicator); the calls are bounded by -T through
 * ga_nccl_bound in nccl_run. */
#define NCCL_ENQUEUE(call) ga_nccl_enqueued(g->comm, (call), g->timeout_s, #call)

static ncclDataType_t nccl_type(ar_dtype t)
{
    static const ncclDataType_t map[AR_NTYPES] = {
        [AR_INT8] = ncclInt8,         [AR_UINT8] = ncclUint8,         [AR_INT32] = ncclInt32,
        [AR_UINT32] = ncclUint32,     [AR_INT64] = ncclInt64,         [AR_UINT64] = ncclUint64,
        [AR_HALF] = ncclFloat16,      [AR_FLOAT] = ncclFloat32,       [AR_DOUBLE] = ncclFloat64,
        [AR_BFLOAT16] = ncclBfloat16, [AR_FP8_E4M3] = ncclFloat8e4m3, [AR_FP8_E5M2] = ncclFloat8e5m2,
    };
    return map[t];
}

static ncclRedOp_t nccl_op(ar_op op)
{
    static const ncclRedOp_t map[AR_NOPS] = {ncclSum, ncclProd, ncclMin, ncclMax, ncclAvg};
    return map[op];
}

static size_t esize(const ar_call *c)
{
    return ar_dtype_get(c->type)->size;
}

static char *input_at(ar_backend *b, const ar_call *c)
{
    nccl_impl *g = b->impl;
    return ar_call_input(c, b->rank, g->send, g->recv);
}

static char *output_at(ar_backend *b, const ar_call *c)
{
    nccl_impl *g = b->impl;
    return ar_call_output(c, b->rank, g->recv);
}

static bool nccl_inplace_checkable(ar_coll_id coll)
{
    return coll != AR_ALLTOALL && coll != AR_SENDRECV;
}

static void nccl_put_input(ar_backend *b, const ar_call *c, const void *host)
{
    nccl_impl *g = b->impl;
    /* On the NCCL stream: cudaMemset is asynchronous and a pageable cudaMemcpy may return before its DMA
     * lands, both on the legacy stream, which a cudaStreamNonBlocking stream does not wait for. */
    GA_CUDA_CHECK(cudaMemsetAsync(g->recv, 0xff, g->max_bytes, g->stream));
    GA_CUDA_CHECK(cudaMemcpyAsync(input_at(b, c), host, c->counts.send_count * esize(c),
                                  cudaMemcpyHostToDevice, g->stream));
}

static void nccl_get_output(ar_backend *b, const ar_call *c, void *host)
{
    GA_CUDA_CHECK(cudaMemcpy(host, output_at(b, c), c->counts.recv_count * esize(c), cudaMemcpyDeviceToHost));
}

/* nccl-tests' hypercube allgather: the own block into place, then log2(n) grouped exchanges with rank ^ 2^k
 * of the 2^k blocks gathered so far. */
static void enqueue_hypercube(ar_backend *b, const ar_call *c, const void *in)
{
    nccl_impl *g = b->impl;
    size_t n = c->counts.param_count, block = n * esize(c);
    ncclDataType_t t = nccl_type(c->type);
    char *own = g->recv + (size_t)b->rank * block;
    if ((const char *)in != own)
        GA_CUDA_CHECK(cudaMemcpyAsync(own, in, block, cudaMemcpyDeviceToDevice, g->stream));
    for (int mask = 1; mask < b->nranks; mask <<= 1) {
        int first = b->rank & ~(mask - 1), peer = b->rank ^ mask, theirs = first ^ mask;
        NCCL_ENQUEUE(ncclGroupStart());
        NCCL_ENQUEUE(
            ncclSend(g->recv + (size_t)first * block, n * (size_t)mask, t, peer, g->comm, g->stream));
        NCCL_ENQUEUE(
            ncclRecv(g->recv + (size_t)theirs * block, n * (size_t)mask, t, peer, g->comm, g->stream));
        NCCL_ENQUEUE(ncclGroupEnd());
    }
}

static void enqueue(ar_backend *b, const ar_call *c)
{
    nccl_impl *g = b->impl;
    const void *in = input_at(b, c);
    void *out = output_at(b, c);
    size_t n = c->counts.param_count;
    ncclDataType_t t = nccl_type(c->type);
    ncclRedOp_t op = nccl_op(c->op);
    int next = (b->rank + 1) % b->nranks, prev = (b->rank - 1 + b->nranks) % b->nranks;
    switch (c->coll) {
    case AR_ALLREDUCE:
        NCCL_ENQUEUE(ncclAllReduce(in, out, n, t, op, g->comm, g->stream));
        break;
    case AR_ALLGATHER:
        NCCL_ENQUEUE(ncclAllGather(in, out, n, t, g->comm, g->stream));
        break;
    case AR_REDUCE_SCATTER:
        NCCL_ENQUEUE(ncclReduceScatter(in, out, n, t, op, g->comm, g->stream));
        break;
    case AR_BROADCAST:
        NCCL_ENQUEUE(ncclBroadcast(in, out, n, t, c->root, g->comm, g->stream));
        break;
    case AR_REDUCE:
        NCCL_ENQUEUE(ncclReduce(in, out, n, t, op, c->root, g->comm, g->stream));
        break;
    case AR_ALLTOALL:
        NCCL_ENQUEUE(ncclAlltoAll(in, out, n, t, g->comm, g->stream));
        break;
    case AR_SENDRECV:
        NCCL_ENQUEUE(ncclGroupStart());
        NCCL_ENQUEUE(ncclSend(in, n, t, next, g->comm, g->stream));
        NCCL_ENQUEUE(ncclRecv(out, n, t, prev, g->comm, g->stream));
        NCCL_ENQUEUE(ncclGroupEnd());
        break;
    case AR_GATHER:
        NCCL_ENQUEUE(ncclGather(in, out, n, t, c->root, g->comm, g->stream));
        break;
    case AR_SCATTER:
        NCCL_ENQUEUE(ncclScatter(in, out, n, t, c->root, g->comm, g->stream));
        break;
    case AR_HYPERCUBE:
        enqueue_hypercube(b, c, in);
        break;
    default:
        GA_FATAL(GA_EXIT_INTERNAL, "NCCL path: collective %d has no call", (int)c->coll);
    }
}

static void nccl_run(ar_backend *b, const ar_call *c, int iters, const char *what)
{
    nccl_impl *g = b->impl;
    /* A blocking communicator's call returns once enqueued, but may block (connecting to a peer that never
     * comes): the deadline watcher bounds the enqueues, then ga_nccl_wait the completion, each by -T. */
    ga_nccl_bound(g->comm, g->timeout_s, what);
    for (int i = 0; i < iters; i++)
        enqueue(b, c);
    ga_nccl_unbound();
    ga_nccl_wait(g->comm, g->stream, g->timeout_s, what);
}

static void nccl_destroy(ar_backend *b)
{
    nccl_impl *g = b->impl;
    ga_nccl_comm_destroy(g->comm, g->timeout_s);
    cudaFree(g->send);
    cudaFree(g->recv);
    cudaStreamDestroy(g->stream);
    free(g);
    free(b);
}

ar_backend *ar_nccl_backend_new(MPI_Comm comm, size_t max_bytes, double timeout_s, const char *what)
{
    ar_backend *b = calloc(1, sizeof *b);
    nccl_impl *g = calloc(1, sizeof *g);
    if (!b || !g)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    g->max_bytes = max_bytes ? max_bytes : 1;
    g->timeout_s = timeout_s > 0 ? timeout_s : 1e9;
    GA_CUDA_CHECK(cudaMalloc((void **)&g->send, g->max_bytes));
    GA_CUDA_CHECK(cudaMalloc((void **)&g->recv, g->max_bytes));
    GA_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    b->name = "nccl";
    b->comm = comm;
    MPI_Comm_rank(comm, &b->rank);
    MPI_Comm_size(comm, &b->nranks);
    g->comm = ga_nccl_comm_init(comm, g->timeout_s, what); /* bounded by -T, aborted on any expiry */
    b->impl = g;
    b->inplace_checkable = nccl_inplace_checkable;
    b->put_input = nccl_put_input;
    b->get_output = nccl_get_output;
    b->run = nccl_run;
    b->destroy = nccl_destroy;
    return b;
}
#endif
