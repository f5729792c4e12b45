/* lm_train's CUDA kernels (GPU path): every per-element formula comes from lm_math.h, so that the host tests
 * (ctest/lm_train/) test the maths these kernels run; only the reductions over a row or a column are the
 * kernels' own (warp and block reductions in a fixed order, so that a step is deterministic on a given GPU).
 * Activations and parameters are bf16 (lm_bf16), statistics, losses, master weights and AdamW state fp32.
 * Each launcher queues its kernel on stream s and returns cudaGetLastError(). The GEMMs are cuBLASLt's
 * (lm_gpu_blas.h). */
#ifndef LM_GPU_KERNELS_H
#define LM_GPU_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#include <cuda_bf16.h>
typedef __nv_bfloat16 lm_bf16;
extern "C" {
#else
typedef uint16_t lm_bf16; /* the same 16 bits, opaque to C */
#endif

/* out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. */
cudaError_t lm_k_encoder_forward(lm_bf16 *out, const int *tokens, const lm_bf16 *wte, const lm_bf16 *wpe,
                                 int B, int T, int C, cudaStream_t s);
/* dwpe[t,:] += sum_b dout[b,t,:]; dwte[v,:] += sum of dout at the positions whose token is v. The positions
 * come grouped by token (lm_gpu_token_groups): n_groups tokens group_token[g], positions
 * group_pos[group_start[g] .. group_start[g+1]) in increasing order, so the sums need no atomics. */
cudaError_t lm_k_encoder_backward(lm_bf16 *dwte, lm_bf16 *dwpe, const lm_bf16 *dout, const int *group_token,
                                  const int *group_start, const int *group_pos, int n_groups, int B, int T,
                                  int C, cudaStream_t s);
/* One row of C per warp: mean, rstd (lm_ln_rstd), out = lm_ln_scale_shift(lm_ln_normalize(x)). */
cudaError_t lm_k_layernorm_forward(lm_bf16 *out, float *mean, float *rstd, const lm_bf16 *inp,
                                   const lm_bf16 *weight, const lm_bf16 *bias, int N, int C, cudaStream_t s);
/* Column reductions (bias and layernorm weight gradients) cut the rows into this many chunks; their scratch
 * is LM_COL_SCRATCH(columns) floats. */
#define LM_COL_CHUNKS 32
#define LM_COL_SCRATCH(columns) (2 * LM_COL_CHUNKS * (size_t)(columns))

/* dinp += lm_ln_dinput(...) per row; dweight += sum_rows dout * normalized, dbias += sum_rows dout. */
cudaError_t lm_k_layernorm_backward(lm_bf16 *dinp, lm_bf16 *dweight, lm_bf16 *dbias, float *scratch,
                                    const lm_bf16 *dout, const lm_bf16 *inp, const lm_bf16 *weight,
                                    const float *mean, const float *rstd, int N, int C, cudaStream_t s);
/* out = a + b (the residual stream). */
cudaError_t lm_k_residual_forward(lm_bf16 *out, const lm_bf16 *a, const lm_bf16 *b, size_t n, cudaStream_t s);
/* out = lm_gelu(inp). */
cudaError_t lm_k_gelu_forward(lm_bf16 *out, const lm_bf16 *inp, size_t n, cudaStream_t s);
/* dinp = lm_gelu_grad(inp) * dout (dinp may be dout). */
cudaError_t lm_k_gelu_backward(lm_bf16 *dinp, const lm_bf16 *inp, const lm_bf16 *dout, size_t n,
                               cudaStream_t s);
/* dbias[c] += sum over the N rows of dout[r,c]. */
cudaError_t lm_k_bias_backward(lm_bf16 *dbias, float *scratch, const lm_bf16 *dout, int N, int OC,
                               cudaStream_t s);

/* Attention layout changes: qkv [B,T,3,NH,HS] -> q, k, v [B,NH,T,HS] each; y [B,NH,T,HS] -> out [B,T,NH,HS];
 * and their backward (dq, dk, dv -> dqkv; dout -> dy). */
cudaError_t lm_k_attn_permute(lm_bf16 *q, lm_bf16 *k, lm_bf16 *v, const lm_bf16 *qkv, int B, int T, int NH,
                              int HS, cudaStream_t s);
cudaError_t lm_k_attn_unpermute(lm_bf16 *out, const lm_bf16 *y, int B, int T, int NH, int HS, cudaStream_t s);
cudaError_t lm_k_attn_permute_backward(lm_bf16 *dqkv, const lm_bf16 *dq, const lm_bf16 *dk, const lm_bf16 *dv,
                                       int B, int T, int NH, int HS, cudaStream_t s);
cudaError_t lm_k_attn_unpermute_backward(lm_bf16 *dy, const lm_bf16 *dout, int B, int T, int NH, int HS,
                                         cudaStream_t s);
/* Fused causal softmax of scale * preatt over rows of T (BNH x T rows): att = lm_softmax_elem where
 * lm_causal_visible, else 0. One warp per row. */
cudaError_t lm_k_softmax_causal_forward(lm_bf16 *att, const lm_bf16 *preatt, float scale, int BNH, int T,
                                        cudaStream_t s);
/* dpreatt = scale * lm_softmax_dinput(att, datt, sum_j att_j datt_j) on visible elements, 0 above the
 * diagonal (dpreatt may be datt). */
cudaError_t lm_k_softmax_causal_backward(lm_bf16 *dpreatt, const lm_bf16 *datt, const lm_bf16 *att,
                                         float scale, int BNH, int T, cudaStream_t s);
/* Fused classifier, one block per row of BT: logsumexp over the real vocabulary V, losses[r] =
 * lm_xent_loss, and the logits overwritten by d(scale * loss)/dlogit (lm_xent_dlogit; padded entries 0). */
cudaError_t lm_k_fused_classifier(lm_bf16 *logits, float *losses, const int *targets, int BT, int V, int Vp,
                                  float scale, cudaStream_t s);
/* *out += scale * sum(losses[0..n)), one block, fixed order. */
cudaError_t lm_k_loss_accumulate(float *out, const float *losses, int n, float scale, cudaStream_t s);

/* Sum of squares of the bf16 gradients, in a fixed order: partials (LM_NORM_BLOCKS of them) then
 * *out = their sum. */
#define LM_NORM_BLOCKS 512
cudaError_t lm_k_grad_sumsq(float *out, float *partials, const lm_bf16 *grads, size_t n, cudaStream_t s);
/* AdamW (lm_adamw_update) over n parameters: master fp32, m, v fp32, grads bf16 times grad_scale (the
 * clipping factor); params = the master rounded to bf16 (round to nearest even). */
cudaError_t lm_k_adamw(float *master, lm_bf16 *params, float *m, float *v, const lm_bf16 *grads, size_t n,
                       float lr, float beta1, float beta2, float eps, float weight_decay, float beta1_corr,
                       float beta2_corr, float grad_scale, cudaStream_t s);
/* dst = src rounded to bf16. */
cudaError_t lm_k_cast_to_bf16(lm_bf16 *dst, const float *src, size_t n, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
