/* The double's NCCL allocator and buffer registration. ncclMemAlloc is "device" memory as cudaMalloc's, and
 * fails as NCCL's does when the device is full (ncclUnhandledCudaError, "out of memory" in ncclGetLastError).
 * Local registration (ncclCommRegister) is recorded; a symmetric window (ncclCommWindowRegister) is
 * collective, blocks until every rank has registered as many, and takes only memory from ncclMemAlloc. */
#include "gd_nccl.h"

#include <stdlib.h>

#define MAX_NCCL_ALLOCS 64
static struct {
    const char *base;
    size_t bytes;
} nccl_allocs[MAX_NCCL_ALLOCS];

static bool from_nccl_alloc(const void *p, size_t bytes)
{
    for (int i = 0; i < MAX_NCCL_ALLOCS; i++)
        if (nccl_allocs[i].base && (const char *)p >= nccl_allocs[i].base &&
            (const char *)p + bytes <= nccl_allocs[i].base + nccl_allocs[i].bytes)
            return true;
    return false;
}

EXPORT ncclResult_t ncclMemAlloc(void **p, size_t bytes)
{
    if (gd_fail_now(GD_FN_MEM_ALLOC))
        return ncclSystemError;
    if (bytes > gd_device_total() - gd_device_used) {
        gd_nccl_error(NULL, "Cuda failure 2 'out of memory' (test double: %zu bytes, %llu free)", bytes,
                      (unsigned long long)(gd_device_total() - gd_device_used));
        return ncclUnhandledCudaError;
    }
    gd_counts.mem_allocs++;
    if (cudaMalloc(p, bytes) != cudaSuccess)
        return ncclUnhandledCudaError;
    for (int i = 0; i < MAX_NCCL_ALLOCS; i++)
        if (!nccl_allocs[i].base) {
            nccl_allocs[i].base = *p;
            nccl_allocs[i].bytes = bytes;
            break;
        }
    return ncclSuccess;
}

EXPORT ncclResult_t ncclMemFree(void *p)
{
    gd_counts.mem_frees++;
    for (int i = 0; i < MAX_NCCL_ALLOCS; i++)
        if (nccl_allocs[i].base == p)
            nccl_allocs[i].base = NULL;
    cudaFree(p);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    (void)buff;
    (void)size;
    gd_comm_enter(comm, "ncclCommRegister");
    ncclResult_t r = ncclSuccess;
    if (gd_fail_now(GD_FN_COMM_REGISTER)) {
        gd_nccl_error(comm, "test double: ncclCommRegister failed");
        r = ncclUnhandledCudaError;
    } else {
        gd_counts.registered++;
        *handle = (void *)(uintptr_t)gd_counts.registered;
    }
    gd_comm_leave(comm);
    return r;
}

EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    gd_comm_enter(comm, "ncclCommDeregister");
    ncclResult_t r = handle ? ncclSuccess : ncclInvalidArgument;
    if (handle)
        gd_counts.deregistered++;
    gd_comm_leave(comm);
    return r;
}

static ncclResult_t window_register(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int flags)
{
    if (gd_fail_now(GD_FN_WINDOW_REGISTER) || flags != NCCL_WIN_COLL_SYMMETRIC) {
        gd_nccl_error(comm, "test double: ncclCommWindowRegister failed");
        return ncclUnhandledCudaError;
    }
    if (!from_nccl_alloc(buff, size)) {
        gd_nccl_error(comm, "test double: ncclCommWindowRegister of memory not from ncclMemAlloc");
        return ncclInvalidArgument;
    }
    gd_counts.windows++;
    *win = (ncclWindow_t)(uintptr_t)gd_counts.windows;
    comm->windows_wanted = atomic_fetch_add(&comm->h->windows[comm->rank], 1) + 1;
    comm->pending = PEND_WINDOW;
    if (comm->nonblocking)
        return gd_comm_pending_done(comm) ? (comm->pending = PEND_NONE, ncclSuccess) : ncclInProgress;
    while (!gd_comm_pending_done(comm))
        gd_nap();
    comm->pending = PEND_NONE;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                           int flags)
{
    gd_comm_enter(comm, "ncclCommWindowRegister");
    ncclResult_t r = window_register(comm, buff, size, win, flags);
    gd_comm_leave(comm);
    return r;
}

EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    gd_comm_enter(comm, "ncclCommWindowDeregister");
    ncclResult_t r = win ? ncclSuccess : ncclInvalidArgument;
    if (win)
        gd_counts.windows_freed++;
    gd_comm_leave(comm);
    return r;
}
