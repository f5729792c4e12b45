/* lm_train's GPU trainer (lm_trainer.h): bf16 forward and backward (lm_gpu_pass.c) on a compute stream, fp32
 * master weights and AdamW state; on the last micro-batch of a step, each block's gradients are averaged as
 * one bucket (ncclAllReduce, ncclAvg, bf16) on a second stream as soon as backward has left the block (an
 * event orders the two), so that communication overlaps the backward of the blocks below; the embeddings'
 * bucket and the loss follow the encoder's backward. The optimiser waits for every bucket through the
 * bounded waits of ga_nccl (cfg->comm_timeout_s), computes the global gradient norm from the averaged
 * gradients (identical on every rank) and runs AdamW. ZeRO-1 (cfg->zero1): each bucket is reduce-scattered
 * instead (ncclReduceScatter, ncclAvg), each rank keeps the master weights and AdamW state of its own shard
 * of every bucket only, the norm is the sum of the ranks' shards' (ncclAllReduce), and the updated bf16
 * shards are all-gathered back into every rank's working copy (ncclAllGather), bucket by bucket. As
 * ddp_smoke's GPU path: NCCL bootstrapped by MPI_Bcast of the unique id, every NCCL call and wait bounded,
 * any failure fatal with the operation named.
 */
#include <math.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_cuda.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_nccl.h"
#include "ga_time.h"
#include "lm_gpu_model.h"
#include "lm_math.h"
#include "lm_model.h"
#include "lm_trainer.h"

typedef struct {
    lm_trainer base; /* first: the interface pointer is the object */
    lm_trainer_config cfg;
    int rank;
    cudaStream_t compute, comm;
    cudaEvent_t *bucket_ready; /* L + 1: the blocks', then the embeddings' */
    cudaEvent_t step_start, backward_done, comm_done, step_end;
    cudaEvent_t gather_start, gather_end; /* ZeRO-1: the all-gathers, exposed communication too */
    ncclComm_t nccl;
    lm_gpu_model m;
    int *pinned_ints;    /* per micro-batch: tokens, targets, group tokens, group starts, positions */
    float *pinned_stats; /* loss, sum of squared gradients */
    int *token_count, *token_cursor; /* [Vp] each, for grouping positions by token */
    float *host_params;
    uint16_t *host_bf16; /* ZeRO-1: the bf16 working copy on the host (params) */
    int optim_step;
} gpu_lm;

#define GPU_STATS 2
#define BT_OF(g) ((size_t)(g)->m.B * (size_t)(g)->m.cfg.seq_len)
#define INTS_PER_MB(g) (5 * BT_OF(g) + 1)

static double gib(double bytes)
{
    return bytes / (double)(1u << 30);
}

/* The device memory the trainer will take, beside the arena: cuBLASLt's workspace, under ZeRO-1 the fp32
 * buffer the initial weights are broadcast into, and a margin for the CUDA context, NCCL's buffers and the
 * allocator (the larger of 512 MiB and 3 %). */
static double bytes_needed(const lm_trainer_config *cfg, int shards, double *arena)
{
    *arena = (double)lm_gpu_arena_bytes(&cfg->cfg, cfg->micro_batch, shards);
    double margin = fmax(512.0 * (1 << 20), 0.03 * *arena);
    double init = shards > 1 ? 4.0 * (double)lm_param_count(&cfg->cfg) : 0.0;
    return *arena + (double)LM_BLAS_WORKSPACE_BYTES + init + margin;
}

/* Every rank learns whether the configuration fits on every rank's GPU; 0, or -1 with the same one-line
 * message on every rank (before any allocation, so that nothing runs out of memory mid-run). */
static int check_fits(const lm_trainer_config *cfg, int shards, MPI_Comm comm, char *err, size_t errlen)
{
    size_t free_b = 0, total_b = 0;
    GA_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double arena, need = bytes_needed(cfg, shards, &arena), worst_free = (double)free_b;
    MPI_Allreduce(MPI_IN_PLACE, &worst_free, 1, MPI_DOUBLE, MPI_MIN, comm);
    if (need <= worst_free)
        return 0;
    lm_memory est = lm_memory_estimate(&cfg->cfg, cfg->micro_batch, LM_PREC_BF16_MIXED);
    snprintf(
        err, errlen,
        "the model (%zu parameters, %d layers, %d channels, seq %d) at --batch-size %d needs %.2f GiB of GPU "
        "memory (%.2f GiB of weights, AdamW state and activations, lm_memory_estimate %.2f GiB, + workspace "
        "and margin) but the GPU with the least has %.2f GiB free: lower --batch-size or the model",
        lm_param_count(&cfg->cfg), cfg->cfg.layers, cfg->cfg.channels, cfg->cfg.seq_len, cfg->micro_batch,
        gib(need), gib(arena), gib(est.total), gib(worst_free));
    return -1;
}

/* Stages micro-batch mb's tokens, targets and groups in pinned memory and queues their copies. */
static int upload_micro_batch(gpu_lm *g, int mb, const int *tokens, const int *targets)
{
    size_t bt = BT_OF(g);
    int *pin = g->pinned_ints + (size_t)mb * INTS_PER_MB(g);
    int *tok = pin, *tgt = pin + bt, *gtok = pin + 2 * bt, *gstart = pin + 3 * bt, *gpos = pin + 4 * bt + 1;
    memcpy(tok, tokens + (size_t)mb * bt, bt * sizeof(int));
    memcpy(tgt, targets + (size_t)mb * bt, bt * sizeof(int));
    int n = lm_gpu_token_groups(tok, (int)bt, g->m.cfg.padded_vocab, g->token_count, g->token_cursor, gtok,
                                gstart, gpos);
    lm_gpu_acts *a = &g->m.a;
    GA_CUDA_CHECK(cudaMemcpyAsync(a->tokens, tok, bt * sizeof(int), cudaMemcpyHostToDevice, g->compute));
    GA_CUDA_CHECK(cudaMemcpyAsync(a->targets, tgt, bt * sizeof(int), cudaMemcpyHostToDevice, g->compute));
    GA_CUDA_CHECK(
        cudaMemcpyAsync(a->group_token, gtok, (size_t)n * sizeof(int), cudaMemcpyHostToDevice, g->compute));
    GA_CUDA_CHECK(cudaMemcpyAsync(a->group_start, gstart, (size_t)(n + 1) * sizeof(int),
                                  cudaMemcpyHostToDevice, g->compute));
    GA_CUDA_CHECK(cudaMemcpyAsync(a->group_pos, gpos, bt * sizeof(int), cudaMemcpyHostToDevice, g->compute));
    return n;
}

/* The NCCL calls of a step, each enqueue bounded (ga_nccl_bound) and checked (ga_nccl_enqueued). */
typedef enum { COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALL_GATHER } coll_kind;

static void collective(gpu_lm *g, coll_kind kind, const void *in, void *out, size_t count,
                       ncclDataType_t type, ncclRedOp_t op, cudaStream_t s, const char *what)
{
    ga_nccl_bound(g->nccl, g->cfg.comm_timeout_s, what);
    ncclResult_t r = kind == COLL_ALLREDUCE        ? ncclAllReduce(in, out, count, type, op, g->nccl, s)
                     : kind == COLL_REDUCE_SCATTER ? ncclReduceScatter(in, out, count, type, op, g->nccl, s)
                                                   : ncclAllGather(in, out, count, type, g->nccl, s);
    ga_nccl_unbound();
    ga_nccl_enqueued(g->nccl, r, g->cfg.comm_timeout_s, what);
}

/* This rank's shard of bucket b: its first element (in the flat buffer) and how many of its elements lie
 * inside the bucket (the rest of b->shard is padding). */
static size_t own_shard(const gpu_lm *g, const lm_gpu_bucket *b, size_t *first)
{
    size_t lo = (size_t)g->rank * b->shard;
    *first = b->offset + lo;
    return lo >= b->count ? 0 : (b->count - lo < b->shard ? b->count - lo : b->shard);
}

static void bucket_name(const gpu_lm *g, int slot, const char *op, char *what, size_t len)
{
    if (slot < g->m.cfg.layers)
        snprintf(what, len, "%s of block %d's gradient bucket", op, slot);
    else
        snprintf(what, len, "%s of the embeddings' gradient bucket", op);
}

/* Backward has queued the last of block `layer`'s gradient work (-1: the embeddings'): that bucket goes to
 * the communication stream behind an event, and backward goes on: averaged whole (ncclAllReduce), or under
 * ZeRO-1 reduce-scattered so that each rank holds the average of its own shard. */
static void on_block_done(void *ctx, int layer)
{
    gpu_lm *g = ctx;
    lm_gpu_model *m = &g->m;
    int slot = layer >= 0 ? layer : m->cfg.layers;
    const lm_gpu_bucket *b = &m->buckets[slot];
    GA_CUDA_CHECK(cudaEventRecord(g->bucket_ready[slot], g->compute));
    GA_CUDA_CHECK(cudaStreamWaitEvent(g->comm, g->bucket_ready[slot], 0));
    char what[96];
    if (m->shards == 1) {
        bucket_name(g, slot, "ncclAllReduce", what, sizeof what);
        collective(g, COLL_ALLREDUCE, m->grads + b->offset, m->grads + b->offset, b->count, ncclBfloat16,
                   ncclAvg, g->comm, what);
    } else {
        bucket_name(g, slot, "ncclReduceScatter", what, sizeof what);
        collective(g, COLL_REDUCE_SCATTER, m->grads + b->offset, m->grad_shard + b->local, b->shard,
                   ncclBfloat16, ncclAvg, g->comm, what);
        size_t first, real = own_shard(g, b, &first);
        if (real < b->shard) /* padding out of the global norm */
            GA_CUDA_CHECK(cudaMemsetAsync(m->grad_shard + b->local + real, 0,
                                          (b->shard - real) * sizeof(lm_bf16), g->comm));
    }
    if (layer < 0) /* the loss of the step, after the last bucket */
        collective(g, COLL_ALLREDUCE, m->a.loss_sum, m->a.loss_sum, 1, ncclFloat, ncclAvg, g->comm,
                   "ncclAllReduce of the step's loss");
}

/* Tensor i of the 3 + 12 L in layout order: where it starts, its length, whether it decays (matrices do,
 * vectors do not: lm_optim_step's split). */
static void tensor_at(const lm_gpu_model *m, size_t i, size_t *start, size_t *n, int *decay)
{
    size_t c = (size_t)m->cfg.channels, last = 2 + 12 * (size_t)m->cfg.layers;
    const size_t len[12] = {c, c, 3 * c * c, 3 * c, c * c, c, c, c, 4 * c * c, 4 * c, 4 * c * c, c};
    const int decays[12] = {0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0};
    if (i < 2) { /* wte, wpe */
        *start = i == 0 ? m->off.wte : m->off.wpe;
        *n = i == 0 ? m->off.wpe : (size_t)m->cfg.seq_len * c;
        *decay = 1;
    } else if (i == last) { /* final layernorm */
        *start = m->off.lnfw, *n = 2 * c, *decay = 0;
    } else {
        size_t l = (i - 2) / 12, k = (i - 2) % 12;
        *start = (&m->off.blocks[l].ln1w)[k], *n = len[k], *decay = decays[k];
    }
}

typedef struct {
    float lr, b1c, b2c, grad_scale;
} adamw_step;

static void adamw_range(gpu_lm *g, size_t state_at, lm_bf16 *params, const lm_bf16 *grads, size_t n,
                        int decay, const adamw_step *st)
{
    const lm_optim_config *oc = &g->cfg.optim;
    lm_gpu_model *m = &g->m;
    GA_CUDA_CHECK(lm_k_adamw(m->master + state_at, params, m->adam_m + state_at, m->adam_v + state_at, grads,
                             n, st->lr, oc->beta1, oc->beta2, oc->eps, decay ? oc->weight_decay : 0.0f,
                             st->b1c, st->b2c, st->grad_scale, g->compute));
}

/* ZeRO-1: AdamW over the part of tensor [start, start + n) in this rank's shards (a tensor lies in one
 * bucket), into the shard-local state and bf16 shard. */
static void adamw_own_part(gpu_lm *g, size_t start, size_t n, int decay, const adamw_step *st)
{
    lm_gpu_model *m = &g->m;
    for (int slot = 0; slot <= m->cfg.layers; slot++) {
        const lm_gpu_bucket *b = &m->buckets[slot];
        if (start < b->offset || start >= b->offset + b->count)
            continue;
        size_t first, real = own_shard(g, b, &first);
        size_t lo = start > first ? start : first, hi = start + n < first + real ? start + n : first + real;
        if (lo < hi) {
            size_t at = b->local + (lo - first);
            adamw_range(g, at, m->param_shard + at, m->grad_shard + at, hi - lo, decay, st);
        }
        return;
    }
}

/* ZeRO-1: every rank's updated shards of each bucket gathered into the bf16 working copy. */
static void gather_params(gpu_lm *g)
{
    lm_gpu_model *m = &g->m;
    char what[96];
    GA_CUDA_CHECK(cudaEventRecord(g->gather_start, g->compute));
    for (int slot = 0; slot <= m->cfg.layers; slot++) {
        const lm_gpu_bucket *b = &m->buckets[slot];
        bucket_name(g, slot, "ncclAllGather of the parameters", what, sizeof what);
        collective(g, COLL_ALL_GATHER, m->param_shard + b->local, m->gather, b->shard, ncclBfloat16, ncclSum,
                   g->compute, what);
        GA_CUDA_CHECK(cudaMemcpyAsync(m->params + b->offset, m->gather, b->count * sizeof(lm_bf16),
                                      cudaMemcpyDeviceToDevice, g->compute));
    }
    GA_CUDA_CHECK(cudaEventRecord(g->gather_end, g->compute));
}

/* AdamW over every tensor (under ZeRO-1 over this rank's shards, then the all-gather). */
static void optimise(gpu_lm *g, float grad_scale)
{
    const lm_optim_config *oc = &g->cfg.optim;
    lm_gpu_model *m = &g->m;
    adamw_step st = {lm_lr_at(oc, g->optim_step), 0, 0, grad_scale};
    int t = ++g->optim_step;
    st.b1c = 1.0f - powf(oc->beta1, (float)t);
    st.b2c = 1.0f - powf(oc->beta2, (float)t);
    for (size_t i = 0; i < 3 + 12 * (size_t)m->cfg.layers; i++) {
        size_t start, n;
        int decay;
        tensor_at(m, i, &start, &n, &decay);
        if (m->shards == 1)
            adamw_range(g, start, m->params + start, m->grads + start, n, decay, &st);
        else
            adamw_own_part(g, start, n, decay, &st);
    }
    if (m->shards > 1)
        gather_params(g);
}

static double elapsed_s(cudaEvent_t from, cudaEvent_t to)
{
    float ms = 0.0f;
    GA_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms > 0.0f ? ms / 1000.0 : 0.0;
}

/* Every bucket averaged (the compute stream waits for the communication stream), then the global norm and
 * the loss come back to the host through a bounded wait. */
static void wait_for_buckets(gpu_lm *g)
{
    lm_gpu_model *m = &g->m;
    GA_CUDA_CHECK(cudaEventRecord(g->backward_done, g->compute));
    GA_CUDA_CHECK(cudaEventRecord(g->comm_done, g->comm));
    GA_CUDA_CHECK(cudaStreamWaitEvent(g->compute, g->comm_done, 0));
    if (m->shards == 1) {
        GA_CUDA_CHECK(lm_k_grad_sumsq(m->a.norm_sq, m->a.norm_partials, m->grads, m->n_params, g->compute));
    } else { /* each rank's shards, then their sum: the same norm on every rank */
        GA_CUDA_CHECK(
            lm_k_grad_sumsq(m->a.norm_sq, m->a.norm_partials, m->grad_shard, m->n_state, g->compute));
        collective(g, COLL_ALLREDUCE, m->a.norm_sq, m->a.norm_sq, 1, ncclFloat, ncclSum, g->compute,
                   "ncclAllReduce of the gradients' squared norm");
    }
    GA_CUDA_CHECK(cudaMemcpyAsync(&g->pinned_stats[0], m->a.loss_sum, sizeof(float), cudaMemcpyDeviceToHost,
                                  g->compute));
    GA_CUDA_CHECK(cudaMemcpyAsync(&g->pinned_stats[1], m->a.norm_sq, sizeof(float), cudaMemcpyDeviceToHost,
                                  g->compute));
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "training step (gradient buckets)");
}

static int gpu_step(lm_trainer *t, const int *tokens, const int *targets, lm_step_result *out, char *err,
                    size_t errlen)
{
    (void)err, (void)errlen;
    gpu_lm *g = (gpu_lm *)t;
    lm_gpu_model *m = &g->m;
    int accum = g->cfg.grad_accum;
    double t0 = ga_now();
    float dloss_scale = 1.0f / ((float)BT_OF(g) * (float)accum);
    GA_CUDA_CHECK(cudaEventRecord(g->step_start, g->compute));
    GA_CUDA_CHECK(cudaMemsetAsync(m->grads, 0, m->n_params * sizeof(lm_bf16), g->compute));
    GA_CUDA_CHECK(cudaMemsetAsync(m->a.loss_sum, 0, sizeof(float), g->compute));
    for (int mb = 0; mb < accum; mb++) {
        int groups = upload_micro_batch(g, mb, tokens, targets);
        lm_gpu_forward(m, dloss_scale, 1.0f / (float)accum, g->compute);
        lm_gpu_backward(m, groups, mb == accum - 1 ? on_block_done : NULL, g, g->compute);
    }
    wait_for_buckets(g);
    float norm = sqrtf(g->pinned_stats[1]);
    optimise(g, lm_clip_scale(norm, g->cfg.optim.grad_clip));
    GA_CUDA_CHECK(cudaEventRecord(g->step_end, g->compute));
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "training step (optimiser)");
    /* Exposed communication: from the end of backward to the end of the last bucket's collective (and under
     * ZeRO-1 the all-gathers, which nothing overlaps). */
    out->comm_wait_s = elapsed_s(g->backward_done, g->comm_done);
    if (m->shards > 1)
        out->comm_wait_s += elapsed_s(g->gather_start, g->gather_end);
    out->compute_s = fmax(0.0, elapsed_s(g->step_start, g->step_end) - out->comm_wait_s);
    out->step_s = ga_now() - t0;
    out->loss = g->pinned_stats[0];
    out->grad_norm = norm;
    return 0;
}

/* The fp32 master on the host; under ZeRO-1, where no rank holds the whole master, the bf16 working copy
 * (which every rank holds whole, gathered from the owners' masters) widened to fp32. */
static const float *gpu_params(lm_trainer *t)
{
    gpu_lm *g = (gpu_lm *)t;
    lm_gpu_model *m = &g->m;
    size_t n = m->n_params;
    if (m->shards == 1)
        GA_CUDA_CHECK(cudaMemcpyAsync(g->host_params, m->master, n * sizeof(float), cudaMemcpyDeviceToHost,
                                      g->compute));
    else
        GA_CUDA_CHECK(cudaMemcpyAsync(g->host_bf16, m->params, n * sizeof(uint16_t), cudaMemcpyDeviceToHost,
                                      g->compute));
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "copy of the parameters to the host");
    for (size_t i = 0; m->shards > 1 && i < n; i++) {
        uint32_t bits = (uint32_t)g->host_bf16[i] << 16; /* bf16 is the top half of an fp32 */
        memcpy(&g->host_params[i], &bits, sizeof bits);
    }
    return g->host_params;
}

/* Test only: the first parameter moves by one ulp: the fp32 master, its bf16 copy rounded from it again;
 * under ZeRO-1 the bf16 working copy by one bf16 ulp (until the next all-gather restores the owner's). */
static void gpu_perturb(lm_trainer *t)
{
    gpu_lm *g = (gpu_lm *)t;
    lm_gpu_model *m = &g->m;
    const float *p = gpu_params(t);
    if (m->shards == 1) {
        g->host_params[0] = nextafterf(p[0], INFINITY);
        GA_CUDA_CHECK(
            cudaMemcpyAsync(m->master, g->host_params, sizeof(float), cudaMemcpyHostToDevice, g->compute));
        GA_CUDA_CHECK(lm_k_cast_to_bf16(m->params, m->master, 1, g->compute));
    } else {
        g->host_bf16[0]++;
        GA_CUDA_CHECK(
            cudaMemcpyAsync(m->params, g->host_bf16, sizeof(uint16_t), cudaMemcpyHostToDevice, g->compute));
    }
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "parameter perturbation");
}

static void gpu_destroy(lm_trainer *t)
{
    gpu_lm *g = (gpu_lm *)t;
    if (g->nccl)
        ga_nccl_comm_destroy(g->nccl, g->cfg.comm_timeout_s);
    lm_gpu_model_free(&g->m);
    for (int k = 0; g->bucket_ready && k <= g->cfg.cfg.layers; k++)
        cudaEventDestroy(g->bucket_ready[k]);
    cudaEvent_t ev[] = {g->step_start, g->backward_done, g->comm_done,
                        g->step_end,   g->gather_start,  g->gather_end};
    for (size_t k = 0; k < sizeof ev / sizeof ev[0]; k++)
        if (ev[k])
            cudaEventDestroy(ev[k]);
    cudaFreeHost(g->pinned_ints);
    cudaFreeHost(g->pinned_stats);
    if (g->compute)
        cudaStreamDestroy(g->compute);
    if (g->comm)
        cudaStreamDestroy(g->comm);
    free(g->bucket_ready);
    free(g->token_count);
    free(g->token_cursor);
    free(g->host_params);
    free(g->host_bf16);
    free(g);
}

/* The host model's parameter views over base, from the GPU model's offsets (the same layout). */
static void map_host_params(lm_params *p, float *base, const lm_gpu_offsets *off, int layers)
{
    p->wte = base + off->wte;
    p->wpe = base + off->wpe;
    p->lnfw = base + off->lnfw;
    p->lnfb = base + off->lnfb;
    for (int l = 0; l < layers; l++) {
        const size_t *o = &off->blocks[l].ln1w;
        float **v = &p->blocks[l].ln1w; /* both structs: 12 members in layout order */
        for (int k = 0; k < 12; k++)
            v[k] = base + o[k];
    }
}

/* Rank 0's initial weights: GPT-2's initialisation from the seed (lm_model_init_params) into host_params. */
static void init_host_params(gpu_lm *g)
{
    lm_gpu_model *m = &g->m;
    size_t n = m->n_params;
    /* Only the parameter views and buffer that lm_model_init_params touches (it clears params, grads and
     * AdamW state: 4 n floats). */
    lm_model host;
    memset(&host, 0, sizeof host);
    host.cfg = m->cfg;
    host.n_params = n;
    host.params = calloc(4 * n, sizeof(float));
    host.p.blocks = calloc((size_t)m->cfg.layers, sizeof *host.p.blocks);
    if (!host.params || !host.p.blocks)
        GA_FATAL(GA_EXIT_INTERNAL, "out of host memory for the initial weights (%zu parameters)", n);
    map_host_params(&host.p, host.params, &m->off, m->cfg.layers);
    lm_model_init_params(&host, g->cfg.seed);
    memcpy(g->host_params, host.params, n * sizeof(float));
    free(host.params);
    free(host.p.blocks);
}

/* Rank 0's initial weights become every rank's: broadcast with NCCL (bounded) as fp32 into the master (under
 * ZeRO-1 into a buffer of the init's own, of which each rank keeps its shards), rounded to the bf16 working
 * copy. */
static void init_params(gpu_lm *g)
{
    lm_gpu_model *m = &g->m;
    size_t n = m->n_params;
    if (g->rank == 0)
        init_host_params(g);
    float *full = m->master;
    if (m->shards > 1)
        GA_CUDA_CHECK(cudaMalloc((void **)&full, n * sizeof(float)));
    GA_CUDA_CHECK(
        cudaMemcpyAsync(full, g->host_params, n * sizeof(float), cudaMemcpyHostToDevice, g->compute));
    ga_nccl_bound(g->nccl, g->cfg.comm_timeout_s, "ncclBroadcast of the initial parameters");
    ncclResult_t r = ncclBroadcast(full, full, n, ncclFloat, 0, g->nccl, g->compute);
    ga_nccl_unbound();
    ga_nccl_enqueued(g->nccl, r, g->cfg.comm_timeout_s, "ncclBroadcast of the initial parameters");
    GA_CUDA_CHECK(lm_k_cast_to_bf16(m->params, full, n, g->compute));
    for (int slot = 0; m->shards > 1 && slot <= m->cfg.layers; slot++) {
        const lm_gpu_bucket *b = &m->buckets[slot];
        size_t first, real = own_shard(g, b, &first);
        GA_CUDA_CHECK(cudaMemcpyAsync(m->master + b->local, full + first, real * sizeof(float),
                                      cudaMemcpyDeviceToDevice, g->compute));
    }
    GA_CUDA_CHECK(cudaMemsetAsync(m->adam_m, 0, m->n_state * sizeof(float), g->compute));
    GA_CUDA_CHECK(cudaMemsetAsync(m->adam_v, 0, m->n_state * sizeof(float), g->compute));
    GA_CUDA_CHECK(cudaMemsetAsync(m->grads, 0, n * sizeof(lm_bf16), g->compute));
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "broadcast of the initial parameters");
    if (full != m->master)
        cudaFree(full);
}

static void init_streams(gpu_lm *g)
{
    GA_CUDA_CHECK(cudaStreamCreateWithFlags(&g->compute, cudaStreamNonBlocking));
    GA_CUDA_CHECK(cudaStreamCreateWithFlags(&g->comm, cudaStreamNonBlocking));
    int L = g->cfg.cfg.layers;
    g->bucket_ready = calloc((size_t)L + 1, sizeof *g->bucket_ready);
    if (!g->bucket_ready)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int k = 0; k <= L; k++)
        GA_CUDA_CHECK(cudaEventCreateWithFlags(&g->bucket_ready[k], cudaEventDisableTiming));
    cudaEvent_t *timed[] = {&g->step_start, &g->backward_done, &g->comm_done,
                            &g->step_end,   &g->gather_start,  &g->gather_end};
    for (size_t k = 0; k < sizeof timed / sizeof timed[0]; k++)
        GA_CUDA_CHECK(cudaEventCreate(timed[k]));
}

static void init_host_buffers(gpu_lm *g)
{
    size_t ints = (size_t)g->cfg.grad_accum * INTS_PER_MB(g), vp = (size_t)g->m.cfg.padded_vocab;
    GA_CUDA_CHECK(cudaMallocHost((void **)&g->pinned_ints, ints * sizeof(int)));
    GA_CUDA_CHECK(cudaMallocHost((void **)&g->pinned_stats, GPU_STATS * sizeof(float)));
    g->token_count = calloc(vp, sizeof(int));
    g->token_cursor = calloc(vp, sizeof(int));
    g->host_params = malloc(g->m.n_params * sizeof(float));
    g->host_bf16 = g->m.shards > 1 ? malloc(g->m.n_params * sizeof(uint16_t)) : NULL;
    if (!g->token_count || !g->token_cursor || !g->host_params || (g->m.shards > 1 && !g->host_bf16))
        GA_FATAL(GA_EXIT_INTERNAL, "out of host memory for a model of %zu parameters", g->m.n_params);
}

/* What the GPU path refuses before touching the GPU: 0, or -1 with one line (the same on every rank). */
static int check_config(const lm_trainer_config *cfg, char *err, size_t errlen)
{
    if (cfg->micro_batch < 1 || cfg->grad_accum < 1) {
        snprintf(err, errlen, "--batch-size %d and gradient accumulation %d must be at least 1",
                 cfg->micro_batch, cfg->grad_accum);
        return -1;
    }
    return lm_config_validate(&cfg->cfg, err, errlen);
}

/* cuBLASLt's GELU_AUX_BIAS epilogue where it fits (Hopper and newer, as llm.c's default, and a pre-activation
 * leading dimension 4C divisible by 8); else the bias epilogue and lm_gelu's kernel. */
static bool gelu_fits_epilogue(const lm_config *cfg)
{
    int device = 0, major = 0;
    GA_CUDA_CHECK(cudaGetDevice(&device));
    GA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    return major >= 9 && (4 * cfg->channels) % 8 == 0;
}

lm_trainer *lm_gpu_trainer_create(const lm_trainer_config *cfg, MPI_Comm comm, char *err, size_t errlen)
{
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    int shards = cfg->zero1 ? ranks : 1;
    if (check_config(cfg, err, errlen) != 0 || check_fits(cfg, shards, comm, err, errlen) != 0)
        return NULL;
    gpu_lm *g = calloc(1, sizeof *g);
    if (!g)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    g->cfg = *cfg;
    MPI_Comm_rank(comm, &g->rank);
    size_t free_before = 0, free_after = 0, total = 0;
    GA_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    init_streams(g);
    char why[512] = "";
    int ok = lm_gpu_model_alloc(&g->m, &cfg->cfg, cfg->micro_batch, shards, g->compute,
                                gelu_fits_epilogue(&cfg->cfg), why, sizeof why) == 0;
    int all_ok = ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) { /* every rank refuses, so that none waits for the others in NCCL */
        snprintf(err, errlen, "%s", ok ? "another rank could not allocate the GPU model" : why);
        gpu_destroy(&g->base);
        return NULL;
    }
    init_host_buffers(g);
    g->nccl = ga_nccl_comm_init(comm, cfg->comm_timeout_s, "lm_train gradients");
    init_params(g);
    GA_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    g->base.backend = "gpu";
    g->base.dtype = "bf16";
    g->base.n_params = g->m.n_params;
    g->base.bytes_used = free_before > free_after ? (double)(free_before - free_after) : 0.0;
    g->base.step = gpu_step;
    g->base.params = gpu_params;
    g->base.perturb = gpu_perturb;
    g->base.destroy = gpu_destroy;
    return &g->base;
}
