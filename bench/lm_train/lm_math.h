/* lm_train's per-element maths, written once: the host path (lm_layers.c, lm_optim.c) and the CUDA kernels
 * call these same functions, so that the host tests (ctest/lm_train/) test the formulas the GPU runs. Only
 * the element formulas live here; the reductions over a row (means, maxima, sums) are the caller's loops or
 * the kernel's block reductions, because that is where host and device differ.
 *
 * Sources of the formulas (the code is ours):
 *  - GELU, tanh approximation: Hendrycks & Gimpel, "Gaussian Error Linear Units" (2016),
 *    0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))), as GPT-2 uses it; llm.c train_gpt2.c gelu_forward and
 *    gelu_backward.
 *  - LayerNorm: Ba, Kiros & Hinton (2016); epsilon 1e-5 as GPT-2 and llm.c train_gpt2.c layernorm_forward;
 *    the backward's closed form as in llm.c layernorm_backward.
 *  - Causal softmax attention scaled by 1/sqrt(head size): Vaswani et al. (2017); GPT-2's decoder mask; llm.c
 *    attention_forward/attention_backward.
 *  - Cross-entropy through logsumexp, d(loss)/d(logit) = p - onehot: llm.c crossentropy_softmax_backward.
 *  - AdamW: Loshchilov & Hutter, "Decoupled Weight Decay Regularization" (2019), Algorithm 2, with Adam's
 *    bias correction (Kingma & Ba 2015); llm.c train_gpt2.c gpt2_update and llmc/adamw.cuh adamw_kernel3
 *    (decay applied to the parameter, scaled by the learning rate, beside the Adam step).
 *  - Clipping by global norm: Pascanu et al. (2013); llm.c's grad_clip (scale = max_norm / norm if above). */
#ifndef LM_MATH_H
#define LM_MATH_H

#include <math.h>

#ifdef __CUDACC__
#define LM_HD __host__ __device__
#else
#define LM_HD
#endif

#define LM_LN_EPS 1e-5f
#define LM_GELU_SQRT_2_OVER_PI 0.7978845608028654f
#define LM_GELU_CUBIC 0.044715f

/* GELU(x) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3). */
LM_HD static inline float lm_gelu(float x)
{
    float u = LM_GELU_SQRT_2_OVER_PI * (x + LM_GELU_CUBIC * x * x * x);
    return 0.5f * x * (1.0f + tanhf(u));
}

/* dGELU/dx = 0.5 (1 + tanh u) + 0.5 x sech^2(u) du/dx, du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2). sech^2 is
 * written 1 - tanh^2 so that a large |u| gives 0 rather than 1/cosh^2 overflowing to inf/inf. */
LM_HD static inline float lm_gelu_grad(float x)
{
    float u = LM_GELU_SQRT_2_OVER_PI * (x + LM_GELU_CUBIC * x * x * x);
    float th = tanhf(u);
    float du = LM_GELU_SQRT_2_OVER_PI * (1.0f + 3.0f * LM_GELU_CUBIC * x * x);
    return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

/* LayerNorm forward over a row of C: mean and variance (biased, 1/C) are the caller's reductions. */
LM_HD static inline float lm_ln_rstd(float variance)
{
    return 1.0f / sqrtf(variance + LM_LN_EPS);
}

LM_HD static inline float lm_ln_normalize(float x, float mean, float rstd)
{
    return (x - mean) * rstd;
}

LM_HD static inline float lm_ln_scale_shift(float normalized, float weight, float bias)
{
    return normalized * weight + bias;
}

/* LayerNorm backward for one element. With n_i the normalised input and g_i = dout_i * weight_i, the caller
 * reduces g_mean = mean_i g_i and gn_mean = mean_i g_i n_i over the row; then
 *   dx_i = rstd (g_i - g_mean - n_i gn_mean),  dweight_i += dout_i n_i,  dbias_i += dout_i. */
LM_HD static inline float lm_ln_dinput(float g, float g_mean, float normalized, float gn_mean, float rstd)
{
    return rstd * (g - g_mean - normalized * gn_mean);
}

/* Causal mask: position t_query sees keys at or before itself, never the future. */
LM_HD static inline int lm_causal_visible(int t_query, int t_key)
{
    return t_key <= t_query;
}

/* One softmax element, exp(x - max) / sum, given the row's max and the reciprocal of its sum of exp(x - max).
 * Subtracting the max keeps exp from overflowing; the result is unchanged. */
LM_HD static inline float lm_softmax_elem(float x, float row_max, float inv_sum)
{
    return expf(x - row_max) * inv_sum;
}

/* Softmax backward for one element: with p = softmax(x) and dp the gradient at p, the caller reduces
 * s = sum_j p_j dp_j over the row; then dx_i = p_i (dp_i - s). Masked elements have p = 0 and get 0. */
LM_HD static inline float lm_softmax_dinput(float p, float dp, float sum_p_dp)
{
    return p * (dp - sum_p_dp);
}

/* Cross-entropy of one row of logits z over the real vocabulary: logsumexp(z) - z_target, with
 * logsumexp = row_max + log(sum exp(z - row_max)). */
LM_HD static inline float lm_xent_logsumexp(float row_max, float sum_exp)
{
    return row_max + logf(sum_exp);
}

LM_HD static inline float lm_xent_loss(float logsumexp, float z_target)
{
    return logsumexp - z_target;
}

/* d(scale * loss)/dz for one logit: (softmax(z) - onehot) * scale, softmax(z) = exp(z - logsumexp). The scale
 * is 1/(B*T) for a mean loss (times 1/accumulation steps). Logits of padded vocabulary entries are not in the
 * softmax: the caller gives them 0. */
LM_HD static inline float lm_xent_dlogit(float z, float logsumexp, int is_target, float scale)
{
    return (expf(z - logsumexp) - (is_target ? 1.0f : 0.0f)) * scale;
}

/* AdamW for one parameter at step t (1-based), in place. beta1_corr = 1 - beta1^t, beta2_corr = 1 - beta2^t
 * are computed once per step by the caller. Decoupled decay: p -= lr * (m_hat / (sqrt(v_hat) + eps) + wd p).
 */
LM_HD static inline void lm_adamw_update(float *param, float *m, float *v, float grad, float lr, float beta1,
                                         float beta2, float eps, float weight_decay, float beta1_corr,
                                         float beta2_corr)
{
    float m_new = beta1 * *m + (1.0f - beta1) * grad;
    float v_new = beta2 * *v + (1.0f - beta2) * grad * grad;
    float m_hat = m_new / beta1_corr;
    float v_hat = v_new / beta2_corr;
    *m = m_new;
    *v = v_new;
    *param -= lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * *param);
}

/* The factor every gradient is multiplied by so that the global L2 norm is at most max_norm (max_norm <= 0:
 * no clipping). */
LM_HD static inline float lm_clip_scale(float global_norm, float max_norm)
{
    if (max_norm > 0.0f && global_norm > max_norm)
        return max_norm / global_norm;
    return 1.0f;
}

#endif
