/* The double's device buffers and CUDA IPC. Each rank is a process whose "device memory" is host memory; a
 * buffer is a memfd mapped shared, so that another rank of the node can map the same pages from the handle
 * (the owner's pid and the memfd's descriptor, opened through /proc/<pid>/fd): a copy into an opened peer
 * buffer lands in the peer's buffer, as a copy over NVLink does. The faults: GA_DOUBLE_IPC_OPEN_FAIL=1 (on
 * GA_DOUBLE_FAULT_RANK) answers cudaErrorMapBufferObjectFailed, one of the errors CUDA documents for a handle
 * it cannot map; a copy into rank GA_DOUBLE_P2P_PEER's buffer takes GA_DOUBLE_P2P_US more (gd_cuda.c). */
#include "gd.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALLOC_HEADER 64
#define GD_IPC_MAGIC 0x67644950u /* "gdIP" */

/* In front of every buffer, in its own pages. */
typedef struct {
    uint64_t bytes;
    int fd;
    uint32_t magic;
} alloc_header;

/* What a handle holds (cudaIpcMemHandle_t's 64 reserved bytes). */
typedef struct {
    uint32_t magic;
    int32_t pid, fd, owner;
    uint64_t bytes;
} ipc_handle;

void *gd_shared_alloc(size_t bytes)
{
    size_t len = ALLOC_HEADER + (bytes ? bytes : 1);
    int fd = memfd_create("ga-double-device", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *m = ftruncate(fd, (off_t)len) == 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                                             : MAP_FAILED;
    if (m == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    alloc_header h = {bytes, fd, GD_IPC_MAGIC};
    memcpy(m, &h, sizeof h);
    return (unsigned char *)m + ALLOC_HEADER;
}

static alloc_header *header_of(const void *p)
{
    alloc_header *h = (alloc_header *)((unsigned char *)p - ALLOC_HEADER);
    return h->magic == GD_IPC_MAGIC ? h : NULL;
}

size_t gd_shared_free(void *p)
{
    alloc_header *h = header_of(p);
    if (!h)
        return 0;
    size_t bytes = h->bytes;
    int fd = h->fd;
    munmap(h, ALLOC_HEADER + (bytes ? bytes : 1));
    close(fd);
    return bytes;
}

/* The peers' buffers this process has opened. */
enum { MAX_OPENED = 64 };
static struct {
    unsigned char *base; /* the mapping, header included */
    size_t len;
    long owner;
} opened[MAX_OPENED];

bool gd_ipc_owner(const void *p, long *owner)
{
    const unsigned char *c = p;
    for (int i = 0; i < MAX_OPENED; i++)
        if (opened[i].base && c >= opened[i].base && c < opened[i].base + opened[i].len) {
            *owner = opened[i].owner;
            return true;
        }
    return false;
}

EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *dev_ptr)
{
    alloc_header *h = dev_ptr ? header_of(dev_ptr) : NULL;
    if (!h) /* not the start of a cudaMalloc'd buffer */
        return gd_last_error = cudaErrorInvalidValue;
    ipc_handle ih = {GD_IPC_MAGIC, (int32_t)getpid(), h->fd, (int32_t)gd_world_rank(), h->bytes};
    memset(handle, 0, sizeof *handle);
    memcpy(handle->reserved, &ih, sizeof ih);
    return cudaSuccess;
}

EXPORT cudaError_t cudaIpcOpenMemHandle(void **dev_ptr, cudaIpcMemHandle_t handle, unsigned int flags)
{
    (void)flags;
    ipc_handle ih;
    memcpy(&ih, handle.reserved, sizeof ih);
    *dev_ptr = NULL;
    if (ih.magic != GD_IPC_MAGIC || ih.pid == (int32_t)getpid()) /* CUDA maps no handle of its own process */
        return gd_last_error = cudaErrorInvalidResourceHandle;
    int slot = 0;
    while (slot < MAX_OPENED && opened[slot].base)
        slot++;
    if (slot == MAX_OPENED)
        return gd_last_error = cudaErrorTooManyPeers;
    if (gd_env_long("GA_DOUBLE_IPC_OPEN_FAIL", 0) && gd_fault_here())
        return gd_last_error = cudaErrorMapBufferObjectFailed;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)ih.pid, (int)ih.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    size_t len = ALLOC_HEADER + (ih.bytes ? ih.bytes : 1);
    void *m = fd >= 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    if (m == MAP_FAILED)
        return gd_last_error = cudaErrorMapBufferObjectFailed;
    opened[slot].base = m;
    opened[slot].len = len;
    opened[slot].owner = ih.owner;
    *dev_ptr = (unsigned char *)m + ALLOC_HEADER;
    return cudaSuccess;
}

EXPORT cudaError_t cudaIpcCloseMemHandle(void *dev_ptr)
{
    for (int i = 0; i < MAX_OPENED; i++)
        if (opened[i].base && (unsigned char *)dev_ptr == opened[i].base + ALLOC_HEADER) {
            munmap(opened[i].base, opened[i].len);
            opened[i].base = NULL;
            return cudaSuccess;
        }
    return gd_last_error = cudaErrorInvalidValue;
}
