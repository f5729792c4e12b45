/* lm_train's optimiser kernels: the gradients' sum of squares for the global norm (fixed-order partials, so
 * every rank, holding the same averaged gradients, gets the same norm bit for bit), AdamW through
 * lm_adamw_update on the fp32 master weights with the bf16 working copy rounded from them, and the cast that
 * makes the first working copy. */
#include "lm_gpu_kernels.h"
#include "lm_gpu_reduce.cuh"
#include "lm_math.h"

#define LM_THREADS 256

__global__ static void sumsq_partials_kernel(float *partials, const lm_bf16 *grads, size_t n)
{
    __shared__ float scratch[LM_WARP];
    float sq = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float g = lm_f(grads[i]);
        sq += g * g;
    }
    sq = lm_block_reduce(sq, scratch, false);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = sq;
}

__global__ static void sum_partials_kernel(float *out, const float *partials, int n)
{
    __shared__ float scratch[LM_WARP];
    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sum += partials[i];
    sum = lm_block_reduce(sum, scratch, false);
    if (threadIdx.x == 0)
        *out = sum;
}

extern "C" cudaError_t lm_k_grad_sumsq(float *out, float *partials, const lm_bf16 *grads, size_t n,
                                       cudaStream_t s)
{
    sumsq_partials_kernel<<<LM_NORM_BLOCKS, LM_THREADS, 0, s>>>(partials, grads, n);
    sum_partials_kernel<<<1, LM_THREADS, 0, s>>>(out, partials, LM_NORM_BLOCKS);
    return cudaGetLastError();
}

typedef struct {
    float lr, beta1, beta2, eps, weight_decay, beta1_corr, beta2_corr, grad_scale;
} adamw_args;

__global__ static void adamw_kernel(float *master, lm_bf16 *params, float *m, float *v, const lm_bf16 *grads,
                                    size_t n, adamw_args a)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float p = master[i], mi = m[i], vi = v[i];
        lm_adamw_update(&p, &mi, &vi, lm_f(grads[i]) * a.grad_scale, a.lr, a.beta1, a.beta2, a.eps,
                        a.weight_decay, a.beta1_corr, a.beta2_corr);
        master[i] = p;
        m[i] = mi;
        v[i] = vi;
        params[i] = lm_b(p);
    }
}

extern "C" cudaError_t lm_k_adamw(float *master, lm_bf16 *params, float *m, float *v, const lm_bf16 *grads,
                                  size_t n, float lr, float beta1, float beta2, float eps, float weight_decay,
                                  float beta1_corr, float beta2_corr, float grad_scale, cudaStream_t s)
{
    adamw_args a = {lr, beta1, beta2, eps, weight_decay, beta1_corr, beta2_corr, grad_scale};
    adamw_kernel<<<lm_blocks(n, LM_THREADS), LM_THREADS, 0, s>>>(master, params, m, v, grads, n, a);
    return cudaGetLastError();
}

__global__ static void cast_kernel(lm_bf16 *dst, const float *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = lm_b(src[i]);
}

extern "C" cudaError_t lm_k_cast_to_bf16(lm_bf16 *dst, const float *src, size_t n, cudaStream_t s)
{
    cast_kernel<<<lm_blocks(n, LM_THREADS), LM_THREADS, 0, s>>>(dst, src, n);
    return cudaGetLastError();
}
