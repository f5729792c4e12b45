/* The double's CUDA runtime: devices, memory, streams and events (the engine is gd_core.c). */
#include "gd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- CUDA runtime: devices ---- */

/* GA_DOUBLE_GPU_PER_RANK=1: each rank sees one GPU, at ordinal 0, and a different one on each rank of a node
 * (its node-local rank's), as under Slurm --gpus-per-task=1 / --gpu-bind or a CUDA_VISIBLE_DEVICES per rank:
 * the ordinal is 0 everywhere, the PCI bus id and UUID are the physical GPU's (issue 40, finding 4). */
static bool gpu_per_rank(void)
{
    return gd_env_long("GA_DOUBLE_GPU_PER_RANK", 0) != 0;
}

static int device_count(void)
{
    return gpu_per_rank() ? 1 : (int)gd_env_long("GA_DOUBLE_GPUS", 8);
}

/* GA_DOUBLE_FASTEST_FIRST_REVERSED=1: unless CUDA_DEVICE_ORDER=PCI_BUS_ID, ordinals run against PCI bus
 * order, as CUDA's default FASTEST_FIRST may number a node of like GPUs (CUDA Programming Guide, 5.2 "CUDA
 * Environment Variables"). Read once, at the first call, as the runtime reads it when it starts. */
static bool reversed_order(void)
{
    static int reversed = -1;
    if (reversed < 0) {
        const char *order = getenv("CUDA_DEVICE_ORDER");
        reversed = gd_env_long("GA_DOUBLE_FASTEST_FIRST_REVERSED", 0) != 0 &&
                   !(order && strcmp(order, "PCI_BUS_ID") == 0);
    }
    return reversed;
}

/* The physical GPU behind a visible ordinal: what the bus id and UUID are derived from. */
static int physical(int device)
{
    if (gpu_per_rank())
        return (int)gd_env_long("OMPI_COMM_WORLD_LOCAL_RANK", gd_env_long("SLURM_LOCALID", 0));
    return reversed_order() ? device_count() - 1 - device : device;
}

static int current_device;

/* Settable properties: GA_DOUBLE_GPU_NAME, GA_DOUBLE_CC ("10.0"), GA_DOUBLE_SMS, GA_DOUBLE_GPU_MEM_GIB. */
static void compute_capability(int *major, int *minor)
{
    const char *cc = getenv("GA_DOUBLE_CC");
    *major = 9;
    *minor = 0;
    if (cc && *cc && sscanf(cc, "%d.%d", major, minor) < 1)
        *major = 9;
}

static int sm_count(void)
{
    return (int)gd_env_long("GA_DOUBLE_SMS", 132);
}

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    (void)reversed_order(); /* the order is fixed when the runtime starts */
    *count = device_count();
    return cudaSuccess;
}

EXPORT cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device >= device_count())
        return gd_last_error = cudaErrorInvalidDevice;
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
    int phys = physical(device);
    memcpy(p->uuid.bytes, &h, 8);
    memcpy(p->uuid.bytes + 8, &phys, sizeof phys);
    p->pciDomainID = 0;
    p->pciBusID = 0x10 + phys;
    p->pciDeviceID = 0;
    p->totalGlobalMem = (size_t)gd_device_total();
    p->multiProcessorCount = sm_count();
    compute_capability(&p->major, &p->minor);
    return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    (void)device;
    int major, minor;
    compute_capability(&major, &minor);
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor:
        *value = major;
        break;
    case cudaDevAttrComputeCapabilityMinor:
        *value = minor;
        break;
    case cudaDevAttrMultiProcessorCount:
        *value = sm_count();
        break;
    default:
        *value = 0;
    }
    return cudaSuccess;
}

/* Upper case as the real runtime writes it ("0000:1B:00.0"); NVML writes an 8-digit domain (gd_nvml.c). */
EXPORT cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int device)
{
    if (device < 0 || device >= device_count())
        return cudaErrorInvalidDevice;
    snprintf(id, (size_t)len, "0000:%02X:00.0", 0x10 + physical(device));
    return cudaSuccess;
}

/* Peer access between two different GPUs, except to or from physical GPU GA_DOUBLE_NO_PEER_GPU (a link
 * down, ACS on its PCIe path). */
EXPORT cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    if (device < 0 || device >= device_count() || peer < 0 || peer >= device_count())
        return gd_last_error = cudaErrorInvalidDevice;
    long off = gd_env_long("GA_DOUBLE_NO_PEER_GPU", -1);
    *can = device != peer && physical(device) != off && physical(peer) != off;
    return cudaSuccess;
}

/* The visible ordinal of the GPU at a bus id ("0000:1B:00.0"), as cudaDeviceGetPCIBusId writes them. */
EXPORT cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *id)
{
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    if (!id || sscanf(id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return gd_last_error = cudaErrorInvalidValue;
    for (int d = 0; d < device_count(); d++)
        if (0x10 + physical(d) == (int)bus) {
            *device = d;
            return cudaSuccess;
        }
    return gd_last_error = cudaErrorInvalidDevice;
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
    cudaError_t e = gd_last_error;
    gd_last_error = cudaSuccess;
    return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void)
{
    return gd_last_error;
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    for (;;) {
        gd_progress_all();
        bool idle = true;
        for (struct CUstream_st *s = gd_streams; s; s = s->next_stream)
            idle = idle && !s->head;
        if (idle)
            return cudaSuccess;
        gd_nap();
    }
}

/* ---- memory ---- */

/* Device allocations carry their size in front, so that cudaMemGetInfo can answer what is in use; they are
 * shared memory (gd_ipc.c), so that another rank can open one by its IPC handle. */
uint64_t gd_device_used;

uint64_t gd_device_total(void)
{
    return (uint64_t)gd_env_long("GA_DOUBLE_GPU_MEM_GIB", 80) << 30;
}

/* Fails beyond the device's memory, as cudaMalloc does, or when the host cannot back the buffer. */
EXPORT cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = bytes <= gd_device_total() - gd_device_used ? gd_shared_alloc(bytes) : NULL;
    if (!*p)
        return gd_last_error = cudaErrorMemoryAllocation;
    gd_device_used += bytes;
    return cudaSuccess;
}

EXPORT cudaError_t cudaFree(void *p)
{
    if (p)
        gd_device_used -= gd_shared_free(p);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    *free_bytes = (size_t)(gd_device_total() - gd_device_used);
    *total = (size_t)gd_device_total();
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    *p = calloc(1, bytes ? bytes : 1);
    return *p ? cudaSuccess : (gd_last_error = cudaErrorMemoryAllocation);
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
    work *o = gd_work_new(OP_COPY);
    o->dst = dst;
    o->src = src;
    o->bytes = bytes;
    o->host_link = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost;
    if (kind == cudaMemcpyDeviceToDevice && gd_fault_here())
        o->value = (int)gd_env_long("GA_DOUBLE_D2D_US", 0);
    long owner = -1; /* a copy into a peer's buffer opened by its IPC handle: GA_DOUBLE_P2P_US to that peer */
    if (kind == cudaMemcpyDeviceToDevice && gd_fault_here() && gd_ipc_owner(dst, &owner) &&
        owner == gd_env_long("GA_DOUBLE_P2P_PEER", -1))
        o->value = (int)gd_env_long("GA_DOUBLE_P2P_US", 0);
    static bool traced;
    if (kind == cudaMemcpyHostToDevice && !traced && getenv("GA_DOUBLE_TRACE")) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(stderr, "[gpu-double] rank %ld: first host-to-device copy queued at %.6f\n",
                gd_env_long("OMPI_COMM_WORLD_RANK", 0), (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
        traced = true;
    }
    gd_enqueue(stream, o);
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
    work *o = gd_work_new(OP_SET);
    o->dst = dst;
    o->value = value;
    o->bytes = bytes;
    gd_enqueue(stream, o);
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
    n->next_stream = gd_streams;
    gd_streams = n;
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
    gd_progress_all();
    return gd_stream_of(s)->head ? cudaErrorNotReady : cudaSuccess;
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    while (cudaStreamQuery(s) == cudaErrorNotReady)
        gd_nap();
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
    if (gd_env_long("GA_DOUBLE_EVENT_RECORD_FAIL", 0) && gd_fault_here())
        return gd_last_error = cudaErrorLaunchFailure;
    e->pending = true;
    work *o = gd_work_new(OP_EVENT);
    o->event = e;
    gd_enqueue(s, o);
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    for (gd_progress_all(); e->pending; gd_progress_all())
        gd_nap();
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    gd_progress_all();
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
    work *o = gd_work_new(OP_WAIT_EVENT);
    o->event = e;
    gd_enqueue(s, o);
    return cudaSuccess;
}
