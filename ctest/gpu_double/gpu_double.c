/* A test double of the CUDA runtime, cuBLAS(Lt) and NCCL entry points the programs call, so that ctest runs
 * the programs' real GPU-path code on a machine without a GPU. Never linked into a program: the tests load it
 * with LD_PRELOAD into the programs as built, where its definitions take precedence over libcudart,
 * libcublas(Lt) and libnccl (which are still loaded, and never reached for what is defined here).
 *
 * What it models, and no more (docs/testing-gpu-paths.md):
 * - "device" memory is host memory; streams are queues of operations run in order on the calling thread
 *   when the stream is polled (cudaStreamQuery, cudaStreamSynchronize, cudaEventSynchronize, an enqueue);
 * - a kernel launched with <<<>>> reaches __cudaLaunchKernel with its host stub; the stub's name (from
 *   __cudaRegisterFunction) selects a host stand-in (the few kernels whose results the code under test reads
 *   back), every other kernel is recorded as a success;
 * - NCCL communicators are shared-memory segments between the processes of one node; a collective posts its
 *   input, completes when every rank has posted the same collective number, and computes its output from
 *   all inputs on the host (float, double and integer types);
 * - cuBLASLt GEMMs write a fixed pattern into C (the same on every rank) and take GA_DOUBLE_GEMM_US.
 *
 * Faults, read from the environment (each applies to GA_DOUBLE_FAULT_RANK, the world rank, or every rank):
 *   GA_DOUBLE_NCCL_HANG=Op[:n]        the n-th (default first) collective Op never completes
 *   GA_DOUBLE_NCCL_ASYNC_ERROR=Op[:n] the n-th collective Op fails asynchronously (ncclRemoteError) and never
 *                                     completes, as a collective does whose peer died
 *   GA_DOUBLE_NCCL_INIT_HANG=1        ncclCommInitRankConfig never finishes
 *   GA_DOUBLE_GEMM_FAIL=n             the n-th and every later cublasLtMatmul fails
 *   GA_DOUBLE_GEMM_CORRUPT=n          the n-th cublasLtMatmul flips one bit of its output
 *   GA_DOUBLE_LT_CREATE_FAIL=1        cublasLtCreate fails (a GPU whose measurement cannot start)
 *   GA_DOUBLE_D2D_US=us               every device-to-device copy takes us longer (a slow GPU)
 *   GA_DOUBLE_EVENT_RECORD_FAIL=1     cudaEventRecord fails
 *   GA_DOUBLE_FAIL=Fn[:n]             the n-th (default first) call of Fn fails, Fn one of
 * cudaStreamBeginCapture, cudaStreamEndCapture, cudaGraphInstantiate, cudaGraphLaunch, ncclCommRegister,
 * ncclCommWindowRegister, ncclMemAlloc and, not faults: GA_DOUBLE_GEMM_US (default 20), how long a GEMM
 * takes; GA_DOUBLE_GEMM_FIRST_US the first (lazy module loading); GA_DOUBLE_GPUS (default 8) devices per
 * process; GA_DOUBLE_TRACE=1 prints aborts, the CTA policy of each communicator, and at exit what each
 * process did with graphs, registrations and the default stream (the counts the tests compare; "device"
 * memory is counted for cudaMemGetInfo, and a communicator holds GA_DOUBLE_COMM_BYTES, default 64 MiB, of
 * it). Op is the NCCL function name without "nccl" (AllReduce, Broadcast, AllGather, ...). */
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "double_nccl_log.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- environment ---- */

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

static bool fault_here(void)
{
    long want = env_long("GA_DOUBLE_FAULT_RANK", -1);
    return want < 0 || want == env_long("OMPI_COMM_WORLD_RANK", env_long("PMIX_RANK", 0));
}

/* "Op[:n]" names op and its n-th call (1-based)? */
static bool fault_matches(const char *var, const char *op, long call)
{
    const char *v = getenv(var);
    if (!v || !*v || !fault_here())
        return false;
    size_t len = strcspn(v, ":");
    long n = v[len] == ':' ? strtol(v + len + 1, NULL, 10) : 1;
    return strlen(op) == len && strncmp(v, op, len) == 0 && call == n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap(void)
{
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
}

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

/* What the tests count (printed at exit with GA_DOUBLE_TRACE). */
static struct {
    long captures, instantiated, launches, graphs_destroyed, execs_destroyed;
    long registered, deregistered, windows, windows_freed, mem_allocs, mem_frees;
    long default_stream_colls, colls, unaligned_colls; /* calls; unaligned: a buffer off a 16-byte boundary */
    long issued; /* collectives queued to run: a call outside a capture, and each launch of a captured one */
} counts;
static long fn_calls[8];
static const char *const fn_names[8] = {
    "cudaStreamBeginCapture", "cudaStreamEndCapture",   "cudaGraphInstantiate", "cudaGraphLaunch",
    "ncclCommRegister",       "ncclCommWindowRegister", "ncclMemAlloc",         NULL};

/* GA_DOUBLE_FAIL: should this call of function f (an index into fn_names) fail? */
static bool fail_now(int f)
{
    return fault_matches("GA_DOUBLE_FAIL", fn_names[f], ++fn_calls[f]);
}

static struct CUstream_st legacy_stream;
static struct CUstream_st *streams = &legacy_stream;
static cudaError_t last_error = cudaSuccess;

static struct CUstream_st *stream_of(cudaStream_t s)
{
    return s ? s : &legacy_stream;
}

static bool coll_progress(struct coll_op *c);

/* Runs the first operation of s if it can; true when it is done. */
static bool run_op(work *o)
{
    switch (o->kind) {
    case OP_COPY:
        memmove(o->dst, o->src, o->bytes);
        for (double until = now_s() + o->value * 1e-6; now_s() < until;)
            ;
        return true;
    case OP_SET:
        memset(o->dst, o->value, o->bytes);
        return true;
    case OP_KERNEL:
        if (o->kernel)
            o->kernel(o->words, o->grid);
        return true;
    case OP_EVENT:
        o->event->t = now_s();
        o->event->pending = false;
        return true;
    case OP_WAIT_EVENT:
        return !o->event->pending;
    case OP_COLL:
        return coll_progress(o->coll);
    case OP_GEMM:
        o->kernel(o->words, o->grid);
        return true;
    case OP_NEVER:
        return false;
    }
    return true;
}

static bool stream_progress(struct CUstream_st *s)
{
    while (s->head) {
        if (!run_op(s->head))
            return false;
        work *done = s->head;
        s->head = done->next;
        if (!s->head)
            s->tail = NULL;
        free(done);
    }
    return true;
}

static void progress_all(void)
{
    for (struct CUstream_st *s = streams; s; s = s->next_stream)
        stream_progress(s);
}

static work *work_new(op_kind kind)
{
    work *o = calloc(1, sizeof *o);
    if (!o)
        abort();
    o->kind = kind;
    return o;
}

static void enqueue(cudaStream_t stream, work *o)
{
    struct CUstream_st *s = stream_of(stream);
    if (s->capturing) {
        if (s->cap_tail)
            s->cap_tail->next = o;
        else
            s->cap_head = o;
        s->cap_tail = o;
        return;
    }
    if (s->tail)
        s->tail->next = o;
    else
        s->head = o;
    s->tail = o;
    progress_all();
}

/* ---- CUDA runtime: devices ---- */

static int device_count(void)
{
    return (int)env_long("GA_DOUBLE_GPUS", 8);
}

static int current_device;

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    *count = device_count();
    return cudaSuccess;
}

EXPORT cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device >= device_count())
        return last_error = cudaErrorInvalidDevice;
    current_device = device;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetDevice(int *device)
{
    *device = current_device;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    if (device < 0 || device >= device_count())
        return cudaErrorInvalidDevice;
    memset(p, 0, sizeof *p);
    const char *name = getenv("GA_DOUBLE_GPU_NAME");
    snprintf(p->name, sizeof p->name, "%s", name && *name ? name : "gpuaccept test double");
    char host[64] = "";
    gethostname(host, sizeof host);
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = host; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    memcpy(p->uuid.bytes, &h, 8);
    memcpy(p->uuid.bytes + 8, &device, sizeof device);
    p->totalGlobalMem = (size_t)80 << 30;
    p->multiProcessorCount = 132;
    p->major = 9;
    p->minor = 0;
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    (void)device;
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor:
        *value = 9;
        break;
    case cudaDevAttrComputeCapabilityMinor:
        *value = 0;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = 132;
        break;
    default:
        *value = 0;
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int device)
{
    snprintf(id, (size_t)len, "0000:%02x:00.0", 0x10 + device);
    return cudaSuccess;
}

EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "no error (test double)";
    case cudaErrorNotReady:
        return "device not ready (test double)";
    case cudaErrorInvalidDevice:
        return "invalid device ordinal (test double)";
    case cudaErrorMemoryAllocation:
        return "out of memory (test double)";
    default:
        return "CUDA error (test double)";
    }
}

EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void)
{
    return last_error;
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    for (;;) {
        progress_all();
        bool idle = true;
        for (struct CUstream_st *s = streams; s; s = s->next_stream)
            idle = idle && !s->head;
        if (idle)
            return cudaSuccess;
        nap();
    }
}

/* ---- memory ---- */

/* Device allocations carry their size in front, so that cudaMemGetInfo can answer what is in use. */
#define DEVICE_TOTAL (80ULL << 30)
#define ALLOC_HEADER 64
static uint64_t device_used;

EXPORT cudaError_t cudaMalloc(void **p, size_t bytes)
{
    unsigned char *m = calloc(1, ALLOC_HEADER + (bytes ? bytes : 1));
    if (!m) {
        *p = NULL;
        return last_error = cudaErrorMemoryAllocation;
    }
    memcpy(m, &bytes, sizeof bytes);
    device_used += bytes;
    *p = m + ALLOC_HEADER;
    return cudaSuccess;
}

EXPORT cudaError_t cudaFree(void *p)
{
    if (!p)
        return cudaSuccess;
    unsigned char *m = (unsigned char *)p - ALLOC_HEADER;
    size_t bytes;
    memcpy(&bytes, m, sizeof bytes);
    device_used -= bytes;
    free(m);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    *free_bytes = (size_t)(DEVICE_TOTAL - device_used);
    *total = (size_t)DEVICE_TOTAL;
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    *p = calloc(1, bytes ? bytes : 1);
    return *p ? cudaSuccess : (last_error = cudaErrorMemoryAllocation);
}

EXPORT cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    (void)flags;
    return cudaMallocHost(p, bytes);
}

EXPORT cudaError_t cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}

EXPORT cudaError_t cudaHostRegister(void *p, size_t bytes, unsigned int flags)
{
    (void)p, (void)bytes, (void)flags;
    return cudaSuccess;
}

EXPORT cudaError_t cudaHostUnregister(void *p)
{
    (void)p;
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    work *o = work_new(OP_COPY);
    o->dst = dst;
    o->src = src;
    o->bytes = bytes;
    if (kind == cudaMemcpyDeviceToDevice && fault_here())
        o->value = (int)env_long("GA_DOUBLE_D2D_US", 0);
    static bool traced;
    if (kind == cudaMemcpyHostToDevice && !traced && getenv("GA_DOUBLE_TRACE")) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(stderr, "[gpu-double] rank %ld: first host-to-device copy queued at %.6f\n",
                env_long("OMPI_COMM_WORLD_RANK", 0), (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
        traced = true;
    }
    enqueue(stream, o);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    (void)kind;
    memmove(dst, src, bytes);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream)
{
    work *o = work_new(OP_SET);
    o->dst = dst;
    o->value = value;
    o->bytes = bytes;
    enqueue(stream, o);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemset(void *dst, int value, size_t bytes)
{
    memset(dst, value, bytes);
    return cudaSuccess;
}

/* ---- streams and events ---- */

EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    struct CUstream_st *n = calloc(1, sizeof *n);
    if (!n)
        return cudaErrorMemoryAllocation;
    n->next_stream = streams;
    streams = n;
    *s = n;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    return cudaStreamCreateWithFlags(s, 0);
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    /* Kept on the list: a destroyed stream's pending work is abandoned, as the process ends anyway. */
    (void)s;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamQuery(cudaStream_t s)
{
    progress_all();
    return stream_of(s)->head ? cudaErrorNotReady : cudaSuccess;
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    while (cudaStreamQuery(s) == cudaErrorNotReady)
        nap();
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = calloc(1, sizeof **e);
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    (void)flags;
    return cudaEventCreate(e);
}

EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    (void)e; /* an operation may still point at it */
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    if (env_long("GA_DOUBLE_EVENT_RECORD_FAIL", 0) && fault_here())
        return last_error = cudaErrorLaunchFailure;
    e->pending = true;
    work *o = work_new(OP_EVENT);
    o->event = e;
    enqueue(s, o);
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    for (progress_all(); e->pending; progress_all())
        nap();
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    progress_all();
    return e->pending ? cudaErrorNotReady : cudaSuccess;
}

EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (start->pending || end->pending)
        return cudaErrorNotReady;
    *ms = (float)((end->t - start->t) * 1e3);
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    (void)flags;
    work *o = work_new(OP_WAIT_EVENT);
    o->event = e;
    enqueue(s, o);
    return cudaSuccess;
}

/* ---- kernels: registration, launch, host stand-ins ---- */

/* The stand-ins, by the kernel's mangled name (length-prefixed, so "check_kernel" is not "checksum_kernel").
 * Each reads the launch arguments of the kernel it replaces: a change of that kernel's signature must be
 * made here too (the tests that use it then fail until it is). */
static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* gemm_flops checksum_kernel(const void *c, size_t elem_size, size_t count, unsigned long long *sum) */
static void k_checksum(const uint64_t *w, dim3 grid)
{
    (void)grid;
    *(unsigned long long *)(uintptr_t)w[3] += hash_bytes((const unsigned char *)(uintptr_t)w[0], w[1] * w[2]);
}

/* gemm_flops check_kernel(a, b, c, int d, int64_t m, int64_t k, rows, cols, double *out): one block per
 * sampled element; reports agreement (reference 1, norm 1, value 1): the double proves orchestration, not
 * arithmetic. */
static void k_check(const uint64_t *w, dim3 grid)
{
    double *out = (double *)(uintptr_t)w[8];
    for (unsigned s = 0; s < grid.x; s++)
        out[3 * s] = out[3 * s + 1] = out[3 * s + 2] = 1.0;
}

static double word_double(uint64_t w)
{
    double d;
    memcpy(&d, &w, sizeof d);
    return d;
}

/* mem_bw fill_kernel(double *p, size_t n, double v) */
static void k_fill(const uint64_t *w, dim3 grid)
{
    (void)grid;
    double *p = (double *)(uintptr_t)w[0], v = word_double(w[2]);
    for (size_t i = 0; i < w[1]; i++)
        p[i] = v;
}

/* mem_bw triad_kernel(double2 *a, const double2 *b, const double2 *c, size_t n2, double s) */
static void k_triad(const uint64_t *w, dim3 grid)
{
    (void)grid;
    double *a = (double *)(uintptr_t)w[0];
    const double *b = (const double *)(uintptr_t)w[1], *c = (const double *)(uintptr_t)w[2];
    double s = word_double(w[4]);
    for (size_t i = 0; i < 2 * w[3]; i++)
        a[i] = b[i] + s * c[i];
}

/* mem_bw verify_kernel(const double *p, size_t n, double v, unsigned long long *bad) */
static void k_verify(const uint64_t *w, dim3 grid)
{
    (void)grid;
    const double *p = (const double *)(uintptr_t)w[0];
    double v = word_double(w[2]);
    unsigned long long bad = 0;
    for (size_t i = 0; i < w[1]; i++)
        bad += p[i] != v;
    *(unsigned long long *)(uintptr_t)w[3] += bad;
}

static const struct {
    const char *name;
    void (*run)(const uint64_t *, dim3);
    int nargs;
    unsigned char size[10];
} standins[] = {
    {"15checksum_kernel", k_checksum, 4, {8, 8, 8, 8}},
    {"12check_kernel", k_check, 9, {8, 8, 8, 4, 8, 8, 8, 8, 8}},
    {"11fill_kernel", k_fill, 3, {8, 8, 8}},
    {"12triad_kernel", k_triad, 5, {8, 8, 8, 8, 8}},
    {"13verify_kernel", k_verify, 4, {8, 8, 8, 8}},
};

static struct {
    const void *host_fun;
    const char *name;
} kernels[256];
static int n_kernels;

EXPORT void **__cudaRegisterFatBinary(void *fat)
{
    static void *handle;
    handle = fat;
    return &handle;
}

EXPORT void __cudaRegisterFatBinaryEnd(void **h)
{
    (void)h;
}

EXPORT void __cudaUnregisterFatBinary(void **h)
{
    (void)h;
}

EXPORT void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun, const char *device_name,
                                   int thread_limit, uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim,
                                   int *wsize)
{
    (void)h, (void)device_name, (void)thread_limit, (void)tid, (void)bid, (void)bdim, (void)gdim, (void)wsize;
    if (n_kernels < (int)(sizeof kernels / sizeof kernels[0])) {
        kernels[n_kernels].host_fun = host_fun;
        kernels[n_kernels++].name = device_fun;
    }
}

EXPORT void __cudaRegisterVar(void **h, char *host_var, char *device_address, const char *device_name,
                              int ext, size_t size, int constant, int global)
{
    (void)h, (void)host_var, (void)device_address, (void)device_name, (void)ext, (void)size, (void)constant,
        (void)global;
}

static _Thread_local struct {
    dim3 grid, block;
    size_t shmem;
    void *stream;
} launch_cfg;

EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, void *stream)
{
    launch_cfg.grid = grid;
    launch_cfg.block = block;
    launch_cfg.shmem = shmem;
    launch_cfg.stream = stream;
    return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, void *stream)
{
    *grid = launch_cfg.grid;
    *block = launch_cfg.block;
    *shmem = launch_cfg.shmem;
    *(void **)stream = launch_cfg.stream;
    return cudaSuccess;
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *host_fun)
{
    *k = (cudaKernel_t)(uintptr_t)host_fun;
    return cudaSuccess;
}

static cudaError_t launch(const void *host_fun, dim3 grid, void **args, cudaStream_t stream)
{
    const char *name = NULL;
    for (int i = 0; i < n_kernels && !name; i++)
        if (kernels[i].host_fun == host_fun)
            name = kernels[i].name;
    work *o = work_new(OP_KERNEL);
    o->grid = grid;
    for (size_t s = 0; name && s < sizeof standins / sizeof standins[0]; s++) {
        if (!strstr(name, standins[s].name))
            continue;
        o->kernel = standins[s].run;
        for (int a = 0; a < standins[s].nargs; a++)
            memcpy(&o->words[a], args[a], standins[s].size[a]);
        break;
    }
    enqueue(stream, o);
    return cudaSuccess;
}

EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                                      cudaStream_t stream)
{
    (void)block, (void)shmem;
    return launch((const void *)kernel, grid, args, stream);
}

EXPORT cudaError_t cudaLaunchKernel(const void *fun, dim3 grid, dim3 block, void **args, size_t shmem,
                                    cudaStream_t stream)
{
    (void)block, (void)shmem;
    return launch(fun, grid, args, stream);
}

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
static bool coll_progress(coll_op *o)
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

static bool in_group;
static coll_op *group_op;

/* Numbers the collective and decides its faults: at the call, or at each launch of a graph that holds it. */
static void coll_issue(coll_op *o)
{
    struct ncclComm *c = o->comm;
    long call = ++c->calls[o->kind];
    o->seq = ++c->issued;
    counts.issued++;
    o->posted = false;
    o->never = fault_matches("GA_DOUBLE_NCCL_HANG", coll_names[o->kind], call);
    if (fault_matches("GA_DOUBLE_NCCL_ASYNC_ERROR", coll_names[o->kind], call)) {
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
        counts.default_stream_colls++;
    counts.colls++;
    if (((uintptr_t)o->in | (uintptr_t)o->out) % 16)
        counts.unaligned_colls++;
    if (!stream_of(stream)->capturing) /* a captured collective is numbered at each launch */
        coll_issue(o);
    work *q = work_new(OP_COLL);
    q->coll = o;
    enqueue(stream, q);
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
             (long)(now_s() * 1e6));
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
    c->slot_bytes = (size_t)env_long("GA_DOUBLE_SLOT_BYTES", 1 << 20);
    c->map_bytes = sizeof(shm_header) + (size_t)nranks * c->slot_bytes;
    bool blocking = !config || config->blocking;
    c->nonblocking = !blocking;
    if (getenv("GA_DOUBLE_TRACE"))
        fprintf(stderr, "[gpu-double] ncclCommInitRankConfig rank %d of %d CTAPolicy %d\n", rank, nranks,
                config ? config->CTAPolicy : NCCL_CONFIG_UNDEF_INT);
    c->comm_bytes = (uint64_t)env_long("GA_DOUBLE_COMM_BYTES", 64L << 20);
    device_used += c->comm_bytes;
    if (env_long("GA_DOUBLE_NCCL_INIT_HANG", 0) && fault_here()) {
        /* Never joins: a blocking init never returns; a non-blocking one stays in progress. */
        if (blocking)
            for (;;)
                nap();
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
        nap();
    double_nccl_log_comm(id.internal, c, rank, nranks); /* what NCCL's debug output says (issue 25) */
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
        device_used -= comm->comm_bytes;
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

/* ---- CUDA graphs: a capture records the stream's work; each launch queues a fresh copy of it ---- */

struct CUgraph_st {
    work *head;
};
struct CUgraphExec_st {
    work *head;
};

static work *clone_list(const work *from)
{
    work *head = NULL, **at = &head;
    for (; from; from = from->next) {
        work *w = work_new(from->kind);
        *w = *from;
        w->next = NULL;
        if (from->coll) {
            w->coll = calloc(1, sizeof *w->coll);
            if (!w->coll)
                abort();
            *w->coll = *from->coll;
        }
        *at = w;
        at = &w->next;
    }
    return head;
}

static void free_list(work *w)
{
    while (w) {
        work *next = w->next;
        free(w->coll);
        free(w);
        w = next;
    }
}

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    (void)mode;
    if (fail_now(0))
        return last_error = cudaErrorStreamCaptureUnsupported;
    if (!stream) /* as CUDA: the legacy default stream cannot be captured */
        return last_error = cudaErrorStreamCaptureUnsupported;
    struct CUstream_st *s = stream_of(stream);
    if (s->capturing)
        return last_error = cudaErrorIllegalState;
    s->capturing = true;
    s->cap_head = s->cap_tail = NULL;
    counts.captures++;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    struct CUstream_st *s = stream_of(stream);
    if (!s->capturing)
        return last_error = cudaErrorIllegalState;
    s->capturing = false;
    if (fail_now(1)) {
        free_list(s->cap_head);
        s->cap_head = s->cap_tail = NULL;
        return last_error = cudaErrorStreamCaptureInvalidated;
    }
    *graph = calloc(1, sizeof **graph);
    if (!*graph)
        return last_error = cudaErrorMemoryAllocation;
    (*graph)->head = s->cap_head;
    s->cap_head = s->cap_tail = NULL;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    (void)flags;
    if (fail_now(2))
        return last_error = cudaErrorInvalidValue;
    *exec = calloc(1, sizeof **exec);
    if (!*exec)
        return last_error = cudaErrorMemoryAllocation;
    (*exec)->head = clone_list(graph->head);
    counts.instantiated++;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    if (fail_now(3))
        return last_error = cudaErrorLaunchFailure;
    counts.launches++;
    for (work *w = clone_list(exec->head), *next; w; w = next) {
        next = w->next;
        w->next = NULL;
        if (w->coll)
            coll_issue(w->coll);
        enqueue(stream, w);
    }
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    if (exec)
        free_list(exec->head);
    free(exec);
    counts.execs_destroyed++;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (graph)
        free_list(graph->head);
    free(graph);
    counts.graphs_destroyed++;
    return cudaSuccess;
}

/* ---- NCCL buffer registration and allocation: recorded, nothing else ---- */

EXPORT ncclResult_t ncclMemAlloc(void **p, size_t bytes)
{
    if (fail_now(6))
        return ncclSystemError;
    counts.mem_allocs++;
    return cudaMalloc(p, bytes) == cudaSuccess ? ncclSuccess : ncclSystemError;
}

EXPORT ncclResult_t ncclMemFree(void *p)
{
    counts.mem_frees++;
    cudaFree(p);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    (void)buff;
    (void)size;
    if (fail_now(4)) {
        snprintf(comm->last_error, sizeof comm->last_error, "test double: ncclCommRegister failed");
        return ncclUnhandledCudaError;
    }
    counts.registered++;
    *handle = (void *)(uintptr_t)counts.registered;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    (void)comm;
    if (!handle)
        return ncclInvalidArgument;
    counts.deregistered++;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                           int flags)
{
    (void)buff;
    (void)size;
    if (fail_now(5) || flags != NCCL_WIN_COLL_SYMMETRIC) {
        snprintf(comm->last_error, sizeof comm->last_error, "test double: ncclCommWindowRegister failed");
        return ncclUnhandledCudaError;
    }
    counts.windows++;
    *win = (ncclWindow_t)(uintptr_t)counts.windows;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    (void)comm;
    if (!win)
        return ncclInvalidArgument;
    counts.windows_freed++;
    return ncclSuccess;
}

__attribute__((destructor)) static void print_counts(void)
{
    if (!getenv("GA_DOUBLE_TRACE"))
        return;
    fprintf(
        stderr,
        "[gpu-double] rank %ld: captures %ld instantiated %ld launches %ld execs_destroyed %ld "
        "graphs_destroyed %ld registered %ld deregistered %ld windows %ld windows_freed %ld mem_allocs %ld "
        "mem_frees %ld default_stream_colls %ld colls %ld unaligned_colls %ld issued %ld\n",
        env_long("OMPI_COMM_WORLD_RANK", 0), counts.captures, counts.instantiated, counts.launches,
        counts.execs_destroyed, counts.graphs_destroyed, counts.registered, counts.deregistered,
        counts.windows, counts.windows_freed, counts.mem_allocs, counts.mem_frees,
        counts.default_stream_colls, counts.colls, counts.unaligned_colls, counts.issued);
}

/* ---- cuBLASLt ---- */

typedef struct {
    cudaDataType type;
    uint64_t rows, cols;
    int64_t ld;
} lt_layout;

typedef struct {
    int32_t fast_accum;
} lt_desc;

static long gemm_calls;

EXPORT size_t cublasLtGetVersion(void)
{
    return CUBLAS_VERSION;
}

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    static int handle;
    if (env_long("GA_DOUBLE_LT_CREATE_FAIL", 0) && fault_here())
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *h = (cublasLtHandle_t)&handle;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    (void)h;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                               cudaDataType_t scale)
{
    (void)compute, (void)scale;
    *d = calloc(1, sizeof(lt_desc));
    return *d ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                                     const void *buf, size_t size)
{
    if (a == CUBLASLT_MATMUL_DESC_FAST_ACCUM) {
        if (size != sizeof(int8_t) && size != sizeof(int32_t))
            return CUBLAS_STATUS_INVALID_VALUE;
        ((lt_desc *)d)->fast_accum = size == 1 ? *(const int8_t *)buf : *(const int32_t *)buf;
    }
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                                     void *buf, size_t size, size_t *written)
{
    if (a != CUBLASLT_MATMUL_DESC_FAST_ACCUM || !buf || size < sizeof(int8_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    /* cuBLASLt stores FAST_ACCUM as int8_t */
    *(int8_t *)buf = (int8_t)((lt_desc *)d)->fast_accum;
    if (written)
        *written = sizeof(int8_t);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows,
                                                 uint64_t cols, int64_t ld)
{
    lt_layout *x = calloc(1, sizeof *x);
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *x = (lt_layout){type, rows, cols, ld};
    *l = (cublasLtMatrixLayout_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    static int pref;
    *p = (cublasLtMatmulPreference_t)&pref;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    (void)p;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                           cublasLtMatmulPreferenceAttributes_t a,
                                                           const void *buf, size_t size)
{
    (void)p, (void)a, (void)buf, (void)size;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                                     cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                     cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dl,
                                                     cublasLtMatmulPreference_t p, int requested,
                                                     cublasLtMatmulHeuristicResult_t *results, int *found)
{
    (void)h, (void)d, (void)a, (void)b, (void)c, (void)dl, (void)p;
    if (requested < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(results, 0, sizeof *results);
    *found = 1;
    return CUBLAS_STATUS_SUCCESS;
}

static size_t cuda_type_size(cudaDataType t)
{
    switch (t) {
    case CUDA_R_64F:
        return 8;
    case CUDA_R_32F:
    case CUDA_R_32I:
        return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF:
        return 2;
    default:
        return 1;
    }
}

/* The GEMM: a pattern that depends on nothing but the shape (identical on every rank), optionally with one
 * bit flipped, after GA_DOUBLE_GEMM_US of spinning (so that rates are finite and batches short). */
static void k_gemm(const uint64_t *w, dim3 grid)
{
    (void)grid;
    unsigned char *c = (unsigned char *)(uintptr_t)w[0];
    size_t bytes = w[1];
    double until = now_s() + (double)w[3] * 1e-6;
    for (size_t i = 0; i < bytes; i++)
        c[i] = (unsigned char)(i * 131u + 7u);
    if (w[2])
        c[bytes / 2] ^= 0x10;
    while (now_s() < until)
        ;
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                                     const void *A, cublasLtMatrixLayout_t la, const void *B,
                                     cublasLtMatrixLayout_t lb, const void *beta, const void *C,
                                     cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
                                     const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsbytes,
                                     cudaStream_t stream)
{
    (void)h, (void)d, (void)alpha, (void)A, (void)la, (void)B, (void)lb, (void)beta, (void)C, (void)lc,
        (void)algo, (void)ws, (void)wsbytes;
    long call = ++gemm_calls;
    long fail = env_long("GA_DOUBLE_GEMM_FAIL", 0);
    if (fail > 0 && call >= fail && fault_here())
        return CUBLAS_STATUS_EXECUTION_FAILED;
    const lt_layout *out = (const lt_layout *)ld;
    work *o = work_new(OP_GEMM);
    o->kernel = k_gemm;
    o->words[0] = (uintptr_t)D;
    o->words[1] = (uint64_t)out->ld * out->cols * cuda_type_size(out->type);
    o->words[2] = env_long("GA_DOUBLE_GEMM_CORRUPT", 0) == call && fault_here();
    o->words[3] = (uint64_t)env_long(call == 1 ? "GA_DOUBLE_GEMM_FIRST_US" : "GA_DOUBLE_GEMM_US", 20);
    enqueue(stream, o);
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- cuBLAS (ddp_smoke's GEMMs): accepted and not computed; its tests exercise communication only ---- */

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    static int handle;
    *h = (cublasHandle_t)&handle;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    (void)h;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    (void)h, (void)s;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT const char *cublasGetStatusString(cublasStatus_t s)
{
    return s == CUBLAS_STATUS_SUCCESS ? "success (test double)" : "cuBLAS error (test double)";
}

EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    *value = type == MAJOR_VERSION   ? CUBLAS_VER_MAJOR
             : type == MINOR_VERSION ? CUBLAS_VER_MINOR
                                     : CUBLAS_VER_PATCH;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                     int n, int k, const float *alpha, const float *A, int lda,
                                     const float *B, int ldb, const float *beta, float *C, int ldc)
{
    (void)h, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda, (void)B,
        (void)ldb, (void)beta, (void)C, (void)ldc;
    return CUBLAS_STATUS_SUCCESS;
}
