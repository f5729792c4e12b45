/* Warp and block reductions shared by lm_train's kernels (lm_gpu_*.cu): each sums or maximises in a fixed
 * order (butterfly within a warp, then the warps' results in warp order), so results do not depend on
 * scheduling. */
#ifndef LM_GPU_REDUCE_CUH
#define LM_GPU_REDUCE_CUH

#include <cuda_bf16.h>
#include <math.h>

#define LM_WARP 32

__device__ static inline float lm_warp_sum(float x)
{
    for (int o = LM_WARP / 2; o > 0; o /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

__device__ static inline float lm_warp_max(float x)
{
    for (int o = LM_WARP / 2; o > 0; o /= 2)
        x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}

/* Over the whole block (blockDim.x a multiple of 32, at most 1024); every thread gets the result. `scratch`
 * holds 32 floats; the block must not be using it. */
__device__ static inline float lm_block_reduce(float x, float *scratch, bool is_max)
{
    int lane = threadIdx.x % LM_WARP, warp = threadIdx.x / LM_WARP, warps = blockDim.x / LM_WARP;
    x = is_max ? lm_warp_max(x) : lm_warp_sum(x);
    __syncthreads(); /* the previous use of scratch is over */
    if (lane == 0)
        scratch[warp] = x;
    __syncthreads();
    float y = lane < warps ? scratch[lane] : (is_max ? -INFINITY : 0.0f);
    return is_max ? lm_warp_max(y) : lm_warp_sum(y);
}

__device__ static inline float lm_f(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

__device__ static inline __nv_bfloat16 lm_b(float x)
{
    return __float2bfloat16_rn(x);
}

static inline unsigned lm_blocks(size_t n, unsigned threads)
{
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 65535u * 16u ? 65535u * 16u : (b ? b : 1)); /* kernels loop over the rest */
}

#endif
