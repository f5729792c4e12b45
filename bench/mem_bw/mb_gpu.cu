/* GPU path: device memory bandwidth (cudaMemcpy device-to-device, counted read + write; a triad kernel,
 * counted 2 reads + 1 write) and host link bandwidth (H2D and D2H from pinned memory bound to the GPU's own
 * NUMA node with hwloc, then registered with CUDA). Each repetition is timed with CUDA events. */
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mb_backend.h takes the node communicator: MPI's C API, included before the extern "C" block (mpi.h has its
 * own guards) and without Open MPI's C++ bindings. */
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

extern "C" {
#include "ga_deadline.h" /* ga_phase */
#include "ga_exit.h"
#include "ga_log.h"
#include "ga_topo.h"
#include "mb_backend.h"
#include "mb_link.h"
#include "mb_triad.h"
#include "ga_host.h"
}

namespace
{

__global__ void fill_kernel(double *p, size_t n, double v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

/* a = b + s*c with 16-byte accesses. */
__global__ void triad_kernel(double2 *a, const double2 *b, const double2 *c, size_t n2, double s)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n2;
         i += (size_t)gridDim.x * blockDim.x) {
        double2 x = b[i], y = c[i];
        a[i] = make_double2(mb_triad_elem(x.x, y.x, s), mb_triad_elem(x.y, y.y, s));
    }
}

/* --triad-kernel restrict: the same loop, with read-only loads and streaming (evict-first) stores. */
__global__ void triad_restrict_kernel(double2 *__restrict__ a, const double2 *__restrict__ b,
                                      const double2 *__restrict__ c, size_t n2, double s)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n2;
         i += (size_t)gridDim.x * blockDim.x) {
        double2 x = __ldg(b + i), y = __ldg(c + i);
        __stcs(a + i, make_double2(mb_triad_elem(x.x, y.x, s), mb_triad_elem(x.y, y.y, s)));
    }
}

/* --triad-kernel flat: one block per MB_FLAT_CHUNK double2 (mb_flat_blocks), no loop; each thread issues all
 * its loads before its first store, as torch's vectorized elementwise kernel does, so that more reads are in
 * flight. The last block stops at n2. Launched with MB_FLAT_THREADS threads per block. */
__global__ void __launch_bounds__(MB_FLAT_THREADS)
    triad_flat_kernel(double2 *__restrict__ a, const double2 *__restrict__ b, const double2 *__restrict__ c,
                      size_t n2, double s)
{
    double2 x[MB_FLAT_PER_THREAD], y[MB_FLAT_PER_THREAD];
#pragma unroll
    for (unsigned k = 0; k < MB_FLAT_PER_THREAD; k++) {
        size_t i = mb_flat_index(blockIdx.x, threadIdx.x, k);
        x[k] = i < n2 ? __ldg(b + i) : make_double2(0, 0);
        y[k] = i < n2 ? __ldg(c + i) : make_double2(0, 0);
    }
#pragma unroll
    for (unsigned k = 0; k < MB_FLAT_PER_THREAD; k++) {
        size_t i = mb_flat_index(blockIdx.x, threadIdx.x, k);
        if (i < n2)
            __stcs(a + i, make_double2(mb_triad_elem(x[k].x, y[k].x, s), mb_triad_elem(x[k].y, y[k].y, s)));
    }
}

/* Counts elements of p that differ from v. */
__global__ void verify_kernel(const double *p, size_t n, double v, unsigned long long *bad)
{
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        local += p[i] != v;
    if (local)
        atomicAdd(bad, local);
}

enum op_kind { OP_COPY, OP_TRIAD, OP_H2D, OP_D2H };

struct bufs {
    double *d_a, *d_b, *d_c; /* device arrays of n doubles */
    size_t n;
    void *h; /* pinned host buffer */
    size_t hbytes;
    bool h_bound, h_registered;
    cudaStream_t s;
    int sms;
    int triad;     /* mb_triad_kernel: --triad-kernel */
    mb_link *link; /* NVML's view of the PCIe link, sampled while the host-link copies run */
    mb_record *rec;
};

/* The triad with the kernel --triad-kernel names. */
cudaError_t launch_triad(const bufs *b)
{
    double2 *a = (double2 *)b->d_a;
    const double2 *x = (const double2 *)b->d_b, *y = (const double2 *)b->d_c;
    size_t n2 = b->n / 2;
    switch (b->triad) {
    case MB_TRIAD_RESTRICT:
        triad_restrict_kernel<<<b->sms * 8, 256, 0, b->s>>>(a, x, y, n2, MB_TRIAD_SCALAR);
        break;
    case MB_TRIAD_FLAT:
        triad_flat_kernel<<<(unsigned)mb_flat_blocks(n2), MB_FLAT_THREADS, 0, b->s>>>(a, x, y, n2,
                                                                                      MB_TRIAD_SCALAR);
        break;
    default:
        triad_kernel<<<b->sms * 8, 256, 0, b->s>>>(a, x, y, n2, MB_TRIAD_SCALAR);
        break;
    }
    return cudaGetLastError();
}

cudaError_t issue(const bufs *b, op_kind op)
{
    switch (op) {
    case OP_COPY:
        return cudaMemcpyAsync(b->d_a, b->d_b, b->n * sizeof(double), cudaMemcpyDeviceToDevice, b->s);
    case OP_TRIAD:
        return launch_triad(b);
    case OP_H2D:
        return cudaMemcpyAsync(b->d_a, b->h, b->hbytes, cudaMemcpyHostToDevice, b->s);
    default:
        return cudaMemcpyAsync(b->h, b->d_a, b->hbytes, cudaMemcpyDeviceToHost, b->s);
    }
}

/* Times reps repetitions of op after one untimed; fills x. 0, or -1 with the reason in x->note. */
int time_op(const bufs *b, op_kind op, int reps, double bytes, mb_result *x)
{
    double *times = (double *)calloc((size_t)reps, sizeof *times);
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaError_t e = times ? cudaEventCreate(&e0) : cudaErrorMemoryAllocation;
    if (e == cudaSuccess)
        e = cudaEventCreate(&e1);
    if (e == cudaSuccess)
        e = issue(b, op);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(b->s);
    for (int r = 0; r < reps && e == cudaSuccess; r++) {
        e = cudaEventRecord(e0, b->s);
        if (e == cudaSuccess)
            e = issue(b, op);
        if (e == cudaSuccess && (op == OP_H2D || op == OP_D2H))
            mb_link_sample(b->link, b->rec); /* the copy is in flight: the link is at its trained speed */
        if (e == cudaSuccess)
            e = cudaEventRecord(e1, b->s);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(e1);
        float ms = 0;
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&ms, e0, e1);
        times[r] = ms / 1e3;
    }
    if (e != cudaSuccess)
        (void)cudaStreamSynchronize(b->s); /* nothing queued may outlive the events or the buffers */
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (e != cudaSuccess) {
        x->state = MB_FAILED;
        snprintf(x->note, sizeof x->note, "%s", cudaGetErrorString(e));
        free(times);
        return -1;
    }
    mb_fill_result(x, bytes, times, reps);
    free(times);
    return 0;
}

/* The device array p holds v everywhere. */
bool verify(const bufs *b, const double *p, size_t n, double v)
{
    unsigned long long *d_bad = NULL, bad = 1;
    if (cudaMalloc((void **)&d_bad, sizeof *d_bad) != cudaSuccess)
        return false;
    if (cudaMemsetAsync(d_bad, 0, sizeof *d_bad, b->s) != cudaSuccess) {
        cudaFree(d_bad);
        return false;
    }
    verify_kernel<<<b->sms * 4, 256, 0, b->s>>>(p, n, v, d_bad);
    /* A kernel that did not launch (no image for this GPU) leaves the count at 0: that is no pass. */
    if (cudaGetLastError() != cudaSuccess || cudaStreamSynchronize(b->s) != cudaSuccess ||
        cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost))
        bad = 1;
    cudaFree(d_bad);
    return bad == 0;
}

void free_bufs(bufs *b)
{
    cudaFree(b->d_a);
    cudaFree(b->d_b);
    cudaFree(b->d_c);
    if (b->h_registered)
        cudaHostUnregister(b->h);
    if (b->h_bound || b->h_registered)
        ga_host_free(b->h, b->hbytes, b->h_bound);
    else if (b->h)
        cudaFreeHost(b->h);
    if (b->s)
        cudaStreamDestroy(b->s);
    mb_link_close(b->link);
    b->link = NULL;
}

/* The GPU's PCIe link as hwloc reads it (GB/s), 0 when unknown. */
double link_GBps(const char *pci_bus_id)
{
    hwloc_topology_t t = ga_topo_get();
    hwloc_obj_t o = t ? hwloc_get_pcidev_by_busidstring(t, pci_bus_id) : NULL;
    return o ? o->attr->pcidev.linkspeed : 0;
}

/* The node barriers before the host-link tests: every rank of the node passes both, in order, on every path
 * (a rank that failed early passes them on its way out), so that no rank waits for one that left. */
struct node_sync {
    MPI_Comm comm;
    int passed;
    int device;
};

void sync_to(node_sync *ns, int n, const char *what)
{
    for (; ns->passed < n; ns->passed++) {
        ga_phase("node barrier before %s on GPU %d", what, ns->device);
        /* (ga_fatal.h is C-only; MPI's default error handler would end the job before this anyway) */
        if (MPI_Barrier(ns->comm) != MPI_SUCCESS) {
            fprintf(stderr, "[FATAL] MPI_Barrier before %s on GPU %d failed\n", what, ns->device);
            MPI_Abort(MPI_COMM_WORLD, GA_EXIT_INTERNAL);
        }
    }
}

int fail(node_sync *ns, bufs *b)
{
    sync_to(ns, 2, "leaving");
    free_bufs(b);
    return -1;
}

/* The buffers, sized and filled: 0, or what mb_gpu_measure returns, with err said (the node's barriers
 * passed by fail()). */
int setup_bufs(const mb_opts *o, node_sync *ns, mb_record *r, bufs *b, char *err, size_t errlen)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&b->sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess || b->sms <= 0) {
        snprintf(err, errlen, "SM count of GPU %d: %s", dev, cudaGetErrorString(e));
        return fail(ns, b);
    }
    /* Large enough that the 50 MB L2 of Hopper is no help; twice that with --quick is still far beyond it. */
    b->n = (o->size ? o->size : (uint64_t)1 << 30) / sizeof(double) / 2 * 2;
    b->hbytes = o->pinned_size ? o->pinned_size : (size_t)256 << 20;
    if (b->hbytes > b->n * sizeof(double))
        b->hbytes = b->n * sizeof(double); /* H2D lands in a device array */
    r->buffer_bytes = (double)(b->n * sizeof(double));
    r->pinned_bytes = (double)b->hbytes;
    r->numa_node = ga_topo_numa_of_pci(ga_topo_get(), r->hdr.device_pci_bus_id);
    r->pcie_link_GBps = link_GBps(r->hdr.device_pci_bus_id);
    b->rec = r;
    b->link = mb_link_open(r->hdr.device_pci_bus_id, r);

    e = cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&b->d_a, b->n * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&b->d_b, b->n * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&b->d_c, b->n * sizeof(double));
    if (e != cudaSuccess) {
        /* out of device memory is exit 5 on every rank, as on the host path (main.c agrees on it) */
        bool oom = e == cudaErrorMemoryAllocation;
        snprintf(err, errlen, "device buffers of 3 x %zu bytes: %s", b->n * sizeof(double),
                 oom ? "out of memory" : cudaGetErrorString(e));
        int rc = fail(ns, b);
        return oom ? MB_OUT_OF_MEMORY : rc;
    }
    /* Pinned memory on the GPU's NUMA node: bound with hwloc, then registered; plain cudaHostAlloc when the
     * node is unknown or the binding fails (the report says which). */
    b->h = ga_host_alloc_on_numa(b->hbytes, r->numa_node, &b->h_bound);
    if (b->h && cudaHostRegister(b->h, b->hbytes, cudaHostRegisterDefault) == cudaSuccess) {
        b->h_registered = true;
    } else {
        (void)cudaGetLastError(); /* a failed cudaHostRegister must not fail the triad's launch check */
        ga_host_free(b->h, b->hbytes, b->h_bound);
        b->h = NULL;
        b->h_bound = false;
        if (cudaHostAlloc(&b->h, b->hbytes, cudaHostAllocDefault) != cudaSuccess) {
            snprintf(err, errlen, "cannot allocate %zu bytes of pinned host memory", b->hbytes);
            b->h = NULL;
            return fail(ns, b);
        }
    }
    r->numa_bound = b->h_bound;
    memset(b->h, 0x5a, b->hbytes);

    fill_kernel<<<b->sms * 4, 256, 0, b->s>>>(b->d_a, b->n, 0.0);
    fill_kernel<<<b->sms * 4, 256, 0, b->s>>>(b->d_b, b->n, 1.0);
    fill_kernel<<<b->sms * 4, 256, 0, b->s>>>(b->d_c, b->n, 2.0);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(b->s);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "fill kernel: %s", cudaGetErrorString(e));
        return fail(ns, b);
    }
    return 0;
}

/* The GPU's own memory: copy and triad. */
void measure_device(const mb_opts *o, bufs *b, mb_record *r)
{
    double sz = (double)(b->n * sizeof(double));
    mb_result x; /* each measurement; r->t keeps them all (mb_result_add) */
    if (mb_wants(o, MB_DEVICE_COPY)) {
        ga_phase("device copy on GPU %d", r->hdr.device_index);
        memset(&x, 0, sizeof x);
        if (time_op(b, OP_COPY, o->reps, 2 * sz, &x) == 0)
            x.check_ok = verify(b, b->d_a, b->n, 1.0);
        mb_result_add(&r->t[MB_DEVICE_COPY], &x);
    }
    if (mb_wants(o, MB_DEVICE_RW)) {
        ga_phase("device triad on GPU %d", r->hdr.device_index);
        b->triad = o->triad_kernel;
        r->triad_kernel = o->triad_kernel;
        ga_debug("COMPUTE", "triad kernel on GPU %d: %s", r->hdr.device_index,
                 mb_triad_kernel_name(o->triad_kernel));
        memset(&x, 0, sizeof x);
        if (time_op(b, OP_TRIAD, o->reps, 3 * sz, &x) == 0)
            x.check_ok = verify(b, b->d_a, b->n, mb_triad_elem(1.0, 2.0, MB_TRIAD_SCALAR));
        mb_result_add(&r->t[MB_DEVICE_RW], &x);
    }
}

/* The GPUs of a node share the host's memory and PCIe switches: their host-link tests start together, so
 * that each figure is what a GPU gets with its neighbours busy, as in training, whatever the device tests
 * took on each. Every rank of the node passes both barriers, whatever tests it measures (the same on
 * every rank: a remeasurement's tests are rank 0's decision). */
void measure_host_link(const mb_opts *o, node_sync *ns, bufs *b, mb_record *r)
{
    mb_result x; /* each measurement; r->t keeps them all (mb_result_add) */
    cudaError_t e = cudaSuccess;
    sync_to(ns, 1, "host-to-device");
    if (mb_wants(o, MB_H2D)) {
        ga_phase("host-to-device on GPU %d", r->hdr.device_index);
        memset(&x, 0, sizeof x);
        if (time_op(b, OP_H2D, o->reps, (double)b->hbytes, &x) == 0) {
            unsigned char probe[64];
            cudaMemcpy(probe, b->d_a, sizeof probe, cudaMemcpyDeviceToHost);
            x.check_ok = probe[0] == 0x5a && probe[63] == 0x5a;
        }
        mb_result_add(&r->t[MB_H2D], &x);
    }
    if (mb_wants(o, MB_D2H)) {
        fill_kernel<<<b->sms * 4, 256, 0, b->s>>>(b->d_a, b->hbytes / sizeof(double), 4.0);
        e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(b->s);
    }
    sync_to(ns, 2, "device-to-host");
    if (mb_wants(o, MB_D2H)) {
        ga_phase("device-to-host on GPU %d", r->hdr.device_index);
        memset(&x, 0, sizeof x);
        if (e != cudaSuccess) {
            x.state = MB_FAILED;
            snprintf(x.note, sizeof x.note, "fill kernel: %s", cudaGetErrorString(e));
        } else if (time_op(b, OP_D2H, o->reps, (double)b->hbytes, &x) == 0) {
            const double *h = (const double *)b->h;
            size_t last = b->hbytes / sizeof(double) - 1;
            x.check_ok = h[0] == 4.0 && h[last] == 4.0;
        }
        mb_result_add(&r->t[MB_D2H], &x);
    }
}

} // namespace

extern "C" int mb_gpu_measure(const mb_opts *o, MPI_Comm node_comm, mb_record *r, char *err, size_t errlen)
{
    bufs b;
    memset(&b, 0, sizeof b);
    node_sync ns = {node_comm, 0, r->hdr.device_index};
    int rc = setup_bufs(o, &ns, r, &b, err, errlen);
    if (rc != 0)
        return rc;
    measure_device(o, &b, r);
    measure_host_link(o, &ns, &b, r);
    free_bufs(&b);
    return 0;
}
