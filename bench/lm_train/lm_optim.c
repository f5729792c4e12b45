/* lm_train's optimiser on the host: the learning-rate schedule, the global gradient norm, and AdamW over the
 * flat buffers with lm_math.h's per-parameter update (the one the GPU's update kernel calls). */
#include <math.h>

#include "lm_math.h"
#include "lm_model.h"

lm_optim_config lm_optim_defaults(int warmup_steps, int total_steps)
{
    lm_optim_config oc = {.lr = 6e-4f,
                          .beta1 = 0.9f,
                          .beta2 = 0.95f,
                          .eps = 1e-8f,
                          .weight_decay = 0.1f,
                          .grad_clip = 1.0f,
                          .min_lr_frac = 0.0f,
                          .warmup_steps = warmup_steps,
                          .total_steps = total_steps,
                          .linear_decay = 0};
    return oc;
}

/* Linear warm-up from lr/warmup to lr over the first warmup steps (llm.c: (step+1)/warmup), then decay to
 * min_lr_frac * lr at total_steps, by half a cosine or a straight line. */
float lm_lr_at(const lm_optim_config *oc, int step)
{
    if (step < oc->warmup_steps)
        return oc->lr * (float)(step + 1) / (float)oc->warmup_steps;
    float min_lr = oc->lr * oc->min_lr_frac;
    int span = oc->total_steps - oc->warmup_steps;
    if (span <= 0 || step >= oc->total_steps)
        return span <= 0 ? oc->lr : min_lr;
    double frac = (double)(step - oc->warmup_steps) / span; /* 0 .. 1 */
    double coeff = oc->linear_decay ? 1.0 - frac : 0.5 * (1.0 + cos(3.141592653589793 * frac));
    return min_lr + (float)coeff * (oc->lr - min_lr);
}

float lm_grad_norm(const float *grads, size_t n)
{
    double sq = 0;
    for (size_t i = 0; i < n; i++)
        sq += (double)grads[i] * grads[i];
    return (float)sqrt(sq);
}

/* AdamW over one tensor [start, start+n) of the flat buffers. */
static void adamw_range(lm_model *m, const float *start, size_t n, float lr, float wd, float grad_scale,
                        const lm_optim_config *oc, float b1c, float b2c)
{
    size_t off = (size_t)(start - m->params);
    for (size_t i = off; i < off + n; i++)
        lm_adamw_update(&m->params[i], &m->adam_m[i], &m->adam_v[i], m->grads[i] * grad_scale, lr, oc->beta1,
                        oc->beta2, oc->eps, wd, b1c, b2c);
}

float lm_optim_step(lm_model *m, const lm_optim_config *oc)
{
    const lm_config *cfg = &m->cfg;
    size_t c = (size_t)cfg->channels;
    float norm = lm_grad_norm(m->grads, m->n_params);
    float scale = lm_clip_scale(norm, oc->grad_clip), lr = lm_lr_at(oc, m->step), wd = oc->weight_decay;
    int t = ++m->step;
    float b1c = 1.0f - powf(oc->beta1, (float)t), b2c = 1.0f - powf(oc->beta2, (float)t);
    adamw_range(m, m->p.wte, (size_t)cfg->padded_vocab * c, lr, wd, scale, oc, b1c, b2c);
    adamw_range(m, m->p.wpe, (size_t)cfg->seq_len * c, lr, wd, scale, oc, b1c, b2c);
    for (int l = 0; l < cfg->layers; l++) {
        const lm_block_params *b = &m->p.blocks[l];
        /* The block's tensors in layout order, each with its decay: matrices decay, vectors do not. */
        const float *tensor[12] = {b->ln1w, b->ln1b, b->qkvw, b->qkvb, b->attprojw, b->attprojb,
                                   b->ln2w, b->ln2b, b->fcw,  b->fcb,  b->fcprojw,  b->fcprojb};
        const size_t len[12] = {c, c, 3 * c * c, 3 * c, c * c, c, c, c, 4 * c * c, 4 * c, 4 * c * c, c};
        const int decays[12] = {0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0};
        for (int k = 0; k < 12; k++)
            adamw_range(m, tensor[k], len[k], lr, decays[k] ? wd : 0.0f, scale, oc, b1c, b2c);
    }
    adamw_range(m, m->p.lnfw, 2 * c, lr, 0.0f, scale, oc, b1c, b2c);
    return norm;
}
