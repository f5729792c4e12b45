/* lm_train's attention and classifier kernels: the layout changes around the batched GEMMs of attention,
 * the fused causal softmax and its backward, the fused classifier (softmax, cross-entropy and dlogits in one
 * pass over the logits) and the loss sum. The formulas are lm_math.h's. */
#include "lm_gpu_kernels.h"
#include "lm_gpu_reduce.cuh"
#include "lm_math.h"

#define LM_THREADS 256
#define LM_CLASSIFIER_THREADS 512

/* For i over B*NH*T*HS in [B,NH,T,HS] order: the matching offset in a [B,T,NH,HS] row of width `row`. */
__device__ static inline size_t btnd_offset(size_t i, int T, int NH, int HS, int row)
{
    int d = (int)(i % HS), t = (int)((i / HS) % T), h = (int)((i / ((size_t)HS * T)) % NH);
    size_t b = i / ((size_t)HS * T * NH);
    return (b * T + t) * row + (size_t)h * HS + d;
}

__global__ static void permute_kernel(lm_bf16 *q, lm_bf16 *k, lm_bf16 *v, const lm_bf16 *qkv, int B, int T,
                                      int NH, int HS)
{
    size_t n = (size_t)B * NH * T * HS, C = (size_t)NH * HS;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t src = btnd_offset(i, T, NH, HS, 3 * NH * HS);
        q[i] = qkv[src];
        k[i] = qkv[src + C];
        v[i] = qkv[src + 2 * C];
    }
}

extern "C" cudaError_t lm_k_attn_permute(lm_bf16 *q, lm_bf16 *k, lm_bf16 *v, const lm_bf16 *qkv, int B, int T,
                                         int NH, int HS, cudaStream_t s)
{
    permute_kernel<<<lm_blocks((size_t)B * NH * T * HS, LM_THREADS), LM_THREADS, 0, s>>>(q, k, v, qkv, B, T,
                                                                                         NH, HS);
    return cudaGetLastError();
}

__global__ static void permute_backward_kernel(lm_bf16 *dqkv, const lm_bf16 *dq, const lm_bf16 *dk,
                                               const lm_bf16 *dv, int B, int T, int NH, int HS)
{
    size_t n = (size_t)B * NH * T * HS, C = (size_t)NH * HS;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t dst = btnd_offset(i, T, NH, HS, 3 * NH * HS);
        dqkv[dst] = dq[i];
        dqkv[dst + C] = dk[i];
        dqkv[dst + 2 * C] = dv[i];
    }
}

extern "C" cudaError_t lm_k_attn_permute_backward(lm_bf16 *dqkv, const lm_bf16 *dq, const lm_bf16 *dk,
                                                  const lm_bf16 *dv, int B, int T, int NH, int HS,
                                                  cudaStream_t s)
{
    permute_backward_kernel<<<lm_blocks((size_t)B * NH * T * HS, LM_THREADS), LM_THREADS, 0, s>>>(
        dqkv, dq, dk, dv, B, T, NH, HS);
    return cudaGetLastError();
}

/* to_btnd: y [B,NH,T,HS] -> out [B,T,NH,HS]; else the reverse (the backward's dout -> dy). */
__global__ static void unpermute_kernel(lm_bf16 *dst, const lm_bf16 *src, int B, int T, int NH, int HS,
                                        bool to_btnd)
{
    size_t n = (size_t)B * NH * T * HS;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t o = btnd_offset(i, T, NH, HS, NH * HS);
        if (to_btnd)
            dst[o] = src[i];
        else
            dst[i] = src[o];
    }
}

extern "C" cudaError_t lm_k_attn_unpermute(lm_bf16 *out, const lm_bf16 *y, int B, int T, int NH, int HS,
                                           cudaStream_t s)
{
    unpermute_kernel<<<lm_blocks((size_t)B * NH * T * HS, LM_THREADS), LM_THREADS, 0, s>>>(out, y, B, T, NH,
                                                                                           HS, true);
    return cudaGetLastError();
}

extern "C" cudaError_t lm_k_attn_unpermute_backward(lm_bf16 *dy, const lm_bf16 *dout, int B, int T, int NH,
                                                    int HS, cudaStream_t s)
{
    unpermute_kernel<<<lm_blocks((size_t)B * NH * T * HS, LM_THREADS), LM_THREADS, 0, s>>>(dy, dout, B, T, NH,
                                                                                           HS, false);
    return cudaGetLastError();
}

/* One warp per row (query t of one batch and head): max and sum of exp over the visible keys, then every
 * element of the row written (0 above the diagonal, so the GEMM with v may read the whole row). */
__global__ static void softmax_forward_kernel(lm_bf16 *att, const lm_bf16 *preatt, float scale, int BNH,
                                              int T)
{
    size_t row = blockIdx.x * (size_t)(blockDim.x / LM_WARP) + threadIdx.x / LM_WARP;
    int lane = threadIdx.x % LM_WARP;
    if (row >= (size_t)BNH * T)
        return;
    int t = (int)(row % T);
    const lm_bf16 *x = preatt + row * T;
    float mx = -INFINITY;
    for (int j = lane; j <= t; j += LM_WARP)
        mx = fmaxf(mx, scale * lm_f(x[j]));
    mx = lm_warp_max(mx);
    float sum = 0.0f;
    for (int j = lane; j <= t; j += LM_WARP)
        sum += expf(scale * lm_f(x[j]) - mx);
    float inv_sum = 1.0f / lm_warp_sum(sum);
    lm_bf16 *y = att + row * T;
    for (int j = lane; j < T; j += LM_WARP)
        y[j] = lm_b(lm_causal_visible(t, j) ? lm_softmax_elem(scale * lm_f(x[j]), mx, inv_sum) : 0.0f);
}

extern "C" cudaError_t lm_k_softmax_causal_forward(lm_bf16 *att, const lm_bf16 *preatt, float scale, int BNH,
                                                   int T, cudaStream_t s)
{
    size_t rows = (size_t)BNH * T, per_block = LM_THREADS / LM_WARP;
    softmax_forward_kernel<<<(unsigned)((rows + per_block - 1) / per_block), LM_THREADS, 0, s>>>(
        att, preatt, scale, BNH, T);
    return cudaGetLastError();
}

__global__ static void softmax_backward_kernel(lm_bf16 *dpreatt, const lm_bf16 *datt, const lm_bf16 *att,
                                               float scale, int BNH, int T)
{
    size_t row = blockIdx.x * (size_t)(blockDim.x / LM_WARP) + threadIdx.x / LM_WARP;
    int lane = threadIdx.x % LM_WARP;
    if (row >= (size_t)BNH * T)
        return;
    int t = (int)(row % T);
    const lm_bf16 *p = att + row * T, *dp = datt + row * T;
    float s = 0.0f;
    for (int j = lane; j <= t; j += LM_WARP)
        s += lm_f(p[j]) * lm_f(dp[j]);
    s = lm_warp_sum(s);
    lm_bf16 *dx = dpreatt + row * T;
    for (int j = lane; j < T; j += LM_WARP) {
        float d = lm_causal_visible(t, j) ? scale * lm_softmax_dinput(lm_f(p[j]), lm_f(dp[j]), s) : 0.0f;
        dx[j] = lm_b(d);
    }
}

extern "C" cudaError_t lm_k_softmax_causal_backward(lm_bf16 *dpreatt, const lm_bf16 *datt, const lm_bf16 *att,
                                                    float scale, int BNH, int T, cudaStream_t s)
{
    size_t rows = (size_t)BNH * T, per_block = LM_THREADS / LM_WARP;
    softmax_backward_kernel<<<(unsigned)((rows + per_block - 1) / per_block), LM_THREADS, 0, s>>>(
        dpreatt, datt, att, scale, BNH, T);
    return cudaGetLastError();
}

/* One block per row of logits: max and sum of exp over the real vocabulary, the loss, then the row
 * overwritten by its gradient. The target's logit is read before any thread writes. */
__global__ static void classifier_kernel(lm_bf16 *logits, float *losses, const int *targets, int V, int Vp,
                                         float scale)
{
    __shared__ float scratch[LM_WARP];
    lm_bf16 *z = logits + (size_t)blockIdx.x * Vp;
    int target = targets[blockIdx.x];
    float mx = -INFINITY;
    for (int i = threadIdx.x; i < V; i += blockDim.x)
        mx = fmaxf(mx, lm_f(z[i]));
    mx = lm_block_reduce(mx, scratch, true);
    float sum = 0.0f;
    for (int i = threadIdx.x; i < V; i += blockDim.x)
        sum += expf(lm_f(z[i]) - mx);
    sum = lm_block_reduce(sum, scratch, false);
    float lse = lm_xent_logsumexp(mx, sum), z_target = lm_f(z[target]);
    __syncthreads(); /* every thread has read z[target] */
    if (threadIdx.x == 0)
        losses[blockIdx.x] = lm_xent_loss(lse, z_target);
    for (int i = threadIdx.x; i < Vp; i += blockDim.x)
        z[i] = lm_b(i < V ? lm_xent_dlogit(lm_f(z[i]), lse, i == target, scale) : 0.0f);
}

extern "C" cudaError_t lm_k_fused_classifier(lm_bf16 *logits, float *losses, const int *targets, int BT,
                                             int V, int Vp, float scale, cudaStream_t s)
{
    classifier_kernel<<<BT, LM_CLASSIFIER_THREADS, 0, s>>>(logits, losses, targets, V, Vp, scale);
    return cudaGetLastError();
}

__global__ static void loss_accumulate_kernel(float *out, const float *losses, int n, float scale)
{
    __shared__ float scratch[LM_WARP];
    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sum += losses[i];
    sum = lm_block_reduce(sum, scratch, false);
    if (threadIdx.x == 0)
        *out += scale * sum;
}

extern "C" cudaError_t lm_k_loss_accumulate(float *out, const float *losses, int n, float scale,
                                            cudaStream_t s)
{
    loss_accumulate_kernel<<<1, 1024, 0, s>>>(out, losses, n, scale);
    return cudaGetLastError();
}
