/* The GPU path: NCCL on device memory, one stream, every wait through ga_nccl_wait (bounded by -T). Inputs
 * are generated and outputs checked on the device by the kernels of ar_check.cu (the maths of ar_elem.h, the
 * host check's), outside the timed loops; one counter of wrong elements comes back. nccl-tests' -G (CUDA
 * graphs), -R (buffer registration), -x (CTA policy), -y (default stream), -u (unaligned buffers) and -M
 * (memory use) are applied here, as nccl-tests 2.19 does.
 */
#if GA_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ar_backend.h"
#include "ar_check.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_cuda.h"
#include "ga_nccl.h"

typedef struct {
    ncclComm_t comm;
    cudaStream_t stream; /* NULL with -y 1: the legacy default stream */
    char *send, *recv;   /* where the current call's buffers start (past -u's offset) */
    char *send_base,
        *recv_base;        /* the allocations (ncclMemAlloc, as nccl-tests: graph registration needs it) */
    size_t max_bytes, pad; /* pad: the -u padding after max_bytes */
    double timeout_s;
    ar_backend_setup setup;
    void *send_reg, *recv_reg;       /* -R 1: ncclCommRegister handles */
    ncclWindow_t send_win, recv_win; /* -R 2: symmetric windows */
    cudaGraph_t graph;               /* -G: the captured graph between capture and launch */
    cudaGraphExec_t graph_exec;
    int64_t free_before_init, free_after_setup, mem_used[2]; /* -M */
    const char *what;                                        /* names the communicator in messages */
    ar_call last_call;                                       /* the call the shift counts operations of */
    size_t ops_since_call; /* operations run of it so far: their buffers shift, as nccl-tests' */
    unsigned long long *wrong_dev, wrong_host; /* the device check's counter and its copy */
    unsigned char poke[8];                     /* the test hook's element on its way to the device */
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

/* -u: the offset depends on the type's size, so it is set per call. */
static void aim(ar_backend *b, const ar_call *c)
{
    nccl_impl *g = b->impl;
    g->send = ar_unaligned(g->send_base, &g->setup, c->type);
    g->recv = ar_unaligned(g->recv_base, &g->setup, c->type);
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

static void restart_shift(nccl_impl *g, const ar_call *c);

static void nccl_put_input(ar_backend *b, const ar_call *c, const void *host)
{
    nccl_impl *g = b->impl;
    aim(b, c);
    restart_shift(g, c); /* the checked operation reads this input, unshifted */
    /* On the NCCL stream: cudaMemset is asynchronous and a pageable cudaMemcpy may return before its DMA
     * lands, both on the legacy stream, which a cudaStreamNonBlocking stream does not wait for. */
    GA_CUDA_CHECK(cudaMemsetAsync(g->recv_base, 0xff, g->max_bytes + g->pad, g->stream));
    GA_CUDA_CHECK(cudaMemcpyAsync(input_at(b, c), host, c->counts.send_count * esize(c),
                                  cudaMemcpyHostToDevice, g->stream));
}

static void nccl_get_output(ar_backend *b, const ar_call *c, void *host)
{
    aim(b, c); /* the run before left the stream idle (ga_nccl_wait) */
    GA_CUDA_CHECK(cudaMemcpy(host, output_at(b, c), c->counts.recv_count * esize(c), cudaMemcpyDeviceToHost));
}

/* The device check (ar_backend.h): the output poisoned as put_input does, the input generated in place. */
static void nccl_fill_input(ar_backend *b, const ar_call *c, const ar_pattern *p)
{
    nccl_impl *g = b->impl;
    aim(b, c);
    restart_shift(g, c);
    GA_CUDA_CHECK(cudaMemsetAsync(g->recv_base, 0xff, g->max_bytes + g->pad, g->stream));
    ar_elem_job j = ar_elem_job_of(c->coll, p, b->rank);
    GA_CUDA_CHECK((cudaError_t)ar_dev_fill(input_at(b, c), &j, g->stream));
}

static int64_t nccl_count_wrong(ar_backend *b, const ar_call *c, const ar_pattern *p, const char *what)
{
    nccl_impl *g = b->impl;
    aim(b, c);
    ar_elem_job j = ar_elem_job_of(c->coll, p, b->rank);
    GA_CUDA_CHECK(cudaMemsetAsync(g->wrong_dev, 0, sizeof *g->wrong_dev, g->stream));
    GA_CUDA_CHECK((cudaError_t)ar_dev_count_wrong(output_at(b, c), &j, g->wrong_dev, g->stream));
    GA_CUDA_CHECK(cudaMemcpyAsync(&g->wrong_host, g->wrong_dev, sizeof g->wrong_host, cudaMemcpyDeviceToHost,
                                  g->stream));
    ga_nccl_wait(g->comm, g->stream, g->timeout_s, what);
    return (int64_t)g->wrong_host;
}

/* GPUACCEPT_TEST_WRONG_RANK on the device: the first output element read, changed, written back in order. */
static void nccl_corrupt_first(ar_backend *b, const ar_call *c)
{
    nccl_impl *g = b->impl;
    size_t n = esize(c);
    aim(b, c);
    GA_CUDA_CHECK(cudaMemcpyAsync(g->poke, output_at(b, c), n, cudaMemcpyDeviceToHost, g->stream));
    GA_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    ar_store(c->type, g->poke, 0, ar_load(c->type, g->poke, 0) + 5);
    GA_CUDA_CHECK(cudaMemcpyAsync(output_at(b, c), g->poke, n, cudaMemcpyHostToDevice, g->stream));
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

/* nccl-tests shifts both buffers by the operation's size at every iteration, through the whole allocation
 * (max bytes / size steps), so that sizes below the caches do not read them warm. The count restarts with a
 * new call (size, type, placement); the checks run unshifted (put_input aims at the base). */
static bool same_call(const ar_call *a, const ar_call *b)
{
    return a->coll == b->coll && a->type == b->type && a->op == b->op && a->root == b->root &&
           a->in_place == b->in_place && memcmp(&a->counts, &b->counts, sizeof a->counts) == 0;
}

static void restart_shift(nccl_impl *g, const ar_call *c)
{
    g->last_call = *c;
    g->ops_since_call = 0;
}

static void aim_shifted(ar_backend *b, const ar_call *c)
{
    nccl_impl *g = b->impl;
    if (!same_call(&g->last_call, c))
        restart_shift(g, c);
    size_t bytes = ar_coll_bytes(&c->counts, c->type), steps = bytes ? g->max_bytes / bytes : 1;
    size_t shift = bytes * (g->ops_since_call++ % (steps ? steps : 1));
    aim(b, c);
    g->send += shift;
    g->recv += shift;
}

/* iters operations, each iteration's agg of them in one group (nccl-tests' -m). */
static void enqueue_iters(ar_backend *b, const ar_call *c, int iters)
{
    nccl_impl *g = b->impl;
    int agg = c->agg > 1 ? c->agg : 1;
    for (int i = 0; i < iters; i += agg) {
        int n = iters - i < agg ? iters - i : agg;
        if (n > 1)
            NCCL_ENQUEUE(ncclGroupStart());
        for (int k = 0; k < n; k++) {
            aim_shifted(b, c);
            enqueue(b, c);
        }
        if (n > 1)
            NCCL_ENQUEUE(ncclGroupEnd());
    }
}

static void nccl_run(ar_backend *b, const ar_call *c, int iters, const char *what)
{
    nccl_impl *g = b->impl;
    /* A blocking communicator's call returns once enqueued, but may block (connecting to a peer that never
     * comes): the deadline watcher bounds the enqueues, then ga_nccl_wait the completion, each by -T. */
    ga_nccl_bound(g->comm, g->timeout_s, what);
    enqueue_iters(b, c, iters);
    ga_nccl_unbound();
    ga_nccl_wait(g->comm, g->stream, g->timeout_s, what);
}

/* -G: nccl-tests captures the timed loop (and each check) in thread-local mode, so that NCCL's own
 * allocations during a first connection are not captured. Capture only records: nothing runs, no wait. */
static void nccl_graph_capture(ar_backend *b, const ar_call *c, int iters, const char *what)
{
    nccl_impl *g = b->impl;
    aim(b, c);
    GA_CUDA_CHECK(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
    ga_nccl_bound(g->comm, g->timeout_s, what);
    enqueue_iters(b, c, iters);
    ga_nccl_unbound();
    GA_CUDA_CHECK(cudaStreamEndCapture(g->stream, &g->graph));
    GA_CUDA_CHECK(cudaGraphInstantiate(&g->graph_exec, g->graph, 0));
}

static void nccl_graph_launch(ar_backend *b, int launches, const char *what)
{
    nccl_impl *g = b->impl;
    for (int l = 0; l < launches; l++)
        GA_CUDA_CHECK(cudaGraphLaunch(g->graph_exec, g->stream));
    ga_nccl_wait(g->comm, g->stream, g->timeout_s, what);
    GA_CUDA_CHECK(cudaGraphExecDestroy(g->graph_exec));
    GA_CUDA_CHECK(cudaGraphDestroy(g->graph));
    g->graph_exec = NULL;
    g->graph = NULL;
}

static int64_t free_memory(void)
{
    size_t free_b = 0, total_b = 0;
    GA_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return (int64_t)free_b;
}

/* -M: nccl-tests' "Collective" figure is the free memory lost while the tests ran; the other two were taken
 * when the backend was made. */
static void nccl_memory_use(ar_backend *b, int64_t used[3])
{
    nccl_impl *g = b->impl;
    used[0] = g->mem_used[0];
    used[1] = g->mem_used[1];
    used[2] = g->free_after_setup - free_memory();
}

/* -R: registration is collective for windows (every rank registers, in the same order) and bounded by -T like
 * any NCCL call that can wait; a failure aborts the communicator and exits 3 (ga_nccl_enqueued). */
static void register_buffers(nccl_impl *g)
{
    size_t bytes = g->max_bytes + g->pad;
    ga_nccl_bound(g->comm, g->timeout_s, "registering the buffers");
    if (g->setup.reg_mode == 2) {
        ga_nccl_enqueued(
            g->comm,
            ncclCommWindowRegister(g->comm, g->send_base, bytes, &g->send_win, NCCL_WIN_COLL_SYMMETRIC),
            g->timeout_s, "ncclCommWindowRegister of the send buffer");
        ga_nccl_enqueued(
            g->comm,
            ncclCommWindowRegister(g->comm, g->recv_base, bytes, &g->recv_win, NCCL_WIN_COLL_SYMMETRIC),
            g->timeout_s, "ncclCommWindowRegister of the receive buffer");
    } else if (g->setup.reg_mode == 1) {
        ga_nccl_enqueued(g->comm, ncclCommRegister(g->comm, g->send_base, bytes, &g->send_reg), g->timeout_s,
                         "ncclCommRegister of the send buffer");
        ga_nccl_enqueued(g->comm, ncclCommRegister(g->comm, g->recv_base, bytes, &g->recv_reg), g->timeout_s,
                         "ncclCommRegister of the receive buffer");
    }
    ga_nccl_unbound();
}

static void deregister_buffers(nccl_impl *g)
{
    ga_nccl_bound(g->comm, g->timeout_s, "deregistering the buffers");
    if (g->setup.reg_mode == 2) {
        ga_nccl_enqueued(g->comm, ncclCommWindowDeregister(g->comm, g->send_win), g->timeout_s,
                         "ncclCommWindowDeregister of the send buffer");
        ga_nccl_enqueued(g->comm, ncclCommWindowDeregister(g->comm, g->recv_win), g->timeout_s,
                         "ncclCommWindowDeregister of the receive buffer");
    } else if (g->setup.reg_mode == 1) {
        ga_nccl_enqueued(g->comm, ncclCommDeregister(g->comm, g->send_reg), g->timeout_s,
                         "ncclCommDeregister of the send buffer");
        ga_nccl_enqueued(g->comm, ncclCommDeregister(g->comm, g->recv_reg), g->timeout_s,
                         "ncclCommDeregister of the receive buffer");
    }
    ga_nccl_unbound();
}

static void free_buffer(void *p)
{
    if (p)
        ncclMemFree(p);
}

static void nccl_destroy(ar_backend *b)
{
    nccl_impl *g = b->impl;
    deregister_buffers(g);
    ga_nccl_comm_destroy(g->comm, g->timeout_s);
    free_buffer(g->send_base);
    free_buffer(g->recv_base);
    cudaFree(g->wrong_dev);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g);
    free(b);
}

ar_backend *ar_nccl_backend_new(MPI_Comm comm, size_t max_bytes, double timeout_s, const char *what,
                                const ar_backend_setup *setup)
{
    ar_backend *b = calloc(1, sizeof *b);
    nccl_impl *g = calloc(1, sizeof *g);
    if (!b || !g)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    if (setup)
        g->setup = *setup;
    else
        g->setup.cta_policy = -1;
    g->max_bytes = max_bytes ? max_bytes : 1;
    g->pad = ar_unalign_pad(&g->setup);
    g->timeout_s = timeout_s > 0 ? timeout_s : 1e9;
    g->what = what;
    if (!g->setup.stream_null)
        GA_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    b->name = "nccl";
    b->comm = comm;
    MPI_Comm_rank(comm, &b->rank);
    MPI_Comm_size(comm, &b->nranks);
    /* the device check's counter, before -M's first reading: nccl-tests' memory figures do not hold it */
    GA_CUDA_CHECK(cudaMalloc((void **)&g->wrong_dev, sizeof *g->wrong_dev));
    if (g->setup.memory_report)
        g->free_before_init = free_memory();
    /* bounded by -T, aborted on any expiry */
    g->comm = ga_nccl_comm_init_cta(comm, g->timeout_s, what, g->setup.cta_policy);
    int64_t after_init = g->setup.memory_report ? free_memory() : 0;
    /* NCCL's allocator, always, as nccl-tests 2.19: window registration and the registration NCCL does
     * itself when -G captures a graph (NVLS) need memory it can map; out of memory is exit 5 */
    ga_nccl_mem_alloc(g->comm, (void **)&g->send_base, g->max_bytes + g->pad, "the send buffer");
    ga_nccl_mem_alloc(g->comm, (void **)&g->recv_base, g->max_bytes + g->pad, "the receive buffer");
    g->send = g->send_base;
    g->recv = g->recv_base;
    register_buffers(g);
    if (g->setup.memory_report) {
        g->mem_used[0] = g->free_before_init - after_init;
        g->free_after_setup = free_memory();
        g->mem_used[1] = after_init - g->free_after_setup;
    }
    b->impl = g;
    b->inplace_checkable = nccl_inplace_checkable;
    b->put_input = nccl_put_input;
    b->get_output = nccl_get_output;
    b->fill_input = nccl_fill_input;
    b->count_wrong = nccl_count_wrong;
    b->corrupt_first = nccl_corrupt_first;
    b->run = nccl_run;
    if (g->setup.graph_launches > 0) {
        b->graph_capture = nccl_graph_capture;
        b->graph_launch = nccl_graph_launch;
        b->graph_launches = g->setup.graph_launches;
    }
    if (g->setup.memory_report)
        b->memory_use = nccl_memory_use;
    b->destroy = nccl_destroy;
    return b;
}
#endif
