#include "ddp_gpu_kernels.h"

namespace
{

constexpr int kThreads = 256;

unsigned blocks_for(size_t n)
{
    size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 65535u * 32u ? b : 65535u * 32u);
}

__global__ void bias_act(float *z, const float *bias, int rows, int cols, int relu)
{
    size_t n = (size_t)rows * (size_t)cols;
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x) {
        float v = z[k] + bias[k % (size_t)cols];
        z[k] = (relu && v < 0.0f) ? 0.0f : v;
    }
}

__global__ void softmax_xent(const float *logits, const int32_t *labels, int rows, int classes, float scale,
                             float *delta, float *row_loss, float *row_hit)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float *z = logits + (size_t)r * (size_t)classes;
    float *d = delta + (size_t)r * (size_t)classes;
    int arg = 0;
    for (int c = 1; c < classes; c++)
        if (z[c] > z[arg])
            arg = c;
    float sum = 0.0f;
    for (int c = 0; c < classes; c++)
        sum += expf(z[c] - z[arg]);
    int y = labels[r];
    row_loss[r] = logf(sum) - (z[y] - z[arg]);
    row_hit[r] = arg == y ? 1.0f : 0.0f;
    for (int c = 0; c < classes; c++)
        d[c] = (expf(z[c] - z[arg]) / sum - (c == y ? 1.0f : 0.0f)) * scale;
}

__global__ void sum_stats(const float *row_loss, const float *row_hit, int rows, float scale, float *out)
{
    __shared__ double s_loss[kThreads], s_hit[kThreads];
    double l = 0.0, h = 0.0;
    for (int r = threadIdx.x; r < rows; r += kThreads) {
        l += row_loss[r];
        h += row_hit[r];
    }
    s_loss[threadIdx.x] = l;
    s_hit[threadIdx.x] = h;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) {
            s_loss[threadIdx.x] += s_loss[threadIdx.x + w];
            s_hit[threadIdx.x] += s_hit[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = (float)(s_loss[0] * scale);
        out[1] = (float)(s_hit[0] * scale);
    }
}

__global__ void bias_grad(const float *delta, int rows, int cols, float *db)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols)
        return;
    float acc = 0.0f;
    for (int r = 0; r < rows; r++)
        acc += delta[(size_t)r * (size_t)cols + (size_t)c];
    db[c] = acc;
}

__global__ void relu_backward(float *delta, const float *act, size_t n)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x)
        if (act[k] <= 0.0f)
            delta[k] = 0.0f;
}

__global__ void sgd(float *p, float *v, const float *g, size_t n, float lr, float mu)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x) {
        float vk = mu * v[k] + g[k];
        v[k] = vk;
        p[k] -= lr * vk;
    }
}

} // namespace

extern "C" {

cudaError_t ddp_k_bias_act(float *z, const float *bias, int rows, int cols, int relu, cudaStream_t s)
{
    bias_act<<<blocks_for((size_t)rows * (size_t)cols), kThreads, 0, s>>>(z, bias, rows, cols, relu);
    return cudaGetLastError();
}

cudaError_t ddp_k_softmax_xent(const float *logits, const int32_t *labels, int rows, int classes, float scale,
                               float *delta, float *row_loss, float *row_hit, cudaStream_t s)
{
    softmax_xent<<<blocks_for((size_t)rows), kThreads, 0, s>>>(logits, labels, rows, classes, scale, delta,
                                                               row_loss, row_hit);
    return cudaGetLastError();
}

cudaError_t ddp_k_sum_stats(const float *row_loss, const float *row_hit, int rows, float scale, float *out,
                            cudaStream_t s)
{
    sum_stats<<<1, kThreads, 0, s>>>(row_loss, row_hit, rows, scale, out);
    return cudaGetLastError();
}

cudaError_t ddp_k_bias_grad(const float *delta, int rows, int cols, float *db, cudaStream_t s)
{
    bias_grad<<<blocks_for((size_t)cols), kThreads, 0, s>>>(delta, rows, cols, db);
    return cudaGetLastError();
}

cudaError_t ddp_k_relu_backward(float *delta, const float *act, size_t n, cudaStream_t s)
{
    relu_backward<<<blocks_for(n), kThreads, 0, s>>>(delta, act, n);
    return cudaGetLastError();
}

cudaError_t ddp_k_sgd(float *p, float *v, const float *g, size_t n, float lr, float mu, cudaStream_t s)
{
    sgd<<<blocks_for(n), kThreads, 0, s>>>(p, v, g, n, lr, mu);
    return cudaGetLastError();
}

} // extern "C"
