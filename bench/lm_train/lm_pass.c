/* lm_train's host forward and backward passes: the order of the layers, block by block, and which activation
 * each layer reads and writes. */
#include <string.h>

#include "lm_layers.h"
#include "lm_model.h"

/* The residual stream entering block l (its output is the next block's input). */
static float *block_input(const lm_acts *a, int l)
{
    return l == 0 ? a->encoded : a->blocks[l - 1].residual3;
}

static void block_forward(lm_model *m, int l)
{
    const lm_config *c = &m->cfg;
    int N = m->batch * c->seq_len, C = c->channels;
    size_t nc = (size_t)N * C;
    const lm_block_params *p = &m->p.blocks[l];
    lm_block_acts *a = &m->a.blocks[l];
    float *x = block_input(&m->a, l);
    lm_layernorm_forward(a->ln1, a->ln1_mean, a->ln1_rstd, x, p->ln1w, p->ln1b, N, C);
    lm_matmul_forward(a->qkv, a->ln1, p->qkvw, p->qkvb, N, C, 3 * C);
    lm_attention_forward(a->atty, a->att, a->qkv, m->batch, c->seq_len, C, c->heads);
    lm_matmul_forward(a->residual2, a->atty, p->attprojw, p->attprojb, N, C, C);
    lm_residual_forward(a->residual2, a->residual2, x, nc);
    lm_layernorm_forward(a->ln2, a->ln2_mean, a->ln2_rstd, a->residual2, p->ln2w, p->ln2b, N, C);
    lm_matmul_forward(a->fch, a->ln2, p->fcw, p->fcb, N, C, 4 * C);
    lm_gelu_forward(a->fch_gelu, a->fch, 4 * nc);
    lm_matmul_forward(a->residual3, a->fch_gelu, p->fcprojw, p->fcprojb, N, 4 * C, C);
    lm_residual_forward(a->residual3, a->residual3, a->residual2, nc);
}

float lm_forward(lm_model *m, const int *tokens, const int *targets)
{
    const lm_config *c = &m->cfg;
    int B = m->batch, T = c->seq_len, C = c->channels, N = B * T;
    memcpy(m->tokens, tokens, (size_t)N * sizeof *tokens);
    lm_encoder_forward(m->a.encoded, tokens, m->p.wte, m->p.wpe, B, T, C);
    for (int l = 0; l < c->layers; l++)
        block_forward(m, l);
    lm_acts *a = &m->a;
    lm_layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, block_input(a, c->layers), m->p.lnfw, m->p.lnfb, N,
                         C);
    lm_matmul_forward(a->logits, a->lnf, m->p.wte, NULL, N, C, c->padded_vocab); /* tied output embedding */
    m->loss = -1.0f;
    if (!targets)
        return m->loss;
    memcpy(m->targets, targets, (size_t)N * sizeof *targets);
    m->loss = lm_xent_forward(a->losses, a->lse, a->logits, targets, N, c->vocab, c->padded_vocab);
    return m->loss;
}

/* Backward through block l: from the gradient at its output (da.blocks[l].residual3) to the gradient at its
 * input, added into the previous block's residual3 gradient (or the embeddings'). */
static void block_backward(lm_model *m, int l)
{
    const lm_config *c = &m->cfg;
    int N = m->batch * c->seq_len, C = c->channels;
    size_t nc = (size_t)N * C;
    const lm_block_params *p = &m->p.blocks[l];
    lm_block_params *g = &m->g.blocks[l];
    const lm_block_acts *a = &m->a.blocks[l];
    lm_block_acts *d = &m->da.blocks[l];
    float *x = block_input(&m->a, l), *dx = block_input(&m->da, l);
    /* residual3 = residual2 + fcproj(gelu(fc(ln2(residual2)))) */
    lm_residual_backward(d->residual2, d->residual3, nc);
    lm_matmul_backward(d->fch_gelu, g->fcprojw, g->fcprojb, d->residual3, a->fch_gelu, p->fcprojw, N, 4 * C,
                       C);
    lm_gelu_backward(d->fch, a->fch, d->fch_gelu, 4 * nc);
    lm_matmul_backward(d->ln2, g->fcw, g->fcb, d->fch, a->ln2, p->fcw, N, C, 4 * C);
    lm_layernorm_backward(d->residual2, g->ln2w, g->ln2b, d->ln2, a->residual2, p->ln2w, a->ln2_mean,
                          a->ln2_rstd, N, C);
    /* residual2 = x + attproj(attention(qkv(ln1(x)))) */
    lm_residual_backward(dx, d->residual2, nc);
    lm_matmul_backward(d->atty, g->attprojw, g->attprojb, d->residual2, a->atty, p->attprojw, N, C, C);
    lm_attention_backward(d->qkv, d->att, d->atty, a->qkv, a->att, m->batch, c->seq_len, C, c->heads);
    lm_matmul_backward(d->ln1, g->qkvw, g->qkvb, d->qkv, a->ln1, p->qkvw, N, C, 3 * C);
    lm_layernorm_backward(dx, g->ln1w, g->ln1b, d->ln1, x, p->ln1w, a->ln1_mean, a->ln1_rstd, N, C);
}

void lm_backward(lm_model *m, float loss_scale)
{
    lm_backward_hooked(m, loss_scale, NULL, NULL);
}

void lm_backward_hooked(lm_model *m, float loss_scale, lm_block_done_fn done, void *user)
{
    const lm_config *c = &m->cfg;
    int B = m->batch, T = c->seq_len, C = c->channels, N = B * T;
    const lm_acts *a = &m->a;
    lm_acts *d = &m->da;
    memset(m->dact_mem, 0, m->n_acts * sizeof(float));
    /* d.logits holds dlogits; the mean over N positions gives each row 1/N */
    lm_xent_backward(d->logits, a->logits, a->lse, m->targets, N, c->vocab, c->padded_vocab, loss_scale / N);
    lm_matmul_backward(d->lnf, m->g.wte, NULL, d->logits, a->lnf, m->p.wte, N, C, c->padded_vocab);
    lm_layernorm_backward(block_input(d, c->layers), m->g.lnfw, m->g.lnfb, d->lnf, block_input(a, c->layers),
                          m->p.lnfw, a->lnf_mean, a->lnf_rstd, N, C);
    for (int l = c->layers - 1; l >= 0; l--) {
        block_backward(m, l);
        if (done)
            done(user, l);
    }
    lm_encoder_backward(m->g.wte, m->g.wpe, d->encoded, m->tokens, B, T, C);
    if (done)
        done(user, LM_BLOCK_REST);
}
