/* The host path: MPI collectives on host memory. half and bfloat16, which MPI lacks, are 2-byte datatypes
 * with user-defined operations that round every partial result to the type, as a GPU reduction does; avg is
 * MPI_SUM followed by the division by the number of ranks (truncating for integers, as NCCL). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ar_backend.h"
#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"

typedef struct {
    char *send, *recv;           /* where the current call's buffers start (past -u's offset) */
    char *send_base, *recv_base; /* the allocations */
    size_t max_bytes, pad;       /* pad: the -u padding after max_bytes */
    size_t touched;              /* bytes of both buffers written once (their pages are mapped) */
    ar_backend_setup setup;
} host_impl;

/* ---- half and bfloat16 ---- */

static MPI_Datatype mpi_two_bytes = MPI_DATATYPE_NULL;
static MPI_Op minifloat_ops[2][4]; /* [half, bfloat16][sum, prod, min, max] */
static bool minifloat_ready;

#define MINIFLOAT_OP(name, type, expr)                                                                       \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)                                      \
    {                                                                                                        \
        (void)dt;                                                                                            \
        for (int i = 0; i < *len; i++) {                                                                     \
            double a = ar_load(type, in, (size_t)i), b = ar_load(type, inout, (size_t)i);                    \
            ar_store(type, inout, (size_t)i, (expr));                                                        \
        }                                                                                                    \
    }
MINIFLOAT_OP(half_sum, AR_HALF, a + b)
MINIFLOAT_OP(half_prod, AR_HALF, a *b)
MINIFLOAT_OP(half_min, AR_HALF, a < b ? a : b)
MINIFLOAT_OP(half_max, AR_HALF, a > b ? a : b)
MINIFLOAT_OP(bf16_sum, AR_BFLOAT16, a + b)
MINIFLOAT_OP(bf16_prod, AR_BFLOAT16, a *b)
MINIFLOAT_OP(bf16_min, AR_BFLOAT16, a < b ? a : b)
MINIFLOAT_OP(bf16_max, AR_BFLOAT16, a > b ? a : b)

static void minifloat_setup(void)
{
    if (minifloat_ready)
        return;
    GA_MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &mpi_two_bytes));
    GA_MPI_CHECK(MPI_Type_commit(&mpi_two_bytes));
    MPI_User_function *fns[2][4] = {{half_sum, half_prod, half_min, half_max},
                                    {bf16_sum, bf16_prod, bf16_min, bf16_max}};
    for (int t = 0; t < 2; t++)
        for (int o = 0; o < 4; o++)
            GA_MPI_CHECK(MPI_Op_create(fns[t][o], 1, &minifloat_ops[t][o]));
    minifloat_ready = true;
}

const char *ar_host_unsupported(ar_dtype type)
{
    if (ar_dtype_get(type)->fp8)
        return "fp8 types need the NCCL backend on GPUs of compute capability 9.0 or newer";
    return NULL;
}

static MPI_Datatype mpi_type(ar_dtype t)
{
    switch (t) {
    case AR_INT8:
        return MPI_INT8_T;
    case AR_UINT8:
        return MPI_UINT8_T;
    case AR_INT32:
        return MPI_INT32_T;
    case AR_UINT32:
        return MPI_UINT32_T;
    case AR_INT64:
        return MPI_INT64_T;
    case AR_UINT64:
        return MPI_UINT64_T;
    case AR_FLOAT:
        return MPI_FLOAT;
    case AR_DOUBLE:
        return MPI_DOUBLE;
    case AR_HALF:
    case AR_BFLOAT16:
        minifloat_setup();
        return mpi_two_bytes;
    default:
        GA_FATAL(GA_EXIT_INTERNAL, "host path: no MPI datatype for %s", ar_dtype_get(t)->name);
    }
}

static MPI_Op mpi_op(ar_dtype t, ar_op op)
{
    int o = op == AR_AVG ? 0 : (int)op; /* avg: a sum, divided afterwards */
    if (t == AR_HALF || t == AR_BFLOAT16) {
        minifloat_setup();
        return minifloat_ops[t == AR_BFLOAT16][o];
    }
    static const MPI_Op native[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return native[o];
}

/* avg: divides n elements by the number of ranks, in the type (integers truncate). */
#define DIVIDE_LOOP(ctype)                                                                                   \
    do {                                                                                                     \
        ctype *x = buf;                                                                                      \
        for (size_t i = 0; i < n; i++)                                                                       \
            x[i] = (ctype)(x[i] / (ctype)nranks);                                                            \
    } while (0)

static void divide(ar_dtype t, void *buf, size_t n, int nranks)
{
    switch (t) {
    case AR_INT8:
        DIVIDE_LOOP(int8_t);
        break;
    case AR_UINT8:
        DIVIDE_LOOP(uint8_t);
        break;
    case AR_INT32:
        DIVIDE_LOOP(int32_t);
        break;
    case AR_UINT32:
        DIVIDE_LOOP(uint32_t);
        break;
    case AR_INT64:
        DIVIDE_LOOP(int64_t);
        break;
    case AR_UINT64:
        DIVIDE_LOOP(uint64_t);
        break;
    case AR_FLOAT:
        DIVIDE_LOOP(float);
        break;
    case AR_DOUBLE:
        DIVIDE_LOOP(double);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            ar_store(t, buf, i, ar_load(t, buf, i) / nranks);
    }
}

/* ---- buffers: where the input goes and where the output lies, per placement ---- */

static size_t esize(const ar_call *c)
{
    return ar_dtype_get(c->type)->size;
}

static char *input_at(ar_backend *b, const ar_call *c)
{
    host_impl *h = b->impl;
    return ar_call_input(c, b->rank, h->send, h->recv);
}

static char *output_at(ar_backend *b, const ar_call *c)
{
    host_impl *h = b->impl;
    if (c->coll == AR_BROADCAST && !c->in_place && b->rank == c->root)
        return h->send;                              /* the root broadcasts from its send buffer */
    if (c->in_place && c->coll == AR_REDUCE_SCATTER) /* MPI leaves an in-place reduce_scatter at the start */
        return h->recv;
    return ar_call_output(c, b->rank, h->recv);
}

/* -u: the offset depends on the type's size, so it is set per call. */
static void aim(ar_backend *b, const ar_call *c)
{
    host_impl *h = b->impl;
    h->send = ar_unaligned(h->send_base, &h->setup, c->type);
    h->recv = ar_unaligned(h->recv_base, &h->setup, c->type);
}

static void host_put_input(ar_backend *b, const ar_call *c, const void *host)
{
    host_impl *h = b->impl;
    aim(b, c);
    /* poison what the call may write: a size's output is at most its recv_count elements past the offset */
    size_t span = (c->counts.recv_count + c->counts.recv_inplace_off * (size_t)b->nranks) * esize(c) + h->pad;
    memset(h->recv_base, 0xff, span < h->max_bytes + h->pad ? span : h->max_bytes + h->pad);
    memcpy(input_at(b, c), host, c->counts.send_count * esize(c));
}

static void host_get_output(ar_backend *b, const ar_call *c, void *host)
{
    aim(b, c);
    memcpy(host, output_at(b, c), c->counts.recv_count * esize(c));
}

static bool host_inplace_checkable(ar_coll_id coll)
{
    (void)coll;
    return true;
}

static int as_int(size_t count)
{
    if (count > (size_t)INT32_MAX)
        GA_FATAL(GA_EXIT_USAGE, "host path: %zu elements exceed MPI's int count", count);
    return (int)count;
}

/* nccl-tests' hypercube allgather: the own block into place, then at step k an exchange with rank ^ 2^k of
 * the 2^k blocks gathered so far (n a power of two, checked before the sweep). */
static void hypercube(ar_backend *b, const ar_call *c, MPI_Datatype dt, const void *in)
{
    host_impl *h = b->impl;
    size_t block = c->counts.param_count * esize(c);
    char *own = h->recv + (size_t)b->rank * block;
    if ((const char *)in != own)
        memcpy(own, in, block);
    for (int mask = 1; mask < b->nranks; mask <<= 1) {
        int first = b->rank & ~(mask - 1), peer = b->rank ^ mask, theirs = first ^ mask;
        GA_MPI_CHECK(MPI_Sendrecv(
            h->recv + (size_t)first * block, as_int(c->counts.param_count * (size_t)mask), dt, peer, 1,
            h->recv + (size_t)theirs * block, as_int(c->counts.param_count * (size_t)mask), dt, peer, 1,
            b->comm, MPI_STATUS_IGNORE));
    }
}

static void call_once(ar_backend *b, const ar_call *c)
{
    host_impl *h = b->impl;
    MPI_Datatype dt = mpi_type(c->type);
    MPI_Op op = mpi_op(c->type, c->op);
    const ar_counts *n = &c->counts;
    bool ip = c->in_place;
    void *in = input_at(b, c);
    int next = (b->rank + 1) % b->nranks, prev = (b->rank - 1 + b->nranks) % b->nranks;
    switch (c->coll) {
    case AR_ALLREDUCE:
        GA_MPI_CHECK(MPI_Allreduce(ip ? MPI_IN_PLACE : in, h->recv, as_int(n->param_count), dt, op, b->comm));
        break;
    case AR_ALLGATHER:
        GA_MPI_CHECK(MPI_Allgather(ip ? MPI_IN_PLACE : in, as_int(n->param_count), dt, h->recv,
                                   as_int(n->param_count), dt, b->comm));
        break;
    case AR_REDUCE_SCATTER:
        GA_MPI_CHECK(MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : in, h->recv, as_int(n->param_count), dt, op,
                                              b->comm));
        break;
    case AR_BROADCAST:
        GA_MPI_CHECK(MPI_Bcast(!ip && b->rank == c->root ? h->send : h->recv, as_int(n->param_count), dt,
                               c->root, b->comm));
        break;
    case AR_REDUCE:
        GA_MPI_CHECK(MPI_Reduce(ip && b->rank == c->root ? MPI_IN_PLACE : in, h->recv, as_int(n->param_count),
                                dt, op, c->root, b->comm));
        break;
    case AR_ALLTOALL:
        GA_MPI_CHECK(MPI_Alltoall(ip ? MPI_IN_PLACE : in, as_int(n->param_count), dt, h->recv,
                                  as_int(n->param_count), dt, b->comm));
        break;
    case AR_SENDRECV:
        if (ip)
            GA_MPI_CHECK(MPI_Sendrecv_replace(h->recv, as_int(n->param_count), dt, next, 0, prev, 0, b->comm,
                                              MPI_STATUS_IGNORE));
        else
            GA_MPI_CHECK(MPI_Sendrecv(in, as_int(n->param_count), dt, next, 0, h->recv,
                                      as_int(n->param_count), dt, prev, 0, b->comm, MPI_STATUS_IGNORE));
        break;
    case AR_GATHER:
        GA_MPI_CHECK(MPI_Gather(ip && b->rank == c->root ? MPI_IN_PLACE : in, as_int(n->param_count), dt,
                                h->recv, as_int(n->param_count), dt, c->root, b->comm));
        break;
    case AR_SCATTER:
        GA_MPI_CHECK(MPI_Scatter(ip ? h->recv : h->send, as_int(n->param_count), dt,
                                 ip && b->rank == c->root ? MPI_IN_PLACE : output_at(b, c),
                                 as_int(n->param_count), dt, c->root, b->comm));
        break;
    case AR_HYPERCUBE:
        hypercube(b, c, dt, in);
        break;
    default:
        GA_FATAL(GA_EXIT_INTERNAL, "host path: collective %d has no MPI call", (int)c->coll);
    }
    if (c->op == AR_AVG && ar_coll_get(c->coll)->reduces && (c->coll != AR_REDUCE || b->rank == c->root))
        divide(c->type, output_at(b, c), n->recv_count, b->nranks);
}

static void host_run(ar_backend *b, const ar_call *c, int iters, const char *what)
{
    /* -T bounds each call: a healthy batch of many large calls may take longer than one bound. */
    aim(b, c);
    ga_deadline_arm("%s", what);
    for (int i = 0; i < iters; i++) {
        if (i)
            ga_deadline_rearm();
        call_once(b, c);
    }
    ga_deadline_disarm();
}

/* The pages a size needs are mapped before it is timed; a sweep cut short never touches the largest size's.
 */
static bool host_prepare(ar_backend *b, size_t bytes)
{
    host_impl *h = b->impl;
    size_t want = bytes + h->pad < h->max_bytes + h->pad ? bytes + h->pad : h->max_bytes + h->pad;
    if (want <= h->touched)
        return false;
    memset(h->send_base + h->touched, 0, want - h->touched);
    memset(h->recv_base + h->touched, 0, want - h->touched);
    h->touched = want;
    return true;
}

static void host_destroy(ar_backend *b)
{
    host_impl *h = b->impl;
    free(h->send_base);
    free(h->recv_base);
    free(h);
    free(b);
}

ar_backend *ar_host_backend_new(MPI_Comm comm, size_t max_bytes, const ar_backend_setup *setup)
{
    ar_backend *b = calloc(1, sizeof *b);
    host_impl *h = calloc(1, sizeof *h);
    size_t bytes = max_bytes ? max_bytes : 1, pad = ar_unalign_pad(setup);
    if (!b || !h || !(h->send_base = malloc(bytes + pad)) || !(h->recv_base = malloc(bytes + pad)))
        GA_FATAL(GA_EXIT_INTERNAL, "host path: out of memory for 2 x %zu bytes", bytes + pad); /* 5 */
    h->send = h->send_base;
    h->recv = h->recv_base;
    h->max_bytes = bytes;
    h->pad = pad;
    if (setup)
        h->setup = *setup;
    b->name = "mpi";
    b->comm = comm;
    MPI_Comm_rank(comm, &b->rank);
    MPI_Comm_size(comm, &b->nranks);
    b->impl = h;
    b->inplace_checkable = host_inplace_checkable;
    b->prepare = host_prepare;
    b->put_input = host_put_input;
    b->get_output = host_get_output;
    b->run = host_run;
    b->destroy = host_destroy;
    return b;
}
