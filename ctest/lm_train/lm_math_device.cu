/* Compile-only check that lm_math.h's element formulas are device functions under nvcc (LM_HD is
 * __host__ __device__ there): one kernel calls each of them. Built in the CUDA tree; never run. */
#include "lm_math.h"

__global__ void lm_math_device_check(float *x, float *m, float *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float g = lm_gelu(x[i]) + lm_gelu_grad(x[i]);
    float norm = lm_ln_normalize(x[i], 0.5f, lm_ln_rstd(2.0f));
    g += lm_ln_scale_shift(norm, 1.0f, 0.0f) + lm_ln_dinput(g, 0.1f, norm, 0.2f, 1.0f);
    g += lm_causal_visible(i, 0) ? lm_softmax_elem(x[i], 1.0f, 0.5f) : 0.0f;
    g += lm_softmax_dinput(0.3f, g, 0.1f) + lm_xent_dlogit(x[i], lm_xent_logsumexp(1.0f, 2.0f), i == 0, 0.5f);
    g *= lm_clip_scale(lm_xent_loss(3.0f, 1.0f), 1.0f);
    lm_adamw_update(&x[i], &m[i], &v[i], g, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.1f, 0.05f);
}
