/* lm_train's host layers: the loops and GEMMs around lm_math.h's element formulas. Row reductions accumulate
 * in double and in a fixed order, so that the host path is deterministic and its finite-difference checks are
 * not limited by the reductions' rounding. */
#include "lm_layers.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "lm_math.h"

void lm_encoder_forward(float *out, const int *tokens, const float *wte, const float *wpe, int B, int T,
                        int C)
{
    for (int n = 0; n < B * T; n++) {
        const float *te = wte + (size_t)tokens[n] * C, *pe = wpe + (size_t)(n % T) * C;
        float *o = out + (size_t)n * C;
        for (int c = 0; c < C; c++)
            o[c] = te[c] + pe[c];
    }
}

void lm_encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tokens, int B, int T, int C)
{
    for (int n = 0; n < B * T; n++) {
        float *dte = dwte + (size_t)tokens[n] * C, *dpe = dwpe + (size_t)(n % T) * C;
        const float *d = dout + (size_t)n * C;
        for (int c = 0; c < C; c++) {
            dte[c] += d[c];
            dpe[c] += d[c];
        }
    }
}

void lm_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                          const float *b, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C;
        double sum = 0, sq = 0;
        for (int c = 0; c < C; c++)
            sum += x[c];
        float mu = (float)(sum / C);
        for (int c = 0; c < C; c++)
            sq += (double)(x[c] - mu) * (x[c] - mu);
        float rs = lm_ln_rstd((float)(sq / C));
        float *o = out + (size_t)n * C;
        for (int c = 0; c < C; c++)
            o[c] = lm_ln_scale_shift(lm_ln_normalize(x[c], mu, rs), w[c], b[c]);
        mean[n] = mu;
        rstd[n] = rs;
    }
}

void lm_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                           const float *w, const float *mean, const float *rstd, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C, *d = dout + (size_t)n * C;
        double g_sum = 0, gn_sum = 0;
        for (int c = 0; c < C; c++) {
            float g = d[c] * w[c];
            g_sum += g;
            gn_sum += (double)g * lm_ln_normalize(x[c], mean[n], rstd[n]);
        }
        float g_mean = (float)(g_sum / C), gn_mean = (float)(gn_sum / C);
        float *dx = dinp + (size_t)n * C;
        for (int c = 0; c < C; c++) {
            float norm = lm_ln_normalize(x[c], mean[n], rstd[n]);
            dx[c] += lm_ln_dinput(d[c] * w[c], g_mean, norm, gn_mean, rstd[n]);
            dw[c] += d[c] * norm;
            db[c] += d[c];
        }
    }
}

void lm_matmul_forward(float *out, const float *inp, const float *w, const float *bias, int N, int C, int OC)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C, 1.0f, inp, C, w, C, 0.0f, out, OC);
    if (!bias)
        return;
    for (int n = 0; n < N; n++) {
        float *o = out + (size_t)n * OC;
        for (int k = 0; k < OC; k++)
            o[k] += bias[k];
    }
}

void lm_matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                        const float *w, int N, int C, int OC)
{
    /* dinp [N x C] += dout [N x OC] W [OC x C];  dW [OC x C] += dout^T inp;  dbias += column sums of dout */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC, 1.0f, dout, OC, w, C, 1.0f, dinp, C);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dw, C);
    if (!dbias)
        return;
    for (int k = 0; k < OC; k++) {
        double s = 0;
        for (int n = 0; n < N; n++)
            s += dout[(size_t)n * OC + k];
        dbias[k] += (float)s;
    }
}

/* Row t of the scaled scores in place: the causal softmax over keys 0..t, 0 beyond. */
static void causal_softmax_row(float *row, int t, int T)
{
    float mx = -INFINITY;
    for (int k = 0; k < T; k++)
        if (lm_causal_visible(t, k) && row[k] > mx)
            mx = row[k];
    double sum = 0;
    for (int k = 0; k < T; k++)
        if (lm_causal_visible(t, k))
            sum += expf(row[k] - mx);
    float inv = (float)(1.0 / sum);
    for (int k = 0; k < T; k++)
        row[k] = lm_causal_visible(t, k) ? lm_softmax_elem(row[k], mx, inv) : 0.0f;
}

void lm_attention_forward(float *out, float *att, const float *qkv, int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            const float *q = qkv + (size_t)b * T * C3 + (size_t)h * hs, *k = q + C, *v = q + 2 * C;
            float *a = att + ((size_t)b * NH + h) * (size_t)T * T;
            /* scores = scale * Q K^T (the masked half is computed and then zeroed: simpler than a triangle)
             */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, C3, k, C3, 0.0f, a, T);
            for (int t = 0; t < T; t++)
                causal_softmax_row(a + (size_t)t * T, t, T);
            float *o = out + (size_t)b * T * C + (size_t)h * hs;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, v, C3, 0.0f, o, C);
        }
}

/* In place over a row of dP (the gradient at the probabilities P): the gradient at the scaled scores. */
static void softmax_backward_row(float *dp, const float *p, int T)
{
    double s = 0;
    for (int k = 0; k < T; k++)
        s += (double)p[k] * dp[k];
    for (int k = 0; k < T; k++)
        dp[k] = lm_softmax_dinput(p[k], dp[k], (float)s);
}

void lm_attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv, const float *att,
                           int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            size_t off = (size_t)b * T * C3 + (size_t)h * hs;
            const float *q = qkv + off, *k = q + C, *v = q + 2 * C;
            float *dq = dqkv + off, *dk = dq + C, *dv = dq + 2 * C;
            const float *a = att + ((size_t)b * NH + h) * (size_t)T * T;
            const float *dy = dout + (size_t)b * T * C + (size_t)h * hs;
            /* dP = dY V^T;  dV += P^T dY */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, dy, C, v, C3, 0.0f, scratch,
                        T);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, dy, C, 1.0f, dv, C3);
            for (int t = 0; t < T; t++)
                softmax_backward_row(scratch + (size_t)t * T, a + (size_t)t * T, T);
            /* dQ += scale dS K;  dK += scale dS^T Q */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, scale, scratch, T, k, C3, 1.0f,
                        dq, C3);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, scale, scratch, T, q, C3, 1.0f, dk,
                        C3);
        }
}

void lm_gelu_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = lm_gelu(inp[i]);
}

void lm_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dinp[i] += lm_gelu_grad(inp[i]) * dout[i];
}

void lm_residual_forward(float *out, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

void lm_residual_backward(float *dinp, const float *dout, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dinp[i] += dout[i];
}

float lm_xent_forward(float *losses, float *lse, const float *logits, const int *targets, int N, int V,
                      int Vp)
{
    double total = 0;
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * Vp;
        float mx = -INFINITY;
        for (int v = 0; v < V; v++)
            if (z[v] > mx)
                mx = z[v];
        double sum = 0;
        for (int v = 0; v < V; v++)
            sum += expf(z[v] - mx);
        lse[n] = lm_xent_logsumexp(mx, (float)sum);
        losses[n] = lm_xent_loss(lse[n], z[targets[n]]);
        total += losses[n];
    }
    return (float)(total / N);
}

void lm_xent_backward(float *dlogits, const float *logits, const float *lse, const int *targets, int N, int V,
                      int Vp, float scale)
{
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * Vp;
        float *d = dlogits + (size_t)n * Vp;
        for (int v = 0; v < V; v++)
            d[v] = lm_xent_dlogit(z[v], lse[n], v == targets[n], scale);
        memset(d + V, 0, (size_t)(Vp - V) * sizeof *d);
    }
}
