/* The NCCL part of the double, shared by its files: gd_nccl.c (communicators: init, abort, finalize, destroy,
 * asynchronous errors), gd_nccl_coll.c (the collective calls and groups), gd_nccl_data.c (element types and
 * what a collective computes), gd_nccl_reg.c (ncclMemAlloc and buffer registration). */
#ifndef GD_NCCL_H
#define GD_NCCL_H

#include <nccl.h>

#include <stdatomic.h>

#include "gd.h"

#define MAX_RANKS 64

/* The segment the ranks of a communicator share. */
typedef struct {
    atomic_int attached;
    atomic_uint_least64_t posted[MAX_RANKS]; /* collectives whose input this rank has published */
    atomic_uint_least64_t done[MAX_RANKS];   /* collectives this rank has finished reading */
    atomic_int connected[MAX_RANKS];         /* this rank has issued its first collective */
    atomic_uint windows[MAX_RANKS];          /* symmetric windows this rank has registered so far */
} shm_header;

/* What a non-blocking communicator still has in progress (ncclCommGetAsyncError answers ncclInProgress). */
typedef enum {
    PEND_NONE,
    PEND_INIT,
    PEND_CONNECT,
    PEND_WINDOW,
    PEND_FINALIZE,
    PEND_ONCE,
    PEND_NEVER
} pending_kind;

#define COMM_LIVE 0x11ccu
#define COMM_FREED 0xdeadu

struct ncclComm {
    unsigned magic; /* COMM_LIVE; COMM_FREED once ncclCommAbort or ncclCommDestroy freed it */
    shm_header *h;
    size_t map_bytes, slot_bytes;
    int rank, nranks;
    uint64_t issued;
    long calls[16]; /* per collective kind, for the faults */
    atomic_int async_error;
    atomic_bool aborted;
    bool nonblocking; /* config.blocking = 0 or NCCL_COMM_BLOCKING=0: calls answer ncclInProgress */
    pending_kind pending;
    bool connected, finalized;
    unsigned windows_wanted; /* a non-blocking window registration waits for every rank to reach it */
    atomic_int in_call;      /* threads inside an NCCL call on this communicator */
    char last_error[256];
    uint64_t comm_bytes; /* the "device" memory the communicator holds (cudaMemGetInfo) */
    char id_name[128];   /* the unique id's name: the debug lines of issue 25 are written once init is done */
    bool logged;
};

typedef enum {
    C_ALLREDUCE,
    C_BROADCAST,
    C_REDUCE,
    C_ALLGATHER,
    C_REDUCESCATTER,
    C_ALLTOALL,
    C_SENDRECV,
    C_GATHER,
    C_SCATTER,
    C_KINDS
} coll_kind;
extern const char *const gd_coll_names[C_KINDS];

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

/* Sets ncclGetLastError's text (and the communicator's, when there is one). */
void gd_nccl_error(struct ncclComm *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Every NCCL call on a communicator enters and leaves it: a call on a communicator that ncclCommAbort or
 * ncclCommDestroy freed, or a second thread inside a call on the same communicator, ends the process the way
 * NCCL would leave it (a use after free, a race): abort(), after one "[gpu-double] FATAL" line. */
void gd_comm_enter(struct ncclComm *c, const char *fn);
void gd_comm_leave(struct ncclComm *c);

/* Element types: bytes per element (0: not an NCCL type), and the value of element i (or storing one,
 * rounded to the type: half, bfloat16 and both fp8 formats round to nearest even). */
size_t gd_type_size(ncclDataType_t t);
bool gd_type_is_float(ncclDataType_t t);
double gd_load(ncclDataType_t t, const void *p, size_t i);
void gd_store(ncclDataType_t t, void *p, size_t i, double v);
double gd_round_to(ncclDataType_t t, double v);

unsigned char *gd_slot(struct ncclComm *c, int rank);
/* Bytes rank posts for o (its input as the collective reads it). */
size_t gd_posted_bytes(const coll_op *o, int rank);
/* Computes this rank's output of o from every rank's posted input. */
void gd_coll_compute(struct ncclComm *c, coll_op *o);

/* Queues a collective on stream (deferred to ncclGroupEnd inside a group). */
ncclResult_t gd_coll_enqueue(coll_op *o, cudaStream_t stream);
/* A blocking communicator's first collective connects to the peers, and blocks until every rank has issued
 * its own first one (NCCL's runtime connection); a non-blocking one answers ncclInProgress meanwhile. */
ncclResult_t gd_comm_connect(struct ncclComm *c);
/* Whether every rank has reached what a non-blocking communicator is waiting for. */
bool gd_comm_pending_done(struct ncclComm *c);

#endif
