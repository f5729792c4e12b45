#include "ga_gpu.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_pci.h"

#if GA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static ga_gpu_info selected;
static bool have_selected;

const ga_gpu_info *ga_gpu_selected(void)
{
    return have_selected ? &selected : NULL;
}

static bool order_by_user;

void ga_gpu_set_device_order(void)
{
    const char *v = getenv("CUDA_DEVICE_ORDER");
    order_by_user = v && *v;
    if (!order_by_user)
        setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
}

const char *ga_gpu_device_order(bool *set_by_user)
{
    const char *v = getenv("CUDA_DEVICE_ORDER");
    if (set_by_user)
        *set_by_user = order_by_user;
    return v && *v ? v : "FASTEST_FIRST";
}

int ga_gpu_node_index(int ordinal, int visible, const char *cuda_visible, const char *nvidia_visible,
                      const char *device_order)
{
    bool all_visible =
        !cuda_visible && (!nvidia_visible || strcmp(nvidia_visible, "all") == 0) && visible > 1;
    if (ordinal < 0 || !all_visible || !device_order || strcmp(device_order, "PCI_BUS_ID") != 0)
        return -1;
    return ordinal;
}

int ga_gpu_pick_index(int local_rank, int local_size, int visible, char *err, size_t errlen)
{
    if (visible <= 0) {
        snprintf(err, errlen, "no GPU visible");
        return -1;
    }
    /* One visible device: the launcher bound this rank to it (--gpu-bind, CUDA_VISIBLE_DEVICES per rank). */
    if (visible == 1)
        return 0;
    if (local_rank < visible && local_size <= visible)
        return local_rank;
    snprintf(
        err, errlen,
        "%d ranks on this node but only %d GPUs visible to each: start at most %d ranks per node, or bind "
        "one GPU per rank",
        local_size, visible, visible);
    return -1;
}

#if GA_HAVE_CUDA

int ga_gpu_count(char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "CUDA reports no usable GPU: %s", cudaGetErrorString(e));
        return 0;
    }
    if (n == 0)
        snprintf(why, whylen, "no CUDA device visible (CUDA_VISIBLE_DEVICES=%s)",
                 getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    return n;
}

int ga_gpu_query(int index, ga_gpu_info *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, index);
    if (e == cudaSuccess)
        e = cudaDeviceGetPCIBusId(out->pci_bus_id, sizeof out->pci_bus_id, index);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "GPU %d: %s", index, cudaGetErrorString(e));
        return -1;
    }
    out->index = index;
    int visible = 0;
    if (cudaGetDeviceCount(&visible) != cudaSuccess)
        visible = 0;
    out->node_index = ga_gpu_node_index(index, visible, getenv("CUDA_VISIBLE_DEVICES"),
                                        getenv("NVIDIA_VISIBLE_DEVICES"), ga_gpu_device_order(NULL));
    /* CUDA writes "0000:1B:00.0", NVML "00000000:1B:00.0": one form, so both name one GPU. */
    char raw[sizeof out->pci_bus_id];
    snprintf(raw, sizeof raw, "%s", out->pci_bus_id);
    if (ga_pci_normalise(raw, out->pci_bus_id, sizeof out->pci_bus_id) != 0)
        snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%s", raw);
    snprintf(out->name, sizeof out->name, "%s", p.name);
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    snprintf(out->uuid, sizeof out->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    out->memory_gib = (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0);
    out->sm_count = p.multiProcessorCount;
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    return 0;
}

int ga_cuda_driver_version(char *why, size_t whylen)
{
    int v = 0;
    cudaError_t e = cudaDriverGetVersion(&v);
    if (e != cudaSuccess || v == 0)
        snprintf(why, whylen, "no NVIDIA driver: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "libcuda not loaded");
    return e == cudaSuccess ? v : 0;
}

int ga_cuda_runtime_version(char *why, size_t whylen)
{
    int v = 0;
    cudaError_t e = cudaRuntimeGetVersion(&v);
    if (e != cudaSuccess)
        snprintf(why, whylen, "%s", cudaGetErrorString(e));
    return v;
}

static int activate(int index, char *err, size_t errlen)
{
    cudaError_t e = cudaSetDevice(index);
    if (e == cudaSuccess)
        e = cudaFree(NULL); /* create the context now, so later timings do not include it */
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cannot use GPU %d: %s", index, cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

#else /* no CUDA in this build */

int ga_gpu_count(char *why, size_t whylen)
{
    snprintf(why, whylen, "built without CUDA (GPUACCEPT_CUDA=OFF or no toolkit)");
    return 0;
}

int ga_gpu_query(int index, ga_gpu_info *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(err, errlen, "GPU %d: built without CUDA", index);
    return -1;
}

int ga_cuda_driver_version(char *why, size_t whylen)
{
    snprintf(why, whylen, "built without CUDA");
    return 0;
}

int ga_cuda_runtime_version(char *why, size_t whylen)
{
    snprintf(why, whylen, "built without CUDA");
    return 0;
}

static int activate(int index, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot use GPU %d: built without CUDA", index);
    return -1;
}

#endif

ga_backend ga_backend_resolve(const ga_ctx *ctx, ga_backend requested)
{
    if (requested == GA_BACKEND_HOST)
        return GA_BACKEND_HOST;
    char why[256] = "";
    int has = ga_gpu_count(why, sizeof why) > 0;
    int lo = 0, hi = 0, mine = has ? INT_MAX : ctx->world_rank, first_without = INT_MAX;
    GA_MPI_CHECK(MPI_Allreduce(&has, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    GA_MPI_CHECK(MPI_Allreduce(&has, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    GA_MPI_CHECK(MPI_Allreduce(&mine, &first_without, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (requested == GA_BACKEND_AUTO && !hi)
        return GA_BACKEND_HOST;
    if (!lo) {
        /* One line, from the lowest rank without a GPU; the others wait for its MPI_Abort. */
        if (ctx->world_rank == first_without && requested == GA_BACKEND_GPU && !hi)
            GA_FATAL(GA_EXIT_ENV, "--backend gpu, but there is no GPU on any rank: %s", why);
        if (ctx->world_rank == first_without && requested == GA_BACKEND_GPU)
            GA_FATAL(GA_EXIT_ENV, "--backend gpu, but this rank sees no GPU: %s", why);
        if (ctx->world_rank == first_without)
            GA_FATAL(GA_EXIT_ENV,
                     "other ranks see GPUs but this one does not (%s): fix GPU visibility, or run "
                     "the host path on every rank with --backend host",
                     why);
        MPI_Barrier(MPI_COMM_WORLD); /* never completes: that rank aborts the job */
    }
    return GA_BACKEND_GPU;
}

int ga_backend_gpu_only(const ga_ctx *ctx, ga_backend requested, ga_backend resolved, const char *program,
                        const char *gpu_only)
{
    if (requested != GA_BACKEND_AUTO || resolved != GA_BACKEND_HOST || !gpu_only)
        return -1;
    char why[256] = "";
    ga_gpu_count(why, sizeof why);
    (void)ctx;
    ga_error_once(program,
                  "a GPU is needed for %s, and no rank sees one (%s); the host path runs when asked for "
                  "(--backend host) and without GPU-only options",
                  gpu_only, why);
    return GA_EXIT_ENV;
}

void ga_gpu_select(const ga_ctx *ctx, ga_gpu_info *out)
{
    ga_gpu_select_device(ctx, -1, out);
}

void ga_gpu_select_device(const ga_ctx *ctx, int device, ga_gpu_info *out)
{
    char err[256] = "";
    int visible = ga_gpu_count(err, sizeof err);
    int index =
        device >= 0 ? device : ga_gpu_pick_index(ctx->local_rank, ctx->local_size, visible, err, sizeof err);
    if (device >= visible)
        snprintf(err, sizeof err, "device %d asked for, but only %d visible", device, visible), index = -1;
    if (index < 0 || activate(index, err, sizeof err) != 0 || ga_gpu_query(index, out, err, sizeof err) != 0)
        GA_FATAL(GA_EXIT_ENV, "GPU selection: %s", err);
    selected = *out;
    have_selected = true;

    /* Two ranks on one GPU would halve every figure and hide a missing device: refuse. */
    char *uuids = malloc((size_t)ctx->local_size * sizeof out->uuid);
    if (!uuids)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ga_deadline_arm("comparing the GPUs of this node's ranks");
    GA_MPI_CHECK(MPI_Allgather(out->uuid, sizeof out->uuid, MPI_CHAR, uuids, sizeof out->uuid, MPI_CHAR,
                               ctx->node_comm));
    ga_deadline_disarm();
    for (int r = 0; r < ctx->local_size; r++) {
        if (r != ctx->local_rank && strcmp(uuids + (size_t)r * sizeof out->uuid, out->uuid) == 0)
            GA_FATAL(GA_EXIT_ENV,
                     "local ranks %d and %d both landed on GPU %s (%s): more ranks than GPUs on this "
                     "node, or a wrong --gpu-bind",
                     ctx->local_rank, r, out->uuid, out->pci_bus_id);
    }
    free(uuids);
}
