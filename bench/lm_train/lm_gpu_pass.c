/* lm_train's forward and backward passes on the GPU, in llm.c's order (train_gpt2.cu gpt2_forward and
 * gpt2_backward): each block's backward ends with its first layernorm, and the caller is told at that point,
 * so that the block's gradient bucket can be reduced while the blocks below are still in backward. */
#include <math.h>

#include "ga_cuda.h"
#include "lm_gpu_model.h"

#define K(call) GA_CUDA_CHECK(call)

/* Row-major out[BT x OC] = inp[BT x C] W[OC x C]^T (+ bias, GELU with the pre-activation into gelu_aux). */
static void matmul_forward(lm_gpu_model *g, lm_bf16 *out, const lm_bf16 *inp, const lm_bf16 *w,
                           const lm_bf16 *bias, int BT, int C, int OC, lm_bf16 *gelu_aux)
{
    lm_gemm_args a = {.d = out,
                      .a = w,
                      .b = inp,
                      .m = OC,
                      .n = BT,
                      .k = C,
                      .trans_a = true,
                      .bias = bias,
                      .gelu_aux = gelu_aux};
    lm_gemm(&g->blas, &a);
}

/* dinp = dout W (overwritten), dweight += dout^T inp, dbias += column sums of dout (when dbias). */
static void matmul_backward(lm_gpu_model *g, lm_bf16 *dinp, lm_bf16 *dweight, lm_bf16 *dbias,
                            const lm_bf16 *dout, const lm_bf16 *inp, const lm_bf16 *w, int BT, int C, int OC,
                            cudaStream_t s)
{
    lm_gemm_args din = {.d = dinp, .a = w, .b = dout, .m = C, .n = BT, .k = OC};
    lm_gemm(&g->blas, &din);
    lm_gemm_args dw = {
        .d = dweight, .a = inp, .b = dout, .m = C, .n = OC, .k = BT, .trans_b = true, .accumulate = true};
    lm_gemm(&g->blas, &dw);
    if (dbias)
        K(lm_k_bias_backward(dbias, g->a.col_scratch, dout, BT, OC, s));
}

/* A strided-batched GEMM over the B*NH heads. */
static void heads_gemm(lm_gpu_model *g, lm_bf16 *d, const lm_bf16 *a, const lm_bf16 *b, int m, int n, int k,
                       bool ta, bool tb, long long sa, long long sb, long long sd)
{
    lm_gemm_args x = {.d = d,
                      .a = a,
                      .b = b,
                      .m = m,
                      .n = n,
                      .k = k,
                      .trans_a = ta,
                      .trans_b = tb,
                      .batch = g->B * g->cfg.heads,
                      .stride_a = sa,
                      .stride_b = sb,
                      .stride_d = sd};
    lm_gemm(&g->blas, &x);
}

static void attention_forward(lm_gpu_model *g, lm_gpu_block_acts *k, cudaStream_t s)
{
    lm_gpu_acts *a = &g->a;
    int B = g->B, T = g->cfg.seq_len, NH = g->cfg.heads, HS = g->cfg.channels / NH;
    long long ths = (long long)T * HS, tt = (long long)T * T;
    K(lm_k_attn_permute(a->q, a->k, a->v, k->qkv, B, T, NH, HS, s));
    heads_gemm(g, a->preatt, a->k, a->q, T, T, HS, true, false, ths, ths, tt); /* q k^T */
    K(lm_k_softmax_causal_forward(k->att, a->preatt, 1.0f / sqrtf((float)HS), B * NH, T, s));
    heads_gemm(g, a->y, a->v, k->att, HS, T, T, false, false, ths, tt, ths); /* att v */
    K(lm_k_attn_unpermute(k->atty, a->y, B, T, NH, HS, s));
}

/* datty (in a->dtmp) -> dqkv. */
static void attention_backward(lm_gpu_model *g, lm_gpu_block_acts *k, cudaStream_t s)
{
    lm_gpu_acts *a = &g->a;
    int B = g->B, T = g->cfg.seq_len, NH = g->cfg.heads, HS = g->cfg.channels / NH;
    long long ths = (long long)T * HS, tt = (long long)T * T;
    K(lm_k_attn_unpermute_backward(a->y, a->dtmp, B, T, NH, HS, s)); /* y holds dy */
    K(lm_k_attn_permute(a->q, a->k, a->v, k->qkv, B, T, NH, HS, s));
    heads_gemm(g, a->preatt, a->v, a->y, T, T, HS, true, false, ths, ths, tt); /* datt = dy v^T */
    heads_gemm(g, a->dv, a->y, k->att, HS, T, T, false, true, ths, tt, ths);   /* dv = att^T dy */
    K(lm_k_softmax_causal_backward(a->preatt, a->preatt, k->att, 1.0f / sqrtf((float)HS), B * NH, T, s));
    heads_gemm(g, a->dq, a->k, a->preatt, HS, T, T, false, false, ths, tt, ths); /* dq = dpreatt k */
    heads_gemm(g, a->dk, a->q, a->preatt, HS, T, T, false, true, ths, tt, ths);  /* dk = dpreatt^T q */
    K(lm_k_attn_permute_backward(a->dqkv, a->dq, a->dk, a->dv, B, T, NH, HS, s));
}

static void block_forward(lm_gpu_model *g, int l, cudaStream_t s)
{
    const lm_gpu_block_offsets *o = &g->off.blocks[l];
    lm_gpu_block_acts *k = &g->a.blocks[l];
    const lm_bf16 *x = l == 0 ? g->a.encoded : g->a.blocks[l - 1].residual3, *p = g->params;
    int BT = g->B * g->cfg.seq_len, C = g->cfg.channels;
    size_t n = (size_t)BT * C;
    K(lm_k_layernorm_forward(k->ln1, k->ln1_mean, k->ln1_rstd, x, p + o->ln1w, p + o->ln1b, BT, C, s));
    matmul_forward(g, k->qkv, k->ln1, p + o->qkvw, p + o->qkvb, BT, C, 3 * C, NULL);
    attention_forward(g, k, s);
    matmul_forward(g, g->a.dtmp, k->atty, p + o->attprojw, p + o->attprojb, BT, C, C, NULL);
    K(lm_k_residual_forward(k->residual2, x, g->a.dtmp, n, s));
    K(lm_k_layernorm_forward(k->ln2, k->ln2_mean, k->ln2_rstd, k->residual2, p + o->ln2w, p + o->ln2b, BT, C,
                             s));
    if (g->gelu_fused) {
        matmul_forward(g, k->fch_gelu, k->ln2, p + o->fcw, p + o->fcb, BT, C, 4 * C, k->fch);
    } else {
        matmul_forward(g, k->fch, k->ln2, p + o->fcw, p + o->fcb, BT, C, 4 * C, NULL);
        K(lm_k_gelu_forward(k->fch_gelu, k->fch, 4 * n, s));
    }
    matmul_forward(g, g->a.dtmp, k->fch_gelu, p + o->fcprojw, p + o->fcprojb, BT, 4 * C, C, NULL);
    K(lm_k_residual_forward(k->residual3, k->residual2, g->a.dtmp, n, s));
}

void lm_gpu_forward(lm_gpu_model *g, float dloss_scale, float loss_scale, cudaStream_t s)
{
    const lm_config *cfg = &g->cfg;
    lm_gpu_acts *a = &g->a;
    int BT = g->B * cfg->seq_len, C = cfg->channels, L = cfg->layers;
    K(lm_k_encoder_forward(a->encoded, a->tokens, g->params + g->off.wte, g->params + g->off.wpe, g->B,
                           cfg->seq_len, C, s));
    for (int l = 0; l < L; l++)
        block_forward(g, l, s);
    K(lm_k_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, a->blocks[L - 1].residual3,
                             g->params + g->off.lnfw, g->params + g->off.lnfb, BT, C, s));
    matmul_forward(g, a->logits, a->lnf, g->params + g->off.wte, NULL, BT, C, cfg->padded_vocab, NULL);
    K(lm_k_fused_classifier(a->logits, a->losses, a->targets, BT, cfg->vocab, cfg->padded_vocab, dloss_scale,
                            s));
    K(lm_k_loss_accumulate(a->loss_sum, a->losses, BT, loss_scale / (float)BT, s));
}

/* Block l's backward: dresidual holds d(residual3) on entry, d(block input) on exit. */
static void block_backward(lm_gpu_model *g, int l, cudaStream_t s)
{
    const lm_gpu_block_offsets *o = &g->off.blocks[l];
    lm_gpu_block_acts *k = &g->a.blocks[l];
    lm_gpu_acts *a = &g->a;
    const lm_bf16 *x = l == 0 ? a->encoded : a->blocks[l - 1].residual3, *p = g->params;
    lm_bf16 *d = g->grads;
    int BT = g->B * g->cfg.seq_len, C = g->cfg.channels;
    matmul_backward(g, a->dfch, d + o->fcprojw, d + o->fcprojb, a->dresidual, k->fch_gelu, p + o->fcprojw, BT,
                    4 * C, C, s);
    K(lm_k_gelu_backward(a->dfch, k->fch, a->dfch, (size_t)BT * 4 * C, s));
    matmul_backward(g, a->dtmp, d + o->fcw, d + o->fcb, a->dfch, k->ln2, p + o->fcw, BT, C, 4 * C, s);
    K(lm_k_layernorm_backward(a->dresidual, d + o->ln2w, d + o->ln2b, a->col_scratch, a->dtmp, k->residual2,
                              p + o->ln2w, k->ln2_mean, k->ln2_rstd, BT, C, s));
    matmul_backward(g, a->dtmp, d + o->attprojw, d + o->attprojb, a->dresidual, k->atty, p + o->attprojw, BT,
                    C, C, s);
    attention_backward(g, k, s);
    matmul_backward(g, a->dtmp, d + o->qkvw, d + o->qkvb, a->dqkv, k->ln1, p + o->qkvw, BT, C, 3 * C, s);
    K(lm_k_layernorm_backward(a->dresidual, d + o->ln1w, d + o->ln1b, a->col_scratch, a->dtmp, x, p + o->ln1w,
                              k->ln1_mean, k->ln1_rstd, BT, C, s));
}

void lm_gpu_backward(lm_gpu_model *g, int n_groups, lm_gpu_block_done on_block, void *ctx, cudaStream_t s)
{
    const lm_config *cfg = &g->cfg;
    lm_gpu_acts *a = &g->a;
    int BT = g->B * cfg->seq_len, C = cfg->channels, L = cfg->layers;
    lm_bf16 *d = g->grads;
    const lm_bf16 *p = g->params;
    K(cudaMemsetAsync(a->dresidual, 0, (size_t)BT * C * sizeof(lm_bf16), s));
    matmul_backward(g, a->dtmp, d + g->off.wte, NULL, a->logits, a->lnf, p + g->off.wte, BT, C,
                    cfg->padded_vocab, s);
    K(lm_k_layernorm_backward(a->dresidual, d + g->off.lnfw, d + g->off.lnfb, a->col_scratch, a->dtmp,
                              a->blocks[L - 1].residual3, p + g->off.lnfw, a->lnf_mean, a->lnf_rstd, BT, C,
                              s));
    for (int l = L - 1; l >= 0; l--) {
        block_backward(g, l, s);
        if (on_block)
            on_block(ctx, l);
    }
    K(lm_k_encoder_backward(d + g->off.wte, d + g->off.wpe, a->dresidual, a->group_token, a->group_start,
                            a->group_pos, n_groups, g->B, cfg->seq_len, C, s));
    if (on_block)
        on_block(ctx, -1);
}
