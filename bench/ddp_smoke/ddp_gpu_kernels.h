/* The small CUDA kernels of the GPU path (the GEMMs are cuBLAS). Each launcher returns cudaGetLastError().
 * Every reduction runs in a fixed order, so that a step is deterministic on a given GPU. */
#ifndef DDP_GPU_KERNELS_H
#define DDP_GPU_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* z[r][c] += bias[c], then ReLU when relu != 0. */
cudaError_t ddp_k_bias_act(float *z, const float *bias, int rows, int cols, int relu, cudaStream_t s);
/* Per row: loss and hit of softmax cross-entropy; delta = (softmax - onehot) * scale. */
cudaError_t ddp_k_softmax_xent(const float *logits, const int32_t *labels, int rows, int classes, float scale,
                               float *delta, float *row_loss, float *row_hit, cudaStream_t s);
/* out[0] = scale * sum(row_loss), out[1] = scale * sum(row_hit): one block, fixed order. */
cudaError_t ddp_k_sum_stats(const float *row_loss, const float *row_hit, int rows, float scale, float *out,
                            cudaStream_t s);
/* db[c] = sum over rows of delta[r][c]. */
cudaError_t ddp_k_bias_grad(const float *delta, int rows, int cols, float *db, cudaStream_t s);
/* delta[k] = 0 where act[k] <= 0 (ReLU backward; act is the ReLU output). */
cudaError_t ddp_k_relu_backward(float *delta, const float *act, size_t n, cudaStream_t s);
/* v = mu v + g; p -= lr v. */
cudaError_t ddp_k_sgd(float *p, float *v, const float *g, size_t n, float lr, float mu, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
