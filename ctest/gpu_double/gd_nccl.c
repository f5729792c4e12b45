/* The double's NCCL: communicators are shared-memory segments between the processes of one node; a
 * collective posts its input, completes when every rank has posted the same collective number, and computes
 * its output from all inputs on the host. */
#include <nccl.h>

#include "gd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- NCCL ---- */

#define MAX_RANKS 64

typedef struct {
    atomic_int attached;
    atomic_uint_least64_t posted[MAX_RANKS]; /* collectives whose input this rank has published */
    atomic_uint_least64_t done[MAX_RANKS];   /* collectives this rank has finished reading */
} shm_header;

struct ncclComm {
    shm_header *h;
    size_t map_bytes, slot_bytes;
    int rank, nranks;
    uint64_t issued;
    long calls[16]; /* per collective kind, for the faults */
    atomic_int async_error;
    atomic_bool aborted;
    bool nonblocking; /* config.blocking = 0: every call answers ncclInProgress, as NCCL 2.28 does */
    atomic_int in_progress;
    char last_error[256];
    uint64_t comm_bytes; /* the "device" memory the communicator holds (cudaMemGetInfo) */
};

typedef enum {
    C_ALLREDUCE,
    C_BROADCAST,
    C_REDUCE,
    C_ALLGATHER,
    C_REDUCESCATTER,
    C_ALLTOALL,
    C_SENDRECV
} coll_kind;
static const char *const coll_names[] = {"AllReduce",     "Broadcast", "Reduce",  "AllGather",
                                         "ReduceScatter", "AlltoAll",  "SendRecv"};

typedef struct coll_op {
    struct ncclComm *comm;
    coll_kind kind;
    uint64_t seq;
    const void *in;
    void *out;
    size_t count; /* elements, NCCL's meaning per collective */
    ncclDataType_t type;
    ncclRedOp_t redop;
    int root, send_peer, recv_peer;
    bool posted, never;
} coll_op;

static unsigned char *slot(struct ncclComm *c, int rank)
{
    return (unsigned char *)c->h + sizeof(shm_header) + (size_t)rank * c->slot_bytes;
}

static size_t type_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8:
    case ncclUint8:
        return 1;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
        return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
        return 8;
    default:
        return 0; /* not modelled: 16-bit and 8-bit floats */
    }
}

static double load(ncclDataType_t t, const void *p, size_t i)
{
    switch (t) {
    case ncclInt8:
        return ((const int8_t *)p)[i];
    case ncclUint8:
        return ((const uint8_t *)p)[i];
    case ncclInt32:
        return ((const int32_t *)p)[i];
    case ncclUint32:
        return ((const uint32_t *)p)[i];
    case ncclInt64:
        return (double)((const int64_t *)p)[i];
    case ncclUint64:
        return (double)((const uint64_t *)p)[i];
    case ncclFloat32:
        return ((const float *)p)[i];
    default:
        return ((const double *)p)[i];
    }
}

static void store(ncclDataType_t t, void *p, size_t i, double v)
{
    switch (t) {
    case ncclInt8:
        ((int8_t *)p)[i] = (int8_t)(int64_t)v;
        break;
    case ncclUint8:
        ((uint8_t *)p)[i] = (uint8_t)(int64_t)v;
        break;
    case ncclInt32:
        ((int32_t *)p)[i] = (int32_t)(int64_t)v;
        break;
    case ncclUint32:
        ((uint32_t *)p)[i] = (uint32_t)(int64_t)v;
        break;
    case ncclInt64:
        ((int64_t *)p)[i] = (int64_t)v;
        break;
    case ncclUint64:
        ((uint64_t *)p)[i] = (uint64_t)v;
        break;
    case ncclFloat32:
        ((float *)p)[i] = (float)v;
        break;
    default:
        ((double *)p)[i] = v;
    }
}

static bool is_float(ncclDataType_t t)
{
    return t == ncclFloat32 || t == ncclFloat64;
}

/* Element i of the reduction over every rank's slot (elements from offset off of each). */
static double reduce_at(struct ncclComm *c, const coll_op *o, size_t i)
{
    double acc = load(o->type, slot(c, 0), i);
    for (int r = 1; r < c->nranks; r++) {
        double v = load(o->type, slot(c, r), i);
        switch (o->redop) {
        case ncclProd:
            acc *= v;
            break;
        case ncclMin:
            acc = v < acc ? v : acc;
            break;
        case ncclMax:
            acc = v > acc ? v : acc;
            break;
        default:
            acc += v;
        }
    }
    if (o->redop == ncclAvg)
        acc = is_float(o->type) ? acc / c->nranks : (double)((int64_t)acc / c->nranks);
    return acc;
}

static size_t in_bytes(const coll_op *o)
{
    size_t es = type_size(o->type);
    switch (o->kind) {
    case C_REDUCESCATTER:
        return o->count * es * (size_t)o->comm->nranks;
    case C_ALLTOALL:
        return o->count * es * (size_t)o->comm->nranks;
    default:
        return o->count * es;
    }
}

static void coll_compute(struct ncclComm *c, coll_op *o)
{
    size_t es = type_size(o->type), n = o->count;
    int me = c->rank;
    switch (o->kind) {
    case C_ALLREDUCE:
        for (size_t i = 0; i < n; i++)
            store(o->type, o->out, i, reduce_at(c, o, i));
        break;
    case C_REDUCE:
        if (me == o->root)
            for (size_t i = 0; i < n; i++)
                store(o->type, o->out, i, reduce_at(c, o, i));
        break;
    case C_BROADCAST:
        memmove(o->out, slot(c, o->root), n * es);
        break;
    case C_ALLGATHER:
        for (int r = 0; r < c->nranks; r++)
            memmove((unsigned char *)o->out + (size_t)r * n * es, slot(c, r), n * es);
        break;
    case C_REDUCESCATTER:
        for (size_t i = 0; i < n; i++)
            store(o->type, o->out, i, reduce_at(c, o, (size_t)me * n + i));
        break;
    case C_ALLTOALL:
        for (int r = 0; r < c->nranks; r++)
            memmove((unsigned char *)o->out + (size_t)r * n * es, slot(c, r) + (size_t)me * n * es, n * es);
        break;
    case C_SENDRECV:
        memmove(o->out, slot(c, o->recv_peer), n * es);
        break;
    }
}

static uint64_t min_of(atomic_uint_least64_t *v, int n)
{
    uint64_t m = UINT64_MAX;
    for (int r = 0; r < n; r++) {
        uint64_t x = atomic_load(&v[r]);
        m = x < m ? x : m;
    }
    return m;
}

/* Post, then complete once every rank has posted: a rank reuses its slot only after every rank has read
 * the previous collective from it. */
bool gd_coll_progress(coll_op *o)
{
    struct ncclComm *c = o->comm;
    if (o->never || atomic_load(&c->aborted))
        return false;
    if (!o->posted) {
        if (min_of(c->h->done, c->nranks) < o->seq - 1)
            return false;
        memcpy(slot(c, c->rank), o->in, in_bytes(o));
        atomic_store(&c->h->posted[c->rank], o->seq);
        o->posted = true;
    }
    if (min_of(c->h->posted, c->nranks) < o->seq)
        return false;
    coll_compute(c, o);
    atomic_store(&c->h->done[c->rank], o->seq);
    free(o);
    return true;
}

coll_op *gd_coll_clone(const coll_op *o)
{
    coll_op *c = malloc(sizeof *c);
    if (!c)
        abort();
    *c = *o;
    return c;
}

static bool in_group;
static coll_op *group_op;

/* Numbers the collective and decides its faults: at the call, or at each launch of a graph that holds it. */
void gd_coll_issue(coll_op *o)
{
    struct ncclComm *c = o->comm;
    long call = ++c->calls[o->kind];
    o->seq = ++c->issued;
    gd_counts.issued++;
    o->posted = false;
    o->never = gd_fault_matches("GA_DOUBLE_NCCL_HANG", coll_names[o->kind], call);
    if (gd_fault_matches("GA_DOUBLE_NCCL_ASYNC_ERROR", coll_names[o->kind], call)) {
        o->never = true;
        atomic_store(&c->async_error, ncclRemoteError);
        snprintf(c->last_error, sizeof c->last_error, "test double: %s %ld failed on a remote peer",
                 coll_names[o->kind], call);
    }
}

static ncclResult_t coll_enqueue(coll_op *o, cudaStream_t stream)
{
    struct ncclComm *c = o->comm;
    if (type_size(o->type) == 0 || in_bytes(o) > c->slot_bytes) {
        snprintf(c->last_error, sizeof c->last_error,
                 "test double: %s of %zu elements of type %d not modelled", coll_names[o->kind], o->count,
                 (int)o->type);
        free(o);
        return ncclInvalidArgument;
    }
    if (!stream)
        gd_counts.default_stream_colls++;
    gd_counts.colls++;
    if (((uintptr_t)o->in | (uintptr_t)o->out) % 16)
        gd_counts.unaligned_colls++;
    if (!gd_stream_of(stream)->capturing) /* a captured collective is numbered at each launch */
        gd_coll_issue(o);
    work *q = gd_work_new(OP_COLL);
    q->coll = o;
    gd_enqueue(stream, q);
    if (c->nonblocking) {
        atomic_store(&c->in_progress, 1);
        return ncclInProgress;
    }
    return ncclSuccess;
}

static coll_op *coll_new(ncclComm_t comm, coll_kind kind, const void *in, void *out, size_t count,
                         ncclDataType_t type, ncclRedOp_t redop, int root)
{
    coll_op *o = calloc(1, sizeof *o);
    if (!o)
        abort();
    *o = (coll_op){comm, kind, 0, in, out, count, type, redop, root, -1, -1, false, false};
    return o;
}

EXPORT ncclResult_t ncclGetVersion(int *v)
{
    *v = NCCL_VERSION_CODE;
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
    default:
        return "NCCL error (test double)";
    }
}

EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
    return comm ? comm->last_error : "";
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static int counter;
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "/ga-double-%d-%d-%ld", (int)getpid(), counter++,
             (long)(gd_now() * 1e6));
    return ncclSuccess;
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
    c->rank = rank;
    c->nranks = nranks;
    c->slot_bytes = (size_t)gd_env_long("GA_DOUBLE_SLOT_BYTES", 1 << 20);
    c->map_bytes = sizeof(shm_header) + (size_t)nranks * c->slot_bytes;
    bool blocking = !config || config->blocking;
    c->nonblocking = !blocking;
    if (getenv("GA_DOUBLE_TRACE"))
        fprintf(stderr, "[gpu-double] ncclCommInitRankConfig rank %d of %d CTAPolicy %d\n", rank, nranks,
                config ? config->CTAPolicy : NCCL_CONFIG_UNDEF_INT);
    c->comm_bytes = (uint64_t)gd_env_long("GA_DOUBLE_COMM_BYTES", 64L << 20);
    gd_device_used += c->comm_bytes;
    if (gd_env_long("GA_DOUBLE_NCCL_INIT_HANG", 0) && gd_fault_here()) {
        /* Never joins: a blocking init never returns; a non-blocking one stays in progress. */
        if (blocking)
            for (;;)
                gd_nap();
        atomic_store(&c->async_error, ncclInProgress);
        *out = c;
        return ncclInProgress;
    }
    int fd = shm_open(id.internal, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)c->map_bytes) != 0) {
        snprintf(c->last_error, sizeof c->last_error, "test double: shm_open %s: %s", id.internal,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        *out = c;
        return ncclSystemError;
    }
    c->h = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (c->h == MAP_FAILED)
        return ncclSystemError;
    /* The last rank to attach removes the name; the mapping stays. */
    if (atomic_fetch_add(&c->h->attached, 1) + 1 == nranks)
        shm_unlink(id.internal);
    while (atomic_load(&c->h->attached) < nranks)
        gd_nap();
    *out = c;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
{
    /* A non-blocking communicator's enqueue "finishes" in NCCL's own thread: in progress at the first look.
     */
    if (atomic_exchange(&comm->in_progress, 0)) {
        *err = ncclInProgress;
        return ncclSuccess;
    }
    *err = (ncclResult_t)atomic_load(&comm->async_error);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    /* Called from the deadline thread too: only flags; the process is about to end. */
    if (comm) {
        atomic_store(&comm->aborted, true);
        if (getenv("GA_DOUBLE_TRACE"))
            fprintf(stderr, "[gpu-double] ncclCommAbort (rank %d of %d)\n", comm->rank, comm->nranks);
        fflush(stderr);
    }
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    (void)comm;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (comm && comm->h)
        munmap(comm->h, comm->map_bytes);
    if (comm)
        gd_device_used -= comm->comm_bytes;
    free(comm);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclAllReduce(const void *in, void *out, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t s)
{
    return coll_enqueue(coll_new(comm, C_ALLREDUCE, in, out, count, t, op, 0), s);
}

EXPORT ncclResult_t ncclBroadcast(const void *in, void *out, size_t count, ncclDataType_t t, int root,
                                  ncclComm_t comm, cudaStream_t s)
{
    return coll_enqueue(coll_new(comm, C_BROADCAST, in, out, count, t, ncclSum, root), s);
}

EXPORT ncclResult_t ncclReduce(const void *in, void *out, size_t count, ncclDataType_t t, ncclRedOp_t op,
                               int root, ncclComm_t comm, cudaStream_t s)
{
    return coll_enqueue(coll_new(comm, C_REDUCE, in, out, count, t, op, root), s);
}

EXPORT ncclResult_t ncclAllGather(const void *in, void *out, size_t count, ncclDataType_t t, ncclComm_t comm,
                                  cudaStream_t s)
{
    return coll_enqueue(coll_new(comm, C_ALLGATHER, in, out, count, t, ncclSum, 0), s);
}

EXPORT ncclResult_t ncclReduceScatter(const void *in, void *out, size_t count, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t s)
{
    return coll_enqueue(coll_new(comm, C_REDUCESCATTER, in, out, count, t, op, 0), s);
}

EXPORT ncclResult_t ncclAlltoAll(const void *in, void *out, size_t count, ncclDataType_t t, ncclComm_t comm,
                                 cudaStream_t s)
{
    return coll_enqueue(coll_new(comm, C_ALLTOALL, in, out, count, t, ncclSum, 0), s);
}

/* Send and receive: modelled as one exchange per group (a ring shift: send to one peer, receive from one). */
static cudaStream_t group_stream;

EXPORT ncclResult_t ncclGroupStart(void)
{
    in_group = true;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupEnd(void)
{
    in_group = false;
    coll_op *o = group_op;
    group_op = NULL;
    return o ? coll_enqueue(o, group_stream) : ncclSuccess;
}

static coll_op *group_exchange(ncclComm_t comm, size_t count, ncclDataType_t t, cudaStream_t s)
{
    if (!group_op)
        group_op = coll_new(comm, C_SENDRECV, NULL, NULL, count, t, ncclSum, 0);
    group_stream = s;
    return group_op;
}

EXPORT ncclResult_t ncclSend(const void *in, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t s)
{
    if (!in_group)
        return ncclInvalidUsage;
    coll_op *o = group_exchange(comm, count, t, s);
    o->in = in;
    o->send_peer = peer;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclRecv(void *out, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t s)
{
    if (!in_group)
        return ncclInvalidUsage;
    coll_op *o = group_exchange(comm, count, t, s);
    o->out = out;
    o->recv_peer = peer;
    return ncclSuccess;
}

/* ---- NCCL buffer registration and allocation: recorded, nothing else ---- */

EXPORT ncclResult_t ncclMemAlloc(void **p, size_t bytes)
{
    if (gd_fail_now(GD_FN_MEM_ALLOC))
        return ncclSystemError;
    gd_counts.mem_allocs++;
    return cudaMalloc(p, bytes) == cudaSuccess ? ncclSuccess : ncclSystemError;
}

EXPORT ncclResult_t ncclMemFree(void *p)
{
    gd_counts.mem_frees++;
    cudaFree(p);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    (void)buff;
    (void)size;
    if (gd_fail_now(GD_FN_COMM_REGISTER)) {
        snprintf(comm->last_error, sizeof comm->last_error, "test double: ncclCommRegister failed");
        return ncclUnhandledCudaError;
    }
    gd_counts.registered++;
    *handle = (void *)(uintptr_t)gd_counts.registered;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    (void)comm;
    if (!handle)
        return ncclInvalidArgument;
    gd_counts.deregistered++;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                           int flags)
{
    (void)buff;
    (void)size;
    if (gd_fail_now(GD_FN_WINDOW_REGISTER) || flags != NCCL_WIN_COLL_SYMMETRIC) {
        snprintf(comm->last_error, sizeof comm->last_error, "test double: ncclCommWindowRegister failed");
        return ncclUnhandledCudaError;
    }
    gd_counts.windows++;
    *win = (ncclWindow_t)(uintptr_t)gd_counts.windows;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    (void)comm;
    if (!win)
        return ncclInvalidArgument;
    gd_counts.windows_freed++;
    return ncclSuccess;
}
