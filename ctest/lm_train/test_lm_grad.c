/* lm_train's backward passes against central finite differences: each layer alone (embeddings, layernorm,
 * linear, causal attention, GELU MLP, cross-entropy) and the whole model on a tiny configuration.
 *
 * Method: for a layer y = f(x) and a fixed random upstream gradient dy, the scalar is S(x) = sum(dy * f(x)),
 * accumulated in double over the fp32 outputs; the analytic dS/dx from the layer's backward is compared with
 * (S(x + h) - S(x - h)) / 2h at each checked element. The error of a tensor is max |analytic - numeric| over
 * its checked elements divided by max |numeric| there (a relative error against the tensor's own scale, so
 * that near-zero entries do not blow it up). fp32 rounding of S, about 1e-7 |S| / h, sets the floor: with h =
 * 1e-2 the layers measure below 1e-3 and the bound is LM_FD_BOUND = 1e-2 (the measured figures are printed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_test.h"
#include "lm_layers.h"
#include "lm_math.h"
#include "lm_model.h"
#include "lm_rng.h"

#define LM_FD_BOUND 1e-2
#define LM_FD_H 1e-2f

static float *randn(size_t n, double std, uint64_t seed)
{
    float *x = malloc(n * sizeof *x);
    lm_rng r = lm_rng_for(seed, 99, 0);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(std * lm_rng_normal(&r));
    return x;
}

static float *zeros(size_t n)
{
    return calloc(n, sizeof(float));
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* The layer under test as S(x) = sum(dy * f(x)), its context in ctx. */
typedef double (*scalar_fn)(void *ctx);

/* Relative error of analytic[] against the central difference of S at every `stride`-th element of x. */
static double fd_error(scalar_fn S, void *ctx, float *x, const float *analytic, size_t n, size_t stride,
                       float h)
{
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; i += stride) {
        float keep = x[i];
        x[i] = keep + h;
        double up = S(ctx);
        x[i] = keep - h;
        double down = S(ctx);
        x[i] = keep;
        double numeric = (up - down) / (2.0 * h);
        worst = fmax(worst, fabs(numeric - analytic[i]));
        scale = fmax(scale, fabs(numeric));
    }
    return scale > 0 ? worst / scale : worst;
}

static void report(const char *what, double err)
{
    printf("fd %-28s relative error %.2e\n", what, err);
    CHECKF(err < LM_FD_BOUND, "%s: %.3e >= %.0e", what, err, LM_FD_BOUND);
}

/* ---- layernorm ---- */
typedef struct {
    int N, C;
    float *x, *w, *b, *out, *mean, *rstd, *dy;
} ln_ctx;

static double ln_scalar(void *p)
{
    ln_ctx *c = p;
    lm_layernorm_forward(c->out, c->mean, c->rstd, c->x, c->w, c->b, c->N, c->C);
    return dot(c->dy, c->out, (size_t)c->N * c->C);
}

static void test_layernorm(void)
{
    ln_ctx c = {.N = 6, .C = 24};
    size_t nc = (size_t)c.N * c.C;
    c.x = randn(nc, 1.0, 1), c.w = randn(c.C, 1.0, 2), c.b = randn(c.C, 1.0, 3), c.dy = randn(nc, 1.0, 4);
    c.out = zeros(nc), c.mean = zeros(c.N), c.rstd = zeros(c.N);
    float *dx = zeros(nc), *dw = zeros(c.C), *db = zeros(c.C);
    ln_scalar(&c);
    lm_layernorm_backward(dx, dw, db, c.dy, c.x, c.w, c.mean, c.rstd, c.N, c.C);
    report("layernorm dx", fd_error(ln_scalar, &c, c.x, dx, nc, 1, LM_FD_H));
    report("layernorm dweight", fd_error(ln_scalar, &c, c.w, dw, c.C, 1, LM_FD_H));
    report("layernorm dbias", fd_error(ln_scalar, &c, c.b, db, c.C, 1, LM_FD_H));
    free(c.x), free(c.w), free(c.b), free(c.dy), free(c.out), free(c.mean), free(c.rstd), free(dx), free(dw),
        free(db);
}

/* ---- GELU MLP: fc (C -> 4C) + bias, GELU, projection (4C -> C) + bias ---- */
typedef struct {
    int N, C;
    float *x, *fcw, *fcb, *pw, *pb, *h, *hg, *out, *dy;
} mlp_ctx;

static double mlp_scalar(void *p)
{
    mlp_ctx *c = p;
    lm_matmul_forward(c->h, c->x, c->fcw, c->fcb, c->N, c->C, 4 * c->C);
    lm_gelu_forward(c->hg, c->h, (size_t)c->N * 4 * c->C);
    lm_matmul_forward(c->out, c->hg, c->pw, c->pb, c->N, 4 * c->C, c->C);
    return dot(c->dy, c->out, (size_t)c->N * c->C);
}

static void test_mlp(void)
{
    mlp_ctx c = {.N = 5, .C = 8};
    size_t nc = (size_t)c.N * c.C, w = 4 * (size_t)c.C * c.C;
    c.x = randn(nc, 1.0, 5), c.fcw = randn(w, 0.5, 6), c.fcb = randn(4 * c.C, 0.5, 7),
    c.pw = randn(w, 0.5, 8);
    c.pb = randn(c.C, 0.5, 9), c.dy = randn(nc, 1.0, 10);
    c.h = zeros(4 * nc), c.hg = zeros(4 * nc), c.out = zeros(nc);
    float *dx = zeros(nc), *dfcw = zeros(w), *dfcb = zeros(4 * c.C), *dpw = zeros(w), *dpb = zeros(c.C);
    float *dhg = zeros(4 * nc), *dh = zeros(4 * nc);
    mlp_scalar(&c);
    lm_matmul_backward(dhg, dpw, dpb, c.dy, c.hg, c.pw, c.N, 4 * c.C, c.C);
    lm_gelu_backward(dh, c.h, dhg, 4 * nc);
    lm_matmul_backward(dx, dfcw, dfcb, dh, c.x, c.fcw, c.N, c.C, 4 * c.C);
    report("mlp dx", fd_error(mlp_scalar, &c, c.x, dx, nc, 1, LM_FD_H));
    report("mlp dfc_weight", fd_error(mlp_scalar, &c, c.fcw, dfcw, w, 3, LM_FD_H));
    report("mlp dfc_bias", fd_error(mlp_scalar, &c, c.fcb, dfcb, 4 * c.C, 1, LM_FD_H));
    report("mlp dproj_weight", fd_error(mlp_scalar, &c, c.pw, dpw, w, 3, LM_FD_H));
    report("mlp dproj_bias", fd_error(mlp_scalar, &c, c.pb, dpb, c.C, 1, LM_FD_H));
    free(c.x), free(c.fcw), free(c.fcb), free(c.pw), free(c.pb), free(c.dy), free(c.h), free(c.hg),
        free(c.out);
    free(dx), free(dfcw), free(dfcb), free(dpw), free(dpb), free(dhg), free(dh);
}

/* GELU's derivative alone, in double against the formula's own central difference, over [-6, 6]. */
static void test_gelu_grad(void)
{
    double worst = 0;
    for (double x = -6; x <= 6; x += 0.05) {
        double h = 1e-3, numeric = (lm_gelu((float)(x + h)) - lm_gelu((float)(x - h))) / (2 * h);
        worst = fmax(worst, fabs(numeric - lm_gelu_grad((float)x)));
    }
    printf("fd %-28s absolute error %.2e\n", "gelu'(x), x in [-6, 6]", worst);
    CHECKF(worst < 1e-3, "gelu grad error %.3e", worst);
    CHECK(fabsf(lm_gelu(0.0f)) < 1e-9f && fabsf(lm_gelu(10.0f) - 10.0f) < 1e-5f &&
          fabsf(lm_gelu(-10.0f)) < 1e-5f);
}

/* ---- causal attention ---- */
typedef struct {
    int B, T, C, NH;
    float *qkv, *att, *out, *dy;
} att_ctx;

static double att_scalar(void *p)
{
    att_ctx *c = p;
    lm_attention_forward(c->out, c->att, c->qkv, c->B, c->T, c->C, c->NH);
    return dot(c->dy, c->out, (size_t)c->B * c->T * c->C);
}

static void test_attention(void)
{
    att_ctx c = {.B = 2, .T = 7, .C = 12, .NH = 3};
    size_t n = (size_t)c.B * c.T * 3 * c.C, nc = (size_t)c.B * c.T * c.C;
    c.qkv = randn(n, 1.0, 11), c.dy = randn(nc, 1.0, 12);
    c.att = zeros((size_t)c.B * c.NH * c.T * c.T), c.out = zeros(nc);
    float *dqkv = zeros(n), *scratch = zeros((size_t)c.T * c.T);
    att_scalar(&c);
    lm_attention_backward(dqkv, scratch, c.dy, c.qkv, c.att, c.B, c.T, c.C, c.NH);
    report("attention dqkv", fd_error(att_scalar, &c, c.qkv, dqkv, n, 1, LM_FD_H));
    /* the mask: no probability above the diagonal, each row sums to 1 */
    int masked = 1;
    for (int h = 0; h < c.B * c.NH; h++)
        for (int t = 0; t < c.T; t++) {
            double sum = 0;
            for (int k = 0; k < c.T; k++) {
                float a = c.att[((size_t)h * c.T + t) * c.T + k];
                masked &= k <= t || a == 0.0f;
                sum += a;
            }
            masked &= fabs(sum - 1.0) < 1e-5;
        }
    CHECKF(masked, "causal probabilities: zero above the diagonal, rows summing to 1");
    free(c.qkv), free(c.dy), free(c.att), free(c.out), free(dqkv), free(scratch);
}

/* ---- cross-entropy over a padded vocabulary: the loss itself is S, no upstream gradient ---- */
typedef struct {
    int N, V, Vp;
    float *logits, *losses, *lse;
    const int *targets;
} xent_ctx;

static double xent_scalar(void *p)
{
    xent_ctx *c = p;
    return lm_xent_forward(c->losses, c->lse, c->logits, c->targets, c->N, c->V, c->Vp);
}

static void test_xent(void)
{
    static const int targets[4] = {0, 9, 3, 9};
    xent_ctx c = {.N = 4, .V = 10, .Vp = 16, .targets = targets};
    size_t n = (size_t)c.N * c.Vp;
    c.logits = randn(n, 2.0, 13), c.losses = zeros(c.N), c.lse = zeros(c.N);
    float *dlogits = randn(n, 1.0, 14); /* garbage: the backward must write every entry */
    double mean = xent_scalar(&c);
    lm_xent_backward(dlogits, c.logits, c.lse, c.targets, c.N, c.V, c.Vp, 1.0f / c.N);
    report("cross-entropy dlogits", fd_error(xent_scalar, &c, c.logits, dlogits, n, 1, LM_FD_H));
    /* the padding is outside the softmax: no gradient, and the loss does not move when it does */
    int padded_zero = 1;
    for (int r = 0; r < c.N; r++)
        for (int v = c.V; v < c.Vp; v++)
            padded_zero &= dlogits[(size_t)r * c.Vp + v] == 0.0f;
    CHECKF(padded_zero, "padded logits get no gradient");
    for (int v = c.V; v < c.Vp; v++)
        c.logits[v] += 100.0f;
    CHECKF(fabs(xent_scalar(&c) - mean) < 1e-6, "the loss ignores the padded logits");
    /* against a direct double computation of row 0's loss */
    double s = 0;
    for (int v = 0; v < c.V; v++)
        s += exp((double)c.logits[v]);
    CHECKF(fabs(c.losses[0] - (log(s) - c.logits[targets[0]])) < 1e-5, "row 0 loss %g", c.losses[0]);
    free(c.logits), free(c.losses), free(c.lse), free(dlogits);
}

/* ---- embeddings ---- */
typedef struct {
    int B, T, C;
    const int *tokens;
    float *wte, *wpe, *out, *dy;
} enc_ctx;

static double enc_scalar(void *p)
{
    enc_ctx *c = p;
    lm_encoder_forward(c->out, c->tokens, c->wte, c->wpe, c->B, c->T, c->C);
    return dot(c->dy, c->out, (size_t)c->B * c->T * c->C);
}

static void test_encoder(void)
{
    static const int tokens[6] = {2, 0, 2, 4, 1, 2}; /* token 2 three times: its gradient accumulates */
    enc_ctx c = {.B = 2, .T = 3, .C = 5, .tokens = tokens};
    size_t nc = (size_t)c.B * c.T * c.C;
    c.wte = randn(6 * (size_t)c.C, 1.0, 15), c.wpe = randn((size_t)c.T * c.C, 1.0, 16);
    c.out = zeros(nc), c.dy = randn(nc, 1.0, 17);
    float *dwte = zeros(6 * (size_t)c.C), *dwpe = zeros((size_t)c.T * c.C);
    enc_scalar(&c);
    lm_encoder_backward(dwte, dwpe, c.dy, c.tokens, c.B, c.T, c.C);
    report("embedding dwte", fd_error(enc_scalar, &c, c.wte, dwte, 6 * (size_t)c.C, 1, LM_FD_H));
    report("embedding dwpe", fd_error(enc_scalar, &c, c.wpe, dwpe, (size_t)c.T * c.C, 1, LM_FD_H));
    free(c.wte), free(c.wpe), free(c.out), free(c.dy), free(dwte), free(dwpe);
}

/* ---- the whole model: d(mean loss)/d(every tensor), sampled ---- */
typedef struct {
    lm_model *m;
    const int *tokens, *targets;
} model_ctx;

static double model_scalar(void *p)
{
    model_ctx *c = p;
    return lm_forward(c->m, c->tokens, c->targets);
}

static void check_tensor(model_ctx *c, const char *name, float *param, size_t n)
{
    size_t off = (size_t)(param - c->m->params);
    size_t stride = n > 40 ? n / 40 + 1 : 1; /* about 40 elements of each tensor */
    char what[64];
    snprintf(what, sizeof what, "model %s", name);
    report(what, fd_error(model_scalar, c, param, c->m->grads + off, n, stride, LM_FD_H));
}

static void test_model(void)
{
    lm_config cfg;
    char err[160];
    CHECKF(lm_config_make(&cfg, 2, 16, 4, 8, 37, err, sizeof err) == 0, "%s", err);
    lm_model m;
    CHECKF(lm_model_init(&m, &cfg, 2, err, sizeof err) == 0, "%s", err);
    lm_model_init_params(&m, 5);
    /* larger, nonzero weights everywhere (biases and layernorms too), so that every gradient is well above
     * the finite difference's rounding floor */
    lm_rng r = lm_rng_for(7, 7, 7);
    for (size_t i = 0; i < (size_t)cfg.vocab * cfg.channels; i++)
        m.params[i] += (float)(0.3 * lm_rng_normal(&r));
    for (size_t i = (size_t)cfg.padded_vocab * cfg.channels; i < m.n_params; i++)
        m.params[i] += (float)(0.3 * lm_rng_normal(&r));
    int tokens[16], targets[16];
    for (int i = 0; i < 16; i++)
        tokens[i] = (i * 7 + 3) % cfg.vocab, targets[i] = (i * 11 + 1) % cfg.vocab;
    model_ctx c = {&m, tokens, targets};
    lm_zero_grad(&m);
    lm_forward(&m, tokens, targets);
    lm_backward(&m, 1.0f);
    const lm_block_params *b = &m.p.blocks[0], *b1 = &m.p.blocks[1];
    size_t C = (size_t)cfg.channels;
    check_tensor(&c, "wte", m.p.wte, (size_t)cfg.vocab * C);
    check_tensor(&c, "wpe", m.p.wpe, (size_t)cfg.seq_len * C);
    check_tensor(&c, "block0 ln1 weight", b->ln1w, C);
    check_tensor(&c, "block0 ln1 bias", b->ln1b, C);
    check_tensor(&c, "block0 qkv weight", b->qkvw, 3 * C * C);
    check_tensor(&c, "block0 qkv bias", b->qkvb, 3 * C);
    check_tensor(&c, "block0 attn proj weight", b->attprojw, C * C);
    check_tensor(&c, "block0 ln2 bias", b->ln2b, C);
    check_tensor(&c, "block0 fc weight", b->fcw, 4 * C * C);
    check_tensor(&c, "block0 fc proj weight", b->fcprojw, 4 * C * C);
    check_tensor(&c, "block1 qkv weight", b1->qkvw, 3 * C * C);
    check_tensor(&c, "block1 fc proj bias", b1->fcprojb, C);
    check_tensor(&c, "final ln weight", m.p.lnfw, C);
    check_tensor(&c, "final ln bias", m.p.lnfb, C);
    int pad_zero = 1;
    for (size_t i = (size_t)cfg.vocab * C; i < (size_t)cfg.padded_vocab * C; i++)
        pad_zero &= m.grads[i] == 0.0f;
    CHECKF(pad_zero, "the padded vocabulary rows of wte get no gradient");
    lm_model_free(&m);
}

int main(void)
{
    test_layernorm();
    test_mlp();
    test_gelu_grad();
    test_attention();
    test_xent();
    test_encoder();
    test_model();
    return ga_test_finish();
}
