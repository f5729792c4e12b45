/* lm_train's element-wise and row kernels: encoder, layernorm, residual, GELU, bias gradients. The formulas
 * are lm_math.h's; the reductions over rows and columns run in a fixed order (no atomics). */
#include "lm_gpu_kernels.h"
#include "lm_gpu_reduce.cuh"
#include "lm_math.h"

#define LM_THREADS 256
#define LM_COL_ROWS 8 /* column reductions: threads per column in a chunk, each summing every 8th row */

__global__ static void encoder_forward_kernel(lm_bf16 *out, const int *tokens, const lm_bf16 *wte,
                                              const lm_bf16 *wpe, int BT, int T, int C)
{
    size_t n = (size_t)BT * C;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t bt = i / C, c = i % C;
        size_t t = bt % T;
        out[i] = lm_b(lm_f(wte[(size_t)tokens[bt] * C + c]) + lm_f(wpe[t * C + c]));
    }
}

extern "C" cudaError_t lm_k_encoder_forward(lm_bf16 *out, const int *tokens, const lm_bf16 *wte,
                                            const lm_bf16 *wpe, int B, int T, int C, cudaStream_t s)
{
    encoder_forward_kernel<<<lm_blocks((size_t)B * T * C, LM_THREADS), LM_THREADS, 0, s>>>(out, tokens, wte,
                                                                                           wpe, B * T, T, C);
    return cudaGetLastError();
}

/* One thread per (t, c): the batch's sum in batch order. */
__global__ static void wpe_backward_kernel(lm_bf16 *dwpe, const lm_bf16 *dout, int B, int T, int C)
{
    size_t n = (size_t)T * C;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float acc = lm_f(dwpe[i]);
        for (int b = 0; b < B; b++)
            acc += lm_f(dout[(size_t)b * n + i]);
        dwpe[i] = lm_b(acc);
    }
}

/* One block per distinct token: its row of dwte gets the sum of dout over the token's positions, in order. */
__global__ static void wte_backward_kernel(lm_bf16 *dwte, const lm_bf16 *dout, const int *group_token,
                                           const int *group_start, const int *group_pos, int C)
{
    int g = blockIdx.x, tok = group_token[g];
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float acc = lm_f(dwte[(size_t)tok * C + c]);
        for (int p = group_start[g]; p < group_start[g + 1]; p++)
            acc += lm_f(dout[(size_t)group_pos[p] * C + c]);
        dwte[(size_t)tok * C + c] = lm_b(acc);
    }
}

extern "C" cudaError_t lm_k_encoder_backward(lm_bf16 *dwte, lm_bf16 *dwpe, const lm_bf16 *dout,
                                             const int *group_token, const int *group_start,
                                             const int *group_pos, int n_groups, int B, int T, int C,
                                             cudaStream_t s)
{
    wpe_backward_kernel<<<lm_blocks((size_t)T * C, LM_THREADS), LM_THREADS, 0, s>>>(dwpe, dout, B, T, C);
    if (n_groups > 0)
        wte_backward_kernel<<<n_groups, LM_THREADS, 0, s>>>(dwte, dout, group_token, group_start, group_pos,
                                                            C);
    return cudaGetLastError();
}

/* One warp per row: mean, then the biased variance about it (two passes: no cancellation). */
__global__ static void layernorm_forward_kernel(lm_bf16 *out, float *mean, float *rstd, const lm_bf16 *inp,
                                                const lm_bf16 *weight, const lm_bf16 *bias, int N, int C)
{
    int row = blockIdx.x * (blockDim.x / LM_WARP) + threadIdx.x / LM_WARP, lane = threadIdx.x % LM_WARP;
    if (row >= N)
        return;
    const lm_bf16 *x = inp + (size_t)row * C;
    float sum = 0.0f;
    for (int c = lane; c < C; c += LM_WARP)
        sum += lm_f(x[c]);
    float m = lm_warp_sum(sum) / (float)C;
    float sq = 0.0f;
    for (int c = lane; c < C; c += LM_WARP) {
        float d = lm_f(x[c]) - m;
        sq += d * d;
    }
    float r = lm_ln_rstd(lm_warp_sum(sq) / (float)C);
    lm_bf16 *y = out + (size_t)row * C;
    for (int c = lane; c < C; c += LM_WARP)
        y[c] = lm_b(lm_ln_scale_shift(lm_ln_normalize(lm_f(x[c]), m, r), lm_f(weight[c]), lm_f(bias[c])));
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

extern "C" cudaError_t lm_k_layernorm_forward(lm_bf16 *out, float *mean, float *rstd, const lm_bf16 *inp,
                                              const lm_bf16 *weight, const lm_bf16 *bias, int N, int C,
                                              cudaStream_t s)
{
    int rows_per_block = LM_THREADS / LM_WARP;
    layernorm_forward_kernel<<<(N + rows_per_block - 1) / rows_per_block, LM_THREADS, 0, s>>>(
        out, mean, rstd, inp, weight, bias, N, C);
    return cudaGetLastError();
}

/* One warp per row: g = dout * weight, its mean and the mean of g * normalized, then dinp += lm_ln_dinput. */
__global__ static void layernorm_dinput_kernel(lm_bf16 *dinp, const lm_bf16 *dout, const lm_bf16 *inp,
                                               const lm_bf16 *weight, const float *mean, const float *rstd,
                                               int N, int C)
{
    int row = blockIdx.x * (blockDim.x / LM_WARP) + threadIdx.x / LM_WARP, lane = threadIdx.x % LM_WARP;
    if (row >= N)
        return;
    size_t base = (size_t)row * C;
    float m = mean[row], r = rstd[row], g_sum = 0.0f, gn_sum = 0.0f;
    for (int c = lane; c < C; c += LM_WARP) {
        float g = lm_f(dout[base + c]) * lm_f(weight[c]);
        g_sum += g;
        gn_sum += g * lm_ln_normalize(lm_f(inp[base + c]), m, r);
    }
    float g_mean = lm_warp_sum(g_sum) / (float)C, gn_mean = lm_warp_sum(gn_sum) / (float)C;
    for (int c = lane; c < C; c += LM_WARP) {
        float g = lm_f(dout[base + c]) * lm_f(weight[c]);
        float n = lm_ln_normalize(lm_f(inp[base + c]), m, r);
        dinp[base + c] = lm_b(lm_f(dinp[base + c]) + lm_ln_dinput(g, g_mean, n, gn_mean, r));
    }
}

/* Column sums over N rows in two passes, deterministic: the rows are cut into LM_COL_CHUNKS chunks (so that
 * a narrow matrix still fills the GPU); a block sums 32 columns of one chunk, LM_COL_ROWS threads per
 * column each summing every LM_COL_ROWS-th row, combined in row-group order into partials[chunk][c]; then
 * one thread per column adds the chunks in chunk order: dsum[c] += sum_r dout[r,c] and, with inp (a
 * layernorm's input and statistics), dnorm[c] += sum_r dout[r,c] * normalized[r,c]. */
__global__ static void column_partials_kernel(float *partials, const lm_bf16 *dout, const lm_bf16 *inp,
                                              const float *mean, const float *rstd, int N, int C)
{
    __shared__ float s_sum[LM_COL_ROWS][LM_WARP], s_norm[LM_COL_ROWS][LM_WARP];
    int c = blockIdx.x * LM_WARP + threadIdx.x, chunk = blockIdx.y;
    int rows = (N + LM_COL_CHUNKS - 1) / LM_COL_CHUNKS, r0 = chunk * rows;
    int r1 = r0 + rows < N ? r0 + rows : N;
    float sum = 0.0f, norm = 0.0f;
    if (c < C)
        for (int r = r0 + (int)threadIdx.y; r < r1; r += LM_COL_ROWS) {
            float d = lm_f(dout[(size_t)r * C + c]);
            sum += d;
            if (inp)
                norm += d * lm_ln_normalize(lm_f(inp[(size_t)r * C + c]), mean[r], rstd[r]);
        }
    s_sum[threadIdx.y][threadIdx.x] = sum;
    s_norm[threadIdx.y][threadIdx.x] = norm;
    __syncthreads();
    if (threadIdx.y != 0 || c >= C)
        return;
    for (int y = 1; y < LM_COL_ROWS; y++) {
        sum += s_sum[y][threadIdx.x];
        norm += s_norm[y][threadIdx.x];
    }
    partials[(size_t)chunk * C + c] = sum;
    partials[(size_t)(LM_COL_CHUNKS + chunk) * C + c] = norm;
}

__global__ static void column_finish_kernel(lm_bf16 *dsum, lm_bf16 *dnorm, const float *partials, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    float sum = 0.0f, norm = 0.0f;
    for (int k = 0; k < LM_COL_CHUNKS; k++) {
        sum += partials[(size_t)k * C + c];
        norm += partials[(size_t)(LM_COL_CHUNKS + k) * C + c];
    }
    dsum[c] = lm_b(lm_f(dsum[c]) + sum);
    if (dnorm)
        dnorm[c] = lm_b(lm_f(dnorm[c]) + norm);
}

static void column_sums(lm_bf16 *dsum, lm_bf16 *dnorm, float *scratch, const lm_bf16 *dout,
                        const lm_bf16 *inp, const float *mean, const float *rstd, int N, int C,
                        cudaStream_t s)
{
    dim3 block(LM_WARP, LM_COL_ROWS), grid((C + LM_WARP - 1) / LM_WARP, LM_COL_CHUNKS);
    column_partials_kernel<<<grid, block, 0, s>>>(scratch, dout, inp, mean, rstd, N, C);
    column_finish_kernel<<<(C + LM_THREADS - 1) / LM_THREADS, LM_THREADS, 0, s>>>(dsum, dnorm, scratch, C);
}

extern "C" cudaError_t lm_k_layernorm_backward(lm_bf16 *dinp, lm_bf16 *dweight, lm_bf16 *dbias,
                                               float *scratch, const lm_bf16 *dout, const lm_bf16 *inp,
                                               const lm_bf16 *weight, const float *mean, const float *rstd,
                                               int N, int C, cudaStream_t s)
{
    int rows_per_block = LM_THREADS / LM_WARP;
    layernorm_dinput_kernel<<<(N + rows_per_block - 1) / rows_per_block, LM_THREADS, 0, s>>>(
        dinp, dout, inp, weight, mean, rstd, N, C);
    column_sums(dbias, dweight, scratch, dout, inp, mean, rstd, N, C, s);
    return cudaGetLastError();
}

extern "C" cudaError_t lm_k_bias_backward(lm_bf16 *dbias, float *scratch, const lm_bf16 *dout, int N, int OC,
                                          cudaStream_t s)
{
    column_sums(dbias, NULL, scratch, dout, NULL, NULL, NULL, N, OC, s);
    return cudaGetLastError();
}

__global__ static void residual_kernel(lm_bf16 *out, const lm_bf16 *a, const lm_bf16 *b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = lm_b(lm_f(a[i]) + lm_f(b[i]));
}

extern "C" cudaError_t lm_k_residual_forward(lm_bf16 *out, const lm_bf16 *a, const lm_bf16 *b, size_t n,
                                             cudaStream_t s)
{
    residual_kernel<<<lm_blocks(n, LM_THREADS), LM_THREADS, 0, s>>>(out, a, b, n);
    return cudaGetLastError();
}

__global__ static void gelu_forward_kernel(lm_bf16 *out, const lm_bf16 *inp, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = lm_b(lm_gelu(lm_f(inp[i])));
}

extern "C" cudaError_t lm_k_gelu_forward(lm_bf16 *out, const lm_bf16 *inp, size_t n, cudaStream_t s)
{
    gelu_forward_kernel<<<lm_blocks(n, LM_THREADS), LM_THREADS, 0, s>>>(out, inp, n);
    return cudaGetLastError();
}

__global__ static void gelu_backward_kernel(lm_bf16 *dinp, const lm_bf16 *inp, const lm_bf16 *dout, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dinp[i] = lm_b(lm_gelu_grad(lm_f(inp[i])) * lm_f(dout[i]));
}

extern "C" cudaError_t lm_k_gelu_backward(lm_bf16 *dinp, const lm_bf16 *inp, const lm_bf16 *dout, size_t n,
                                          cudaStream_t s)
{
    gelu_backward_kernel<<<lm_blocks(n, LM_THREADS), LM_THREADS, 0, s>>>(dinp, inp, dout, n);
    return cudaGetLastError();
}
