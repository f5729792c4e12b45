/* lm_train's host model: GPT-2 in fp32 (token and learned position embeddings, pre-LayerNorm blocks, causal
 * multi-head attention, GELU MLP, final LayerNorm, output tied to the token embedding, vocabulary padded to a
 * multiple of 128 and masked to the real one), its forward with mean cross-entropy, its backward and AdamW.
 *
 * Parameters live in one contiguous buffer, block-major so that each block's gradients are one slice that a
 * data-parallel trainer can reduce as a bucket as soon as backward has left that block:
 *   wte [Vp x C], wpe [T x C],
 *   block 0..L-1: ln1w ln1b [C], qkvw [3C x C] qkvb [3C], attprojw [C x C] attprojb [C], ln2w ln2b [C],
 *                 fcw [4C x C] fcb [4C], fcprojw [C x 4C] fcprojb [C],
 *   lnfw lnfb [C].
 * Weights are [out x in], row-major (y = x W^T + b), as llm.c stores them. Pure: no MPI, no CUDA. */
#ifndef LM_MODEL_H
#define LM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "lm_config.h"

/* One block's parameters (or gradients): pointers into the flat buffer. */
typedef struct {
    float *ln1w, *ln1b, *qkvw, *qkvb, *attprojw, *attprojb, *ln2w, *ln2b, *fcw, *fcb, *fcprojw, *fcprojb;
} lm_block_params;

typedef struct {
    float *wte, *wpe, *lnfw, *lnfb;
    lm_block_params *blocks; /* L of them */
} lm_params;

/* One block's activations (or their gradients) for a batch B x T. */
typedef struct {
    float *ln1, *ln1_mean, *ln1_rstd; /* [BT x C], [BT], [BT] */
    float *qkv;                       /* [BT x 3C]: q, k, v, each head a C/NH slice */
    float *att;                       /* [B x NH x T x T]: probabilities; 0 above the diagonal */
    float *atty;                      /* [BT x C]: heads concatenated */
    float *residual2;                 /* [BT x C]: block input + attention projection */
    float *ln2, *ln2_mean, *ln2_rstd;
    float *fch, *fch_gelu; /* [BT x 4C] */
    float *residual3;      /* [BT x C]: block output */
} lm_block_acts;

typedef struct {
    float *encoded; /* [BT x C]: wte[token] + wpe[t] */
    lm_block_acts *blocks;
    float *lnf, *lnf_mean, *lnf_rstd;
    float *logits; /* [BT x Vp] */
    float *lse;    /* [BT]: logsumexp over the real vocabulary */
    float *losses; /* [BT] */
} lm_acts;

/* AdamW with warm-up, then cosine or linear decay to min_lr_frac * lr, and clipping by global norm. */
typedef struct {
    float lr, beta1, beta2, eps, weight_decay, grad_clip, min_lr_frac;
    int warmup_steps, total_steps;
    int linear_decay; /* 0: cosine */
} lm_optim_config;

typedef struct {
    lm_config cfg;
    int batch; /* B: sequences per micro-batch */
    size_t n_params;
    float *params, *grads, *adam_m, *adam_v;
    lm_params p, g;
    float *act_mem, *dact_mem;
    size_t n_acts;
    lm_acts a, da;
    int *tokens, *targets; /* [BT] each */
    float loss;            /* mean cross-entropy of the last forward */
    int step;              /* AdamW steps taken */
} lm_model;

/* Allocates the model for micro-batch `batch`; 0, or -1 with a one-line message (out of memory). */
int lm_model_init(lm_model *m, const lm_config *cfg, int batch, char *err, size_t errlen);
void lm_model_free(lm_model *m);

/* GPT-2's initialisation from seed: weights N(0, 0.02), the two residual projections N(0, 0.02/sqrt(2L)),
 * biases 0, layernorm weights 1; padded vocabulary rows 0. Clears gradients and AdamW state. */
void lm_model_init_params(lm_model *m, uint64_t seed);

/* Offset and length, in floats, of block l's parameters in the flat buffer (its gradient bucket). */
void lm_block_range(const lm_config *cfg, int layer, size_t *offset, size_t *count);

/* Forward over m->batch sequences of T tokens (each < V); with targets, the mean cross-entropy into m->loss
 * (and returned); without (NULL), only the logits. */
float lm_forward(lm_model *m, const int *tokens, const int *targets);

/* Backward of the last forward (which had targets): ADDS d(loss * loss_scale)/d(params) into m->grads, so
 * that micro-batches accumulate; loss_scale is 1 / accumulation steps. */
void lm_backward(lm_model *m, float loss_scale);

/* Called as backward leaves each block (layer L-1 down to 0): that block's gradient slice (lm_block_range) is
 * final for this backward, so a data-parallel trainer can start reducing it while the rest goes on. Last,
 * layer LM_BLOCK_REST: the embeddings' and the final layernorm's slices (lm_rest_ranges) are final. */
#define LM_BLOCK_REST (-1)
typedef void (*lm_block_done_fn)(void *user, int layer);

/* lm_backward calling done(user, layer) as above; done may be NULL. */
void lm_backward_hooked(lm_model *m, float loss_scale, lm_block_done_fn done, void *user);

/* The two slices outside the blocks: [0, *head) holds wte and wpe, [*tail_offset, n_params) lnfw and lnfb. */
void lm_rest_ranges(const lm_config *cfg, size_t *head, size_t *tail_offset, size_t *tail_count);

void lm_zero_grad(lm_model *m);

/* The learning rate at step (0-based) under the schedule. */
float lm_lr_at(const lm_optim_config *oc, int step);

/* Global L2 norm of the gradients (accumulated in double, in buffer order: deterministic). */
float lm_grad_norm(const float *grads, size_t n);

/* One AdamW step at the schedule's rate for m->step, the gradients scaled to clip the global norm first.
 * Weight decay applies to the matrices (embeddings, qkv, projections, MLP), not to biases and layernorms, as
 * llm.c train_gpt2.cu does. Returns the gradients' norm before clipping. */
float lm_optim_step(lm_model *m, const lm_optim_config *oc);

/* GPT-2/llm.c's defaults: lr 6e-4, betas 0.9/0.95, eps 1e-8, decay 0.1, clip 1.0, min lr 0, cosine. */
lm_optim_config lm_optim_defaults(int warmup_steps, int total_steps);

#endif
