/* The double's collective calls. A collective posts its input into the rank's slot of the communicator's
 * segment and completes when every rank has posted the same collective number; a rank reuses its slot only
 * after every rank has read the previous collective from it. A rank that stops issuing collectives leaves
 * the others waiting, as with NCCL. Between ncclGroupStart and ncclGroupEnd the calls are only recorded, and
 * queued at the group's end (send and receive: one exchange per group, a ring shift). */
#include "gd_nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t min_of(atomic_uint_least64_t *v, int n)
{
    uint64_t m = UINT64_MAX;
    for (int r = 0; r < n; r++) {
        uint64_t x = atomic_load(&v[r]);
        m = x < m ? x : m;
    }
    return m;
}

bool gd_coll_progress(coll_op *o)
{
    struct ncclComm *c = o->comm;
    if (atomic_load(&c->aborted)) { /* the abort ended the kernel; the output is undefined */
        free(o);
        return true;
    }
    if (o->never)
        return false;
    if (!o->posted) {
        if (min_of(c->h->done, c->nranks) < o->seq - 1)
            return false;
        memcpy(gd_slot(c, c->rank), o->in, gd_posted_bytes(o, c->rank));
        atomic_store(&c->h->posted[c->rank], o->seq);
        o->posted = true;
    }
    if (min_of(c->h->posted, c->nranks) < o->seq)
        return false;
    gd_coll_compute(c, o);
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

void gd_coll_issue(coll_op *o)
{
    struct ncclComm *c = o->comm;
    long call = ++c->calls[o->kind];
    o->seq = ++c->issued;
    gd_counts.issued++;
    o->posted = false;
    o->never = gd_fault_matches("GA_DOUBLE_NCCL_HANG", gd_coll_names[o->kind], call);
    if (gd_fault_matches("GA_DOUBLE_NCCL_ASYNC_ERROR", gd_coll_names[o->kind], call)) {
        o->never = true;
        atomic_store(&c->async_error, ncclRemoteError);
        gd_nccl_error(c, "test double: %s %ld failed on a remote peer", gd_coll_names[o->kind], call);
    }
}

/* The distinct input addresses the collectives used (nccl-tests shifts its buffers every iteration). */
static void note_input(const void *in)
{
    static const void *seen[4096];
    uintptr_t h = ((uintptr_t)in >> 3) * 0x9e3779b97f4a7c15ull;
    for (size_t i = 0, at = h % 4096; i < 4096; i++, at = (at + 1) % 4096) {
        if (seen[at] == in)
            return;
        if (!seen[at]) {
            seen[at] = in;
            gd_counts.distinct_inputs++;
            return;
        }
    }
}

/* Queues o now: the checks NCCL makes at the call, the first collective's connection, the counts. */
static ncclResult_t queue_now(coll_op *o, cudaStream_t stream)
{
    struct ncclComm *c = o->comm;
    /* NCCL 2.28's one-rank path (ncclLaunchOneRank, src/device/onerank.cu) has no fp8 kernel for avg: its
     * case sits under __CUDA_ARCH__ >= 900 in host code, so the call answers ncclInvalidArgument. */
    bool reduces = o->kind == C_ALLREDUCE || o->kind == C_REDUCE || o->kind == C_REDUCESCATTER;
    if (c->nranks == 1 && reduces && o->redop == ncclAvg &&
        (o->type == ncclFloat8e4m3 || o->type == ncclFloat8e5m2) && o->count > 0) {
        gd_nccl_error(c, "%s", "");
        free(o);
        return ncclInvalidArgument;
    }
    if (gd_type_size(o->type) == 0 || gd_posted_bytes(o, c->rank) > c->slot_bytes) {
        gd_nccl_error(c, "test double: %s of %zu elements of type %d not modelled", gd_coll_names[o->kind],
                      o->count, (int)o->type);
        free(o);
        return ncclInvalidArgument;
    }
    ncclResult_t r = gd_comm_connect(c);
    if (!stream)
        gd_counts.default_stream_colls++;
    gd_counts.colls++;
    if (((uintptr_t)o->in | (uintptr_t)o->out) % 16)
        gd_counts.unaligned_colls++;
    if (o->in)
        note_input(o->in);
    if (!gd_stream_of(stream)->capturing) /* a captured collective is numbered at each launch */
        gd_coll_issue(o);
    work *q = gd_work_new(OP_COLL);
    q->coll = o;
    gd_enqueue(stream, q);
    if (r == ncclSuccess && c->nonblocking) {
        if (c->pending == PEND_NONE)
            c->pending = PEND_ONCE;
        r = ncclInProgress;
    }
    return r;
}

/* ---- groups ---- */

typedef struct deferred {
    coll_op *o;
    cudaStream_t stream;
    struct deferred *next;
} deferred;

static int group_depth;
static deferred *group_head, **group_tail = &group_head;
static coll_op *group_exchange_op; /* the group's sends and receives, as one exchange */
static cudaStream_t group_exchange_stream;

static void defer(coll_op *o, cudaStream_t stream)
{
    deferred *d = calloc(1, sizeof *d);
    if (!d)
        abort();
    *d = (deferred){o, stream, NULL};
    *group_tail = d;
    group_tail = &d->next;
}

ncclResult_t gd_coll_enqueue(coll_op *o, cudaStream_t stream)
{
    if (group_depth > 0) {
        defer(o, stream);
        return ncclSuccess;
    }
    return queue_now(o, stream);
}

EXPORT ncclResult_t ncclGroupStart(void)
{
    group_depth++;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupEnd(void)
{
    if (group_depth == 0)
        return ncclInvalidUsage;
    if (--group_depth > 0)
        return ncclSuccess;
    if (group_exchange_op)
        defer(group_exchange_op, group_exchange_stream);
    group_exchange_op = NULL;
    ncclResult_t result = ncclSuccess;
    long n = 0;
    for (deferred *d = group_head, *next; d; d = next, n++) {
        next = d->next;
        struct ncclComm *c = d->o->comm;
        gd_comm_enter(c, "ncclGroupEnd");
        ncclResult_t r = queue_now(d->o, d->stream);
        gd_comm_leave(c);
        if (result == ncclSuccess || result == ncclInProgress)
            result = r == ncclSuccess ? result : r;
        free(d);
    }
    group_head = NULL;
    group_tail = &group_head;
    if (n > 0) {
        gd_counts.groups++;
        gd_counts.grouped_colls += n;
        gd_counts.max_group = n > gd_counts.max_group ? n : gd_counts.max_group;
    }
    return result;
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

static ncclResult_t call(const char *fn, coll_op *o, cudaStream_t s)
{
    struct ncclComm *c = o->comm;
    gd_comm_enter(c, fn);
    ncclResult_t r = gd_coll_enqueue(o, s);
    gd_comm_leave(c);
    return r;
}

EXPORT ncclResult_t ncclAllReduce(const void *in, void *out, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t s)
{
    return call("ncclAllReduce", coll_new(comm, C_ALLREDUCE, in, out, count, t, op, 0), s);
}

EXPORT ncclResult_t ncclBroadcast(const void *in, void *out, size_t count, ncclDataType_t t, int root,
                                  ncclComm_t comm, cudaStream_t s)
{
    return call("ncclBroadcast", coll_new(comm, C_BROADCAST, in, out, count, t, ncclSum, root), s);
}

EXPORT ncclResult_t ncclReduce(const void *in, void *out, size_t count, ncclDataType_t t, ncclRedOp_t op,
                               int root, ncclComm_t comm, cudaStream_t s)
{
    return call("ncclReduce", coll_new(comm, C_REDUCE, in, out, count, t, op, root), s);
}

EXPORT ncclResult_t ncclAllGather(const void *in, void *out, size_t count, ncclDataType_t t, ncclComm_t comm,
                                  cudaStream_t s)
{
    return call("ncclAllGather", coll_new(comm, C_ALLGATHER, in, out, count, t, ncclSum, 0), s);
}

EXPORT ncclResult_t ncclReduceScatter(const void *in, void *out, size_t count, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t s)
{
    return call("ncclReduceScatter", coll_new(comm, C_REDUCESCATTER, in, out, count, t, op, 0), s);
}

EXPORT ncclResult_t ncclAlltoAll(const void *in, void *out, size_t count, ncclDataType_t t, ncclComm_t comm,
                                 cudaStream_t s)
{
    return call("ncclAlltoAll", coll_new(comm, C_ALLTOALL, in, out, count, t, ncclSum, 0), s);
}

EXPORT ncclResult_t ncclGather(const void *in, void *out, size_t count, ncclDataType_t t, int root,
                               ncclComm_t comm, cudaStream_t s)
{
    return call("ncclGather", coll_new(comm, C_GATHER, in, out, count, t, ncclSum, root), s);
}

EXPORT ncclResult_t ncclScatter(const void *in, void *out, size_t count, ncclDataType_t t, int root,
                                ncclComm_t comm, cudaStream_t s)
{
    return call("ncclScatter", coll_new(comm, C_SCATTER, in, out, count, t, ncclSum, root), s);
}

static coll_op *group_exchange(ncclComm_t comm, size_t count, ncclDataType_t t, cudaStream_t s)
{
    if (!group_exchange_op)
        group_exchange_op = coll_new(comm, C_SENDRECV, NULL, NULL, count, t, ncclSum, 0);
    group_exchange_stream = s;
    return group_exchange_op;
}

EXPORT ncclResult_t ncclSend(const void *in, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t s)
{
    if (group_depth == 0)
        return ncclInvalidUsage; /* the double models send/receive inside a group only */
    gd_comm_enter(comm, "ncclSend");
    coll_op *o = group_exchange(comm, count, t, s);
    o->in = in;
    o->send_peer = peer;
    gd_comm_leave(comm);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclRecv(void *out, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t s)
{
    if (group_depth == 0)
        return ncclInvalidUsage;
    gd_comm_enter(comm, "ncclRecv");
    coll_op *o = group_exchange(comm, count, t, s);
    o->out = out;
    o->recv_peer = peer;
    gd_comm_leave(comm);
    return ncclSuccess;
}
