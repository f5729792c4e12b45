/* The GPU test double's shared parts: the environment it reads, the streams and the operations they queue,
 * and what the tests count. One file per library or topic uses them (gd_cuda.c, gd_kernels.c, gd_graphs.c,
 * gd_nccl*.c, gd_cublas.c); what the double models and its faults: docs/testing-gpu-paths.md.
 *
 * Never linked into a program: the tests load libga_gpu_double.so with LD_PRELOAD into the programs as built,
 * where its definitions take precedence over libcudart, libcublas(Lt) and libnccl (which are still loaded,
 * and never reached for what is defined here). Only the functions marked EXPORT are visible. */
#ifndef GD_H
#define GD_H

#include <cuda_runtime_api.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- environment ---- */

long gd_env_long(const char *name, long fallback);
/* Does a fault apply to this process (GA_DOUBLE_FAULT_RANK is its world rank, or unset)? */
bool gd_fault_here(void);
/* The variable var holds "Op[:n]": is this call (1-based) of op the one, on a rank the fault applies to? */
bool gd_fault_matches(const char *var, const char *op, long call);
double gd_now(void);
void gd_nap(void);
/* Prints "[gpu-double] ..." on stderr when GA_DOUBLE_TRACE is set. */
bool gd_tracing(void);
long gd_world_rank(void);

/* GA_DOUBLE_FAIL: should this call of function f fail? */
enum {
    GD_FN_BEGIN_CAPTURE,
    GD_FN_END_CAPTURE,
    GD_FN_GRAPH_INSTANTIATE,
    GD_FN_GRAPH_LAUNCH,
    GD_FN_COMM_REGISTER,
    GD_FN_WINDOW_REGISTER,
    GD_FN_MEM_ALLOC,
    GD_FN_COUNT
};
bool gd_fail_now(int f);

/* ---- streams, events and the operations they run ---- */

typedef enum { OP_COPY, OP_SET, OP_KERNEL, OP_EVENT, OP_WAIT_EVENT, OP_COLL, OP_GEMM, OP_NEVER } op_kind;

struct CUevent_st {
    bool pending; /* recorded, not yet reached */
    double t;
};

struct coll_op;
typedef struct work {
    op_kind kind;
    struct work *next;
    void *dst;
    const void *src;
    size_t bytes;
    int value;
    bool host_link; /* a copy between host and device: in flight until its stream is next polled */
    bool started;
    struct CUevent_st *event;
    void (*kernel)(const uint64_t *words, dim3 grid);
    uint64_t words[12];
    dim3 grid;
    struct coll_op *coll;
} work;

struct CUstream_st {
    work *head, *tail;
    struct CUstream_st *next_stream;
    bool capturing; /* between cudaStreamBeginCapture and EndCapture: work is recorded, not queued */
    work *cap_head, *cap_tail;
};

extern struct CUstream_st gd_legacy_stream;
extern struct CUstream_st *gd_streams;
extern cudaError_t gd_last_error;

struct CUstream_st *gd_stream_of(cudaStream_t s);
work *gd_work_new(op_kind kind);
/* Queues o on stream (or records it, while the stream is captured), then runs what can run. */
void gd_enqueue(cudaStream_t stream, work *o);
void gd_progress_all(void);

/* ---- "device" memory in use, for cudaMemGetInfo (allocations and communicators) ---- */

extern uint64_t gd_device_used;
uint64_t gd_device_total(void);

/* ---- device buffers in shared memory, and CUDA IPC between the ranks (gd_ipc.c) ---- */

/* A zeroed buffer another process can map (NULL when the host cannot back it); its size, freed. */
void *gd_shared_alloc(size_t bytes);
size_t gd_shared_free(void *p);
/* p lies in a peer's buffer opened by its IPC handle: that peer's world rank into *owner. */
bool gd_ipc_owner(const void *p, long *owner);

/* ---- NCCL, for the stream engine and graphs ---- */

bool gd_coll_progress(struct coll_op *c);
/* Numbers a collective and decides its faults: at the call, or at each launch of a graph that holds it. */
void gd_coll_issue(struct coll_op *o);
struct coll_op *gd_coll_clone(const struct coll_op *o);

/* ---- what the tests count (printed at exit with GA_DOUBLE_TRACE) ---- */

typedef struct {
    long captures, instantiated, launches, graphs_destroyed, execs_destroyed;
    long registered, deregistered, windows, windows_freed, mem_allocs, mem_frees;
    long default_stream_colls, colls, unaligned_colls; /* calls; unaligned: a buffer off a 16-byte boundary */
    long issued; /* collectives queued to run: a call outside a capture, and each launch of a captured one */
    long groups, grouped_colls, max_group; /* ncclGroupEnd calls with collectives, those, the most in one */
    long distinct_inputs;                  /* distinct input addresses the collectives read */
    long ar_fills, ar_verifies, ar_wrong; /* allreduce_bw's device check: kernels run, wrong elements found */
} gd_counters;
extern gd_counters gd_counts;

#endif
