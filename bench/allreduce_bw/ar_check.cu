/* The device check's kernels: one thread per element (grid-stride), the maths of ar_elem.h, one atomic add
 * per thread that found a wrong element. HBM-bound: the fill writes the input once, the compare reads the
 * output once; the expected values are computed, not read. */
#include <cuda_runtime.h>

extern "C" {
#include "ar_check.h"
}

namespace
{

const int THREADS = 256;
const unsigned MAX_BLOCKS = 4096;

unsigned blocks_for(uint64_t n)
{
    uint64_t b = (n + THREADS - 1) / THREADS;
    return b == 0 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : (unsigned)b;
}

} // namespace

/* Not in the anonymous namespace: the test double finds its stand-in by the mangled name. */
__global__ void ar_fill_kernel(void *buf, ar_elem_job job)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < job.send_count;
         i += (uint64_t)gridDim.x * blockDim.x)
        ar_elem_store(job.type, buf, i, ar_elem_input(&job, i));
}

__global__ void ar_verify_kernel(const void *buf, ar_elem_job job, unsigned long long *wrong)
{
    unsigned long long local = 0;
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < job.recv_count;
         k += (uint64_t)gridDim.x * blockDim.x)
        local += ar_elem_wrong(&job, k, ar_elem_load(job.type, buf, k));
    if (local)
        atomicAdd(wrong, local);
}

extern "C" int ar_dev_fill(void *buf, const ar_elem_job *job, void *stream)
{
    if (job->send_count == 0)
        return cudaSuccess;
    ar_fill_kernel<<<blocks_for(job->send_count), THREADS, 0, (cudaStream_t)stream>>>(buf, *job);
    return cudaGetLastError();
}

extern "C" int ar_dev_count_wrong(const void *buf, const ar_elem_job *job, unsigned long long *wrong,
                                  void *stream)
{
    if (job->recv_count == 0)
        return cudaSuccess;
    ar_verify_kernel<<<blocks_for(job->recv_count), THREADS, 0, (cudaStream_t)stream>>>(buf, *job, wrong);
    return cudaGetLastError();
}
