/* lm_train's host layers, forward and backward, on plain arrays: embeddings, layernorm, linear (cblas_sgemm),
 * causal multi-head attention (batched GEMMs and a causal softmax), GELU, residual, cross-entropy over the
 * real vocabulary. Each element formula comes from lm_math.h, the one the CUDA kernels use. Backward
 * functions ADD into their gradient outputs (the caller zeroes them), except lm_xent_backward, which writes.
 * N = B*T rows. */
#ifndef LM_LAYERS_H
#define LM_LAYERS_H

#include <stddef.h>

/* out[n] = wte[tokens[n]] + wpe[n % T], rows of C. */
void lm_encoder_forward(float *out, const int *tokens, const float *wte, const float *wpe, int B, int T,
                        int C);
void lm_encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tokens, int B, int T, int C);

/* Per row: out = (x - mean) * rstd * w + b, keeping mean and rstd for the backward. */
void lm_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                          const float *b, int N, int C);
void lm_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                           const float *w, const float *mean, const float *rstd, int N, int C);

/* out [N x OC] = inp [N x C] W^T + bias, W [OC x C]; bias may be NULL. */
void lm_matmul_forward(float *out, const float *inp, const float *w, const float *bias, int N, int C, int OC);
void lm_matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                        const float *w, int N, int C, int OC);

/* qkv [B*T x 3C] -> out [B*T x C]; att [B x NH x T x T] keeps the causal softmax probabilities. The backward
 * uses scratch [T x T]. */
void lm_attention_forward(float *out, float *att, const float *qkv, int B, int T, int C, int NH);
void lm_attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv, const float *att,
                           int B, int T, int C, int NH);

void lm_gelu_forward(float *out, const float *inp, size_t n);
void lm_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n);

/* out = a + b (out may be a). The backward passes dout unchanged to both inputs: the branch reads dout
 * itself, and the identity path's gradient dinp gets dout added. */
void lm_residual_forward(float *out, const float *a, const float *b, size_t n);
void lm_residual_backward(float *dinp, const float *dout, size_t n);

/* Cross-entropy of each row of logits [N x Vp] over the first V entries: losses and logsumexp per row;
 * returns the mean loss. */
float lm_xent_forward(float *losses, float *lse, const float *logits, const int *targets, int N, int V,
                      int Vp);
/* dlogits = (softmax - onehot) * scale over the first V entries, 0 over the padding. */
void lm_xent_backward(float *dlogits, const float *logits, const float *lse, const int *targets, int N, int V,
                      int Vp, float scale);

#endif
