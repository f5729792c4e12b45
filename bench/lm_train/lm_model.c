/* lm_train's host model: the flat parameter and activation layouts, GPT-2's initialisation, and the forward
 * and backward passes that chain lm_layers.c's layers. */
#include "lm_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm_layers.h"
#include "lm_rng.h"

/* Carves consecutive tensors out of one buffer. */
typedef struct {
    float *next;
} lm_carver;

static float *carve(lm_carver *cv, size_t n)
{
    float *p = cv->next;
    cv->next += n;
    return p;
}

/* The parameter views over buffer `base`, in the order lm_model.h documents. */
static void map_params(lm_params *p, float *base, const lm_config *cfg)
{
    size_t c = (size_t)cfg->channels;
    lm_carver cv = {base};
    p->wte = carve(&cv, (size_t)cfg->padded_vocab * c);
    p->wpe = carve(&cv, (size_t)cfg->seq_len * c);
    for (int l = 0; l < cfg->layers; l++) {
        lm_block_params *b = &p->blocks[l];
        b->ln1w = carve(&cv, c);
        b->ln1b = carve(&cv, c);
        b->qkvw = carve(&cv, 3 * c * c);
        b->qkvb = carve(&cv, 3 * c);
        b->attprojw = carve(&cv, c * c);
        b->attprojb = carve(&cv, c);
        b->ln2w = carve(&cv, c);
        b->ln2b = carve(&cv, c);
        b->fcw = carve(&cv, 4 * c * c);
        b->fcb = carve(&cv, 4 * c);
        b->fcprojw = carve(&cv, 4 * c * c);
        b->fcprojb = carve(&cv, c);
    }
    p->lnfw = carve(&cv, c);
    p->lnfb = carve(&cv, c);
}

/* The activation views over buffer `base`; their total is lm_activation_count(cfg, B). */
static void map_acts(lm_acts *a, float *base, const lm_config *cfg, int B)
{
    size_t bt = (size_t)B * (size_t)cfg->seq_len, c = (size_t)cfg->channels;
    size_t scores = (size_t)B * (size_t)cfg->heads * (size_t)cfg->seq_len * (size_t)cfg->seq_len;
    lm_carver cv = {base};
    a->encoded = carve(&cv, bt * c);
    for (int l = 0; l < cfg->layers; l++) {
        lm_block_acts *k = &a->blocks[l];
        k->ln1 = carve(&cv, bt * c);
        k->ln1_mean = carve(&cv, bt);
        k->ln1_rstd = carve(&cv, bt);
        k->qkv = carve(&cv, 3 * bt * c);
        k->att = carve(&cv, scores);
        k->atty = carve(&cv, bt * c);
        k->residual2 = carve(&cv, bt * c);
        k->ln2 = carve(&cv, bt * c);
        k->ln2_mean = carve(&cv, bt);
        k->ln2_rstd = carve(&cv, bt);
        k->fch = carve(&cv, 4 * bt * c);
        k->fch_gelu = carve(&cv, 4 * bt * c);
        k->residual3 = carve(&cv, bt * c);
    }
    a->lnf = carve(&cv, bt * c);
    a->lnf_mean = carve(&cv, bt);
    a->lnf_rstd = carve(&cv, bt);
    a->logits = carve(&cv, bt * (size_t)cfg->padded_vocab);
    a->lse = carve(&cv, bt);
    a->losses = carve(&cv, bt);
}

void lm_block_range(const lm_config *cfg, int layer, size_t *offset, size_t *count)
{
    size_t c = (size_t)cfg->channels;
    *count = lm_layer_param_count(cfg);
    *offset = (size_t)cfg->padded_vocab * c + (size_t)cfg->seq_len * c + (size_t)layer * *count;
}

void lm_rest_ranges(const lm_config *cfg, size_t *head, size_t *tail_offset, size_t *tail_count)
{
    size_t c = (size_t)cfg->channels;
    *head = (size_t)cfg->padded_vocab * c + (size_t)cfg->seq_len * c;
    *tail_offset = *head + (size_t)cfg->layers * lm_layer_param_count(cfg);
    *tail_count = 2 * c;
}

int lm_model_init(lm_model *m, const lm_config *cfg, int batch, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->batch = batch;
    m->n_params = lm_param_count(cfg);
    m->n_acts = lm_activation_count(cfg, batch);
    size_t bt = (size_t)batch * (size_t)cfg->seq_len;
    m->params = calloc(4 * m->n_params, sizeof(float)); /* params, grads, m, v in one block */
    m->act_mem = calloc(2 * m->n_acts, sizeof(float));
    m->p.blocks = calloc((size_t)cfg->layers, sizeof *m->p.blocks);
    m->g.blocks = calloc((size_t)cfg->layers, sizeof *m->g.blocks);
    m->a.blocks = calloc((size_t)cfg->layers, sizeof *m->a.blocks);
    m->da.blocks = calloc((size_t)cfg->layers, sizeof *m->da.blocks);
    m->tokens = calloc(2 * bt, sizeof(int));
    if (!m->params || !m->act_mem || !m->p.blocks || !m->g.blocks || !m->a.blocks || !m->da.blocks ||
        !m->tokens) {
        snprintf(err, errlen,
                 "out of host memory for a model of %zu parameters and %zu activations at batch %d",
                 m->n_params, m->n_acts, batch);
        lm_model_free(m);
        return -1;
    }
    m->grads = m->params + m->n_params;
    m->adam_m = m->grads + m->n_params;
    m->adam_v = m->adam_m + m->n_params;
    m->dact_mem = m->act_mem + m->n_acts;
    m->targets = m->tokens + bt;
    map_params(&m->p, m->params, cfg);
    map_params(&m->g, m->grads, cfg);
    map_acts(&m->a, m->act_mem, cfg, batch);
    map_acts(&m->da, m->dact_mem, cfg, batch);
    return 0;
}

void lm_model_free(lm_model *m)
{
    free(m->params);
    free(m->act_mem);
    free(m->p.blocks);
    free(m->g.blocks);
    free(m->a.blocks);
    free(m->da.blocks);
    free(m->tokens);
    memset(m, 0, sizeof *m);
}

static void fill_normal(float *x, size_t n, double std, uint64_t seed, uint64_t stream)
{
    lm_rng r = lm_rng_for(seed, stream, 0);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(std * lm_rng_normal(&r));
}

static void fill_value(float *x, size_t n, float value)
{
    for (size_t i = 0; i < n; i++)
        x[i] = value;
}

void lm_model_init_params(lm_model *m, uint64_t seed)
{
    const lm_config *cfg = &m->cfg;
    size_t c = (size_t)cfg->channels;
    double std = 0.02, proj_std = 0.02 / sqrt(2.0 * cfg->layers); /* GPT-2: residual projections scaled */
    memset(m->params, 0, 4 * m->n_params * sizeof(float));
    fill_normal(m->p.wte, (size_t)cfg->vocab * c, std, seed, 0); /* padded rows stay 0 */
    fill_normal(m->p.wpe, (size_t)cfg->seq_len * c, std, seed, 1);
    for (int l = 0; l < cfg->layers; l++) {
        lm_block_params *b = &m->p.blocks[l];
        uint64_t s = 16 + 8 * (uint64_t)l; /* one stream per tensor */
        fill_value(b->ln1w, c, 1.0f);
        fill_value(b->ln2w, c, 1.0f);
        fill_normal(b->qkvw, 3 * c * c, std, seed, s);
        fill_normal(b->attprojw, c * c, proj_std, seed, s + 1);
        fill_normal(b->fcw, 4 * c * c, std, seed, s + 2);
        fill_normal(b->fcprojw, 4 * c * c, proj_std, seed, s + 3);
    }
    fill_value(m->p.lnfw, c, 1.0f);
    m->step = 0;
}

void lm_zero_grad(lm_model *m)
{
    memset(m->grads, 0, m->n_params * sizeof(float));
}
