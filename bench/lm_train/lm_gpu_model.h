/* lm_train's model on the GPU: where every tensor lives in device memory, and the forward and backward passes
 * over them (cuBLASLt GEMMs and lm_gpu_kernels.h's kernels on one compute stream). The parameters keep the
 * host model's flat, block-major layout (lm_model.h), as bf16 (the working copy) beside the fp32 master, so
 * that block l's gradients are the slice lm_block_range gives and can be reduced as one bucket. */
#ifndef LM_GPU_MODEL_H
#define LM_GPU_MODEL_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

#include "lm_config.h"
#include "lm_gpu_blas.h"
#include "lm_gpu_kernels.h"

/* Offsets (elements) of one block's tensors in the flat parameter buffer, in lm_model.h's order. */
typedef struct {
    size_t ln1w, ln1b, qkvw, qkvb, attprojw, attprojb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb;
} lm_gpu_block_offsets;

typedef struct {
    size_t wte, wpe, lnfw, lnfb, total;
    lm_gpu_block_offsets *blocks; /* L of them */
} lm_gpu_offsets;

typedef struct {
    lm_bf16 *ln1, *qkv, *att, *atty, *residual2, *ln2, *fch, *fch_gelu, *residual3;
    float *ln1_mean, *ln1_rstd, *ln2_mean, *ln2_rstd;
} lm_gpu_block_acts;

/* Activations of one micro-batch, and the scratch the passes share. */
typedef struct {
    lm_bf16 *encoded;
    lm_gpu_block_acts *blocks;
    lm_bf16 *lnf, *logits; /* logits [BT x Vp]: overwritten by their gradient in the backward */
    float *lnf_mean, *lnf_rstd, *losses;
    lm_bf16 *preatt;                            /* [B NH T T]: scores; in the backward, their gradient */
    lm_bf16 *q, *k, *v, *y;                     /* [B NH T HS] each; y is dy in the backward */
    lm_bf16 *dq, *dk, *dv;                      /* [B NH T HS] each */
    lm_bf16 *dresidual, *dtmp;                  /* [BT C] */
    lm_bf16 *dqkv, *dfch;                       /* [BT 3C], [BT 4C] */
    int *tokens, *targets;                      /* [BT] */
    int *group_token, *group_start, *group_pos; /* the encoder backward's positions by token */
    float *loss_sum, *norm_sq, *norm_partials;  /* 1, 1, LM_NORM_BLOCKS */
    float *col_scratch;                         /* LM_COL_SCRATCH(4C) */
} lm_gpu_acts;

/* The gradient buckets: slot l < L is block l's slice (block L-1's with the final layernorm, which follows
 * it), slot L the embeddings' (wte and wpe). Under ZeRO-1 each bucket is cut into `shards` equal shards of
 * ceil(count / shards) elements, rank r owning the r-th (the last one's tail past the bucket is padding). */
typedef struct {
    size_t offset, count; /* in the flat parameter buffer */
    size_t shard;         /* elements per shard */
    size_t local;         /* where this bucket's shard starts in the shard-local arrays */
} lm_gpu_bucket;

typedef struct {
    lm_config cfg;
    int B;
    int shards; /* 1, or the ranks under ZeRO-1 */
    size_t n_params;
    lm_gpu_bucket *buckets; /* L + 1 */
    size_t n_state;         /* elements of master, adam_m, adam_v: n_params, or the shard-local total */
    size_t max_shard;       /* the largest bucket shard */
    lm_bf16 *grad_shard;    /* ZeRO-1: this rank's averaged gradient shards [n_state] */
    lm_bf16 *param_shard;   /* ZeRO-1: this rank's updated bf16 shards [n_state] */
    lm_bf16 *gather;        /* ZeRO-1: one bucket all-gathered [shards x max_shard] */
    lm_gpu_offsets off;
    lm_bf16 *params, *grads; /* bf16 working copy and gradients [n_params] */
    float *master, *adam_m, *adam_v;
    lm_gpu_acts a;
    void *arena; /* every buffer above is carved from this one allocation */
    size_t arena_bytes;
    lm_blas blas;
    bool gelu_fused; /* forward GELU as cuBLASLt's GELU_AUX_BIAS epilogue */
} lm_gpu_model;

/* The positions of BT tokens (each < Vp) grouped by token for the encoder's backward, in increasing token
 * and position order: group g is token group_token[g] at positions group_pos[group_start[g] ..
 * group_start[g + 1]). count and cursor are Vp ints of scratch. Returns the number of groups. */
int lm_gpu_token_groups(const int *tokens, int BT, int Vp, int *count, int *cursor, int *group_token,
                        int *group_start, int *group_pos);

/* Offsets of cfg's tensors (host memory for the block table; free with lm_gpu_offsets_free). 0 or -1. */
int lm_gpu_offsets_make(const lm_config *cfg, lm_gpu_offsets *off);
void lm_gpu_offsets_free(lm_gpu_offsets *off);

/* Device bytes lm_gpu_model_alloc takes for cfg at micro-batch B over `shards` ZeRO-1 shards (1: none): its
 * arena; cuBLASLt's workspace apart. */
size_t lm_gpu_arena_bytes(const lm_config *cfg, int B, int shards);

/* Carves every buffer out of one cudaMalloc; 0, or -1 with a one-line message. The stream is the compute
 * stream the passes queue on. */
int lm_gpu_model_alloc(lm_gpu_model *g, const lm_config *cfg, int B, int shards, cudaStream_t stream,
                       bool gelu_fused, char *err, size_t errlen);
void lm_gpu_model_free(lm_gpu_model *g);

/* Forward of the micro-batch whose tokens and targets (and token groups) are on the device: logits, then
 * the fused classifier (losses; logits become dlogits scaled by dloss_scale), and the loss sum += mean loss
 * * loss_scale. */
void lm_gpu_forward(lm_gpu_model *g, float dloss_scale, float loss_scale, cudaStream_t s);

/* Backward of that micro-batch, ADDING into the gradients. on_block(ctx, l) is called once backward has
 * queued the last of block l's gradient work (blocks L-1 .. 0, in that order), and on_block(ctx, -1) once
 * the embeddings' is; NULL: no callbacks (micro-batches before the last). */
typedef void (*lm_gpu_block_done)(void *ctx, int layer);
void lm_gpu_backward(lm_gpu_model *g, int n_groups, lm_gpu_block_done on_block, void *ctx, cudaStream_t s);

#endif
