/* lm_train's GPU model: the parameter offsets (lm_model.h's layout) and every device buffer, carved from one
 * allocation whose size is known before it is made (the same carving, run once without a base), so that a
 * configuration that does not fit is refused before anything is allocated. */
#include "lm_gpu_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm_model.h"

int lm_gpu_offsets_make(const lm_config *cfg, lm_gpu_offsets *off)
{
    size_t c = (size_t)cfg->channels, at = 0;
    off->blocks = calloc((size_t)cfg->layers, sizeof *off->blocks);
    if (!off->blocks)
        return -1;
    off->wte = at;
    at += (size_t)cfg->padded_vocab * c;
    off->wpe = at;
    at += (size_t)cfg->seq_len * c;
    const size_t len[12] = {c, c, 3 * c * c, 3 * c, c * c, c, c, c, 4 * c * c, 4 * c, 4 * c * c, c};
    for (int l = 0; l < cfg->layers; l++) {
        size_t *field = &off->blocks[l].ln1w; /* the struct is 12 size_t in layout order */
        for (int k = 0; k < 12; k++) {
            field[k] = at;
            at += len[k];
        }
    }
    off->lnfw = at;
    off->lnfb = at + c;
    off->total = at + 2 * c;
    return 0;
}

void lm_gpu_offsets_free(lm_gpu_offsets *off)
{
    free(off->blocks);
    off->blocks = NULL;
}

int lm_gpu_token_groups(const int *tokens, int BT, int Vp, int *count, int *cursor, int *group_token,
                        int *group_start, int *group_pos)
{
    memset(count, 0, (size_t)Vp * sizeof(int));
    for (int i = 0; i < BT; i++)
        count[tokens[i]]++;
    int n = 0, at = 0;
    for (int v = 0; v < Vp; v++) {
        if (!count[v])
            continue;
        group_token[n] = v;
        group_start[n++] = at;
        cursor[v] = at;
        at += count[v];
    }
    group_start[n] = at;
    for (int i = 0; i < BT; i++)
        group_pos[cursor[tokens[i]]++] = i;
    return n;
}

/* Consecutive buffers out of one block of device memory, each 256-byte aligned (cuBLASLt's preference);
 * with base NULL it only counts. */
typedef struct {
    char *base;
    size_t used;
} carver;

static void *carve(carver *cv, size_t bytes)
{
    cv->used = (cv->used + 255) & ~(size_t)255;
    void *p = cv->base ? cv->base + cv->used : NULL;
    cv->used += bytes;
    return p;
}

#define BF(n) ((n) * sizeof(lm_bf16))
#define F32(n) ((n) * sizeof(float))

static void carve_block_acts(carver *cv, lm_gpu_block_acts *k, size_t bt, size_t c, size_t scores)
{
    k->ln1 = carve(cv, BF(bt * c));
    k->qkv = carve(cv, BF(3 * bt * c));
    k->att = carve(cv, BF(scores));
    k->atty = carve(cv, BF(bt * c));
    k->residual2 = carve(cv, BF(bt * c));
    k->ln2 = carve(cv, BF(bt * c));
    k->fch = carve(cv, BF(4 * bt * c));
    k->fch_gelu = carve(cv, BF(4 * bt * c));
    k->residual3 = carve(cv, BF(bt * c));
    k->ln1_mean = carve(cv, F32(bt));
    k->ln1_rstd = carve(cv, F32(bt));
    k->ln2_mean = carve(cv, F32(bt));
    k->ln2_rstd = carve(cv, F32(bt));
}

static void carve_scratch(carver *cv, lm_gpu_acts *a, const lm_config *cfg, size_t bt, size_t scores)
{
    size_t c = (size_t)cfg->channels;
    a->preatt = carve(cv, BF(scores));
    lm_bf16 **heads[7] = {&a->q, &a->k, &a->v, &a->y, &a->dq, &a->dk, &a->dv};
    for (int i = 0; i < 7; i++)
        *heads[i] = carve(cv, BF(bt * c));
    a->dresidual = carve(cv, BF(bt * c));
    a->dtmp = carve(cv, BF(bt * c));
    a->dqkv = carve(cv, BF(3 * bt * c));
    a->dfch = carve(cv, BF(4 * bt * c));
    a->tokens = carve(cv, bt * sizeof(int));
    a->targets = carve(cv, bt * sizeof(int));
    a->group_token = carve(cv, bt * sizeof(int));
    a->group_start = carve(cv, (bt + 1) * sizeof(int));
    a->group_pos = carve(cv, bt * sizeof(int));
    a->loss_sum = carve(cv, F32(1));
    a->norm_sq = carve(cv, F32(1));
    a->norm_partials = carve(cv, F32(LM_NORM_BLOCKS));
    a->col_scratch = carve(cv, F32(LM_COL_SCRATCH(4 * c)));
}

/* The buckets of g (cfg, shards and n_params set), their shards, n_state and max_shard. */
static void plan_buckets(lm_gpu_model *g)
{
    const lm_config *cfg = &g->cfg;
    size_t c = (size_t)cfg->channels, local = 0;
    g->max_shard = 0;
    for (int slot = 0; slot <= cfg->layers; slot++) {
        lm_gpu_bucket *b = &g->buckets[slot];
        if (slot < cfg->layers) {
            lm_block_range(cfg, slot, &b->offset, &b->count);
            if (slot == cfg->layers - 1)
                b->count += 2 * c; /* the final layernorm */
        } else {
            b->offset = 0;
            b->count = ((size_t)cfg->padded_vocab + (size_t)cfg->seq_len) * c;
        }
        b->shard = (b->count + (size_t)g->shards - 1) / (size_t)g->shards;
        b->local = local;
        local += b->shard;
        g->max_shard = b->shard > g->max_shard ? b->shard : g->max_shard;
    }
    g->n_state = g->shards > 1 ? local : g->n_params;
}

/* Every buffer of g (whose cfg, B, shards, n_params, buckets and a.blocks are set) from cv. */
static void carve_all(carver *cv, lm_gpu_model *g)
{
    const lm_config *cfg = &g->cfg;
    size_t bt = (size_t)g->B * (size_t)cfg->seq_len, c = (size_t)cfg->channels, n = g->n_params;
    size_t scores = (size_t)g->B * (size_t)cfg->heads * (size_t)cfg->seq_len * (size_t)cfg->seq_len;
    g->params = carve(cv, BF(n + (size_t)g->shards));
    g->grads = carve(cv, BF(n + (size_t)g->shards));
    g->master = carve(cv, F32(g->n_state));
    g->adam_m = carve(cv, F32(g->n_state));
    g->adam_v = carve(cv, F32(g->n_state));
    if (g->shards > 1) {
        g->grad_shard = carve(cv, BF(g->n_state));
        g->param_shard = carve(cv, BF(g->n_state));
        g->gather = carve(cv, BF((size_t)g->shards * g->max_shard));
    }
    lm_gpu_acts *a = &g->a;
    a->encoded = carve(cv, BF(bt * c));
    for (int l = 0; l < cfg->layers; l++)
        carve_block_acts(cv, &a->blocks[l], bt, c, scores);
    a->lnf = carve(cv, BF(bt * c));
    a->logits = carve(cv, BF(bt * (size_t)cfg->padded_vocab));
    a->lnf_mean = carve(cv, F32(bt));
    a->lnf_rstd = carve(cv, F32(bt));
    a->losses = carve(cv, F32(bt));
    carve_scratch(cv, a, cfg, bt, scores);
}

/* The host tables of g: 0, or -1 (out of memory). */
static int init_tables(lm_gpu_model *g, const lm_config *cfg, int B, int shards)
{
    memset(g, 0, sizeof *g);
    g->cfg = *cfg;
    g->B = B;
    g->shards = shards > 1 ? shards : 1;
    g->n_params = lm_param_count(cfg);
    g->a.blocks = calloc((size_t)cfg->layers, sizeof *g->a.blocks);
    g->buckets = calloc((size_t)cfg->layers + 1, sizeof *g->buckets);
    if (!g->a.blocks || !g->buckets || lm_gpu_offsets_make(cfg, &g->off) != 0)
        return -1;
    plan_buckets(g);
    return 0;
}

size_t lm_gpu_arena_bytes(const lm_config *cfg, int B, int shards)
{
    lm_gpu_model g;
    size_t bytes = (size_t)-1;
    if (init_tables(&g, cfg, B, shards) == 0) {
        carver cv = {NULL, 0};
        carve_all(&cv, &g);
        bytes = cv.used;
    }
    lm_gpu_model_free(&g);
    return bytes;
}

int lm_gpu_model_alloc(lm_gpu_model *g, const lm_config *cfg, int B, int shards, cudaStream_t stream,
                       bool gelu_fused, char *err, size_t errlen)
{
    if (init_tables(g, cfg, B, shards) != 0) {
        snprintf(err, errlen, "out of host memory for the GPU model's tables");
        lm_gpu_model_free(g);
        return -1;
    }
    g->gelu_fused = gelu_fused;
    g->arena_bytes = lm_gpu_arena_bytes(cfg, B, shards);
    cudaError_t e = cudaMalloc(&g->arena, g->arena_bytes);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaMalloc of %.2f GiB for the model at micro-batch %d: %s",
                 (double)g->arena_bytes / (1 << 30), B, cudaGetErrorString(e));
        g->arena = NULL;
        lm_gpu_model_free(g);
        return -1;
    }
    carver cv = {g->arena, 0};
    carve_all(&cv, g);
    lm_blas_init(&g->blas, stream);
    return 0;
}

void lm_gpu_model_free(lm_gpu_model *g)
{
    if (g->arena) {
        lm_blas_destroy(&g->blas);
        cudaFree(g->arena);
    }
    lm_gpu_offsets_free(&g->off);
    free(g->a.blocks);
    free(g->buckets);
    memset(g, 0, sizeof *g);
}
