/* lm_train's GPU trainer (lm_trainer.h): bf16 forward and backward (lm_gpu_pass.c) on a compute stream, fp32
 * master weights and AdamW state; on the last micro-batch of a step, each block's gradients are averaged as
 * one bucket (ncclAllReduce, ncclAvg, bf16) on a second stream as soon as backward has left the block (an
 * event orders the two), so that communication overlaps the backward of the blocks below; the embeddings'
 * bucket and the loss follow the encoder's backward. The optimiser waits for every bucket through the
 * bounded waits of ga_nccl (cfg->comm_timeout_s), computes the global gradient norm from the averaged
 * gradients (identical on every rank) and runs AdamW. As ddp_smoke's GPU path: NCCL bootstrapped by
 * MPI_Bcast of the unique id, every NCCL call and wait bounded, any failure fatal with the operation named.
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
    ncclComm_t nccl;
    lm_gpu_model m;
    int *pinned_ints;    /* per micro-batch: tokens, targets, group tokens, group starts, positions */
    float *pinned_stats; /* loss, sum of squared gradients */
    int *token_count, *token_cursor; /* [Vp] each, for grouping positions by token */
    float *host_params;
    int optim_step;
} gpu_lm;

#define GPU_STATS 2
#define BT_OF(g) ((size_t)(g)->m.B * (size_t)(g)->m.cfg.seq_len)
#define INTS_PER_MB(g) (5 * BT_OF(g) + 1)

static double gib(double bytes)
{
    return bytes / (double)(1u << 30);
}

/* The device memory the trainer will take, beside the arena: cuBLASLt's workspace, and a margin for the CUDA
 * context, NCCL's buffers and the allocator (the larger of 512 MiB and 3 %). */
static double bytes_needed(const lm_trainer_config *cfg, double *arena)
{
    *arena = (double)lm_gpu_arena_bytes(&cfg->cfg, cfg->micro_batch);
    double margin = fmax(512.0 * (1 << 20), 0.03 * *arena);
    return *arena + (double)LM_BLAS_WORKSPACE_BYTES + margin;
}

/* Every rank learns whether the configuration fits on every rank's GPU; 0, or -1 with the same one-line
 * message on every rank (before any allocation, so that nothing runs out of memory mid-run). */
static int check_fits(const lm_trainer_config *cfg, MPI_Comm comm, char *err, size_t errlen)
{
    size_t free_b = 0, total_b = 0;
    GA_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double arena, need = bytes_needed(cfg, &arena), worst_free = (double)free_b;
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

/* Positions of one micro-batch grouped by token, in increasing token and position order (the encoder's
 * backward sums each group without atomics). Returns the number of groups. */
static int group_tokens(gpu_lm *g, const int *tokens, int *group_token, int *group_start, int *group_pos)
{
    int Vp = g->m.cfg.padded_vocab, BT = (int)BT_OF(g), n = 0;
    memset(g->token_count, 0, (size_t)Vp * sizeof(int));
    for (int i = 0; i < BT; i++)
        g->token_count[tokens[i]]++;
    int at = 0;
    for (int v = 0; v < Vp; v++) {
        if (!g->token_count[v])
            continue;
        group_token[n] = v;
        group_start[n++] = at;
        g->token_cursor[v] = at;
        at += g->token_count[v];
    }
    group_start[n] = at;
    for (int i = 0; i < BT; i++)
        group_pos[g->token_cursor[tokens[i]]++] = i;
    return n;
}

/* Stages micro-batch mb's tokens, targets and groups in pinned memory and queues their copies. */
static int upload_micro_batch(gpu_lm *g, int mb, const int *tokens, const int *targets)
{
    size_t bt = BT_OF(g);
    int *pin = g->pinned_ints + (size_t)mb * INTS_PER_MB(g);
    int *tok = pin, *tgt = pin + bt, *gtok = pin + 2 * bt, *gstart = pin + 3 * bt, *gpos = pin + 4 * bt + 1;
    memcpy(tok, tokens + (size_t)mb * bt, bt * sizeof(int));
    memcpy(tgt, targets + (size_t)mb * bt, bt * sizeof(int));
    int n = group_tokens(g, tok, gtok, gstart, gpos);
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

/* An average over the ranks of count elements at p, on the communication stream, bounded. */
static void allreduce_avg(gpu_lm *g, void *p, size_t count, ncclDataType_t type, const char *what)
{
    ga_nccl_bound(g->nccl, g->cfg.comm_timeout_s, what);
    ncclResult_t r = ncclAllReduce(p, p, count, type, ncclAvg, g->nccl, g->comm);
    ga_nccl_unbound();
    ga_nccl_enqueued(g->nccl, r, g->cfg.comm_timeout_s, what);
}

/* Backward has queued the last of block `layer`'s gradient work (-1: the embeddings'): that bucket goes to
 * the communication stream behind an event, and backward goes on. Block L-1's bucket carries the final
 * layernorm's gradients too (they follow it in the layout, and backward has finished them before it). */
static void on_block_done(void *ctx, int layer)
{
    gpu_lm *g = ctx;
    const lm_config *cfg = &g->m.cfg;
    size_t offset = 0, count = g->m.off.wpe + (size_t)cfg->seq_len * (size_t)cfg->channels;
    int slot = cfg->layers;
    if (layer >= 0) {
        lm_block_range(cfg, layer, &offset, &count);
        if (layer == cfg->layers - 1)
            count += 2 * (size_t)cfg->channels;
        slot = layer;
    }
    GA_CUDA_CHECK(cudaEventRecord(g->bucket_ready[slot], g->compute));
    GA_CUDA_CHECK(cudaStreamWaitEvent(g->comm, g->bucket_ready[slot], 0));
    char what[96];
    if (layer >= 0)
        snprintf(what, sizeof what, "ncclAllReduce of block %d's gradient bucket", layer);
    else
        snprintf(what, sizeof what, "ncclAllReduce of the embeddings' gradient bucket");
    allreduce_avg(g, g->m.grads + offset, count, ncclBfloat16, what);
    if (layer < 0) /* the loss of the step, after the last bucket */
        allreduce_avg(g, g->m.a.loss_sum, 1, ncclFloat, "ncclAllReduce of the step's loss");
}

/* AdamW over every tensor, matrices with weight decay, vectors without (lm_optim_step's split). */
static void optimise(gpu_lm *g, float grad_scale)
{
    const lm_optim_config *oc = &g->cfg.optim;
    const lm_config *cfg = &g->m.cfg;
    size_t c = (size_t)cfg->channels;
    float lr = lm_lr_at(oc, g->optim_step);
    int t = ++g->optim_step;
    float b1c = 1.0f - powf(oc->beta1, (float)t), b2c = 1.0f - powf(oc->beta2, (float)t);
    const size_t len[12] = {c, c, 3 * c * c, 3 * c, c * c, c, c, c, 4 * c * c, 4 * c, 4 * c * c, c};
    const int decays[12] = {0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0};
    size_t n_tensors = 3 + 12 * (size_t)cfg->layers;
    for (size_t i = 0; i < n_tensors; i++) {
        size_t start, n;
        int decay;
        if (i < 2) { /* wte, wpe */
            start = i == 0 ? g->m.off.wte : g->m.off.wpe;
            n = i == 0 ? g->m.off.wpe : (size_t)cfg->seq_len * c;
            decay = 1;
        } else if (i == n_tensors - 1) { /* final layernorm */
            start = g->m.off.lnfw, n = 2 * c, decay = 0;
        } else {
            size_t l = (i - 2) / 12, k = (i - 2) % 12;
            start = (&g->m.off.blocks[l].ln1w)[k], n = len[k], decay = decays[k];
        }
        GA_CUDA_CHECK(lm_k_adamw(g->m.master + start, g->m.params + start, g->m.adam_m + start,
                                 g->m.adam_v + start, g->m.grads + start, n, lr, oc->beta1, oc->beta2,
                                 oc->eps, decay ? oc->weight_decay : 0.0f, b1c, b2c, grad_scale, g->compute));
    }
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
    GA_CUDA_CHECK(lm_k_grad_sumsq(m->a.norm_sq, m->a.norm_partials, m->grads, m->n_params, g->compute));
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
    /* Exposed communication: from the end of backward to the end of the last collective. */
    out->comm_wait_s = elapsed_s(g->backward_done, g->comm_done);
    out->compute_s = fmax(0.0, elapsed_s(g->step_start, g->step_end) - out->comm_wait_s);
    out->step_s = ga_now() - t0;
    out->loss = g->pinned_stats[0];
    out->grad_norm = norm;
    return 0;
}

static const float *gpu_params(lm_trainer *t)
{
    gpu_lm *g = (gpu_lm *)t;
    GA_CUDA_CHECK(cudaMemcpyAsync(g->host_params, g->m.master, g->m.n_params * sizeof(float),
                                  cudaMemcpyDeviceToHost, g->compute));
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "copy of the parameters to the host");
    return g->host_params;
}

/* Test only: the first master weight moves by one ulp, and its bf16 copy is rounded from it again. */
static void gpu_perturb(lm_trainer *t)
{
    gpu_lm *g = (gpu_lm *)t;
    const float *p = gpu_params(t);
    g->host_params[0] = nextafterf(p[0], INFINITY);
    GA_CUDA_CHECK(
        cudaMemcpyAsync(g->m.master, g->host_params, sizeof(float), cudaMemcpyHostToDevice, g->compute));
    GA_CUDA_CHECK(lm_k_cast_to_bf16(g->m.params, g->m.master, 1, g->compute));
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
    cudaEvent_t ev[] = {g->step_start, g->backward_done, g->comm_done, g->step_end};
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

/* Rank 0's initial weights (GPT-2's initialisation from the seed, lm_model_init_params) become every rank's:
 * copied to the fp32 master, broadcast with NCCL (bounded), rounded to the bf16 working copy. */
static void init_params(gpu_lm *g)
{
    lm_gpu_model *m = &g->m;
    size_t n = m->n_params;
    if (g->rank == 0) {
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
    GA_CUDA_CHECK(
        cudaMemcpyAsync(m->master, g->host_params, n * sizeof(float), cudaMemcpyHostToDevice, g->compute));
    ga_nccl_bound(g->nccl, g->cfg.comm_timeout_s, "ncclBroadcast of the initial parameters");
    ncclResult_t r = ncclBroadcast(m->master, m->master, n, ncclFloat, 0, g->nccl, g->compute);
    ga_nccl_unbound();
    ga_nccl_enqueued(g->nccl, r, g->cfg.comm_timeout_s, "ncclBroadcast of the initial parameters");
    GA_CUDA_CHECK(lm_k_cast_to_bf16(m->params, m->master, n, g->compute));
    GA_CUDA_CHECK(cudaMemsetAsync(m->adam_m, 0, n * sizeof(float), g->compute));
    GA_CUDA_CHECK(cudaMemsetAsync(m->adam_v, 0, n * sizeof(float), g->compute));
    GA_CUDA_CHECK(cudaMemsetAsync(m->grads, 0, n * sizeof(lm_bf16), g->compute));
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "broadcast of the initial parameters");
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
    cudaEvent_t *timed[] = {&g->step_start, &g->backward_done, &g->comm_done, &g->step_end};
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
    if (!g->token_count || !g->token_cursor || !g->host_params)
        GA_FATAL(GA_EXIT_INTERNAL, "out of host memory for a model of %zu parameters", g->m.n_params);
}

/* What the GPU path refuses before touching the GPU: 0, or -1 with one line (the same on every rank). */
static int check_config(const lm_trainer_config *cfg, char *err, size_t errlen)
{
    if (cfg->zero1) {
        snprintf(err, errlen,
                 "--zero1 is not implemented on the GPU path yet (each rank keeps the whole AdamW "
                 "state): run without it");
        return -1;
    }
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
    if (check_config(cfg, err, errlen) != 0 || check_fits(cfg, comm, err, errlen) != 0)
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
    int ok = lm_gpu_model_alloc(&g->m, &cfg->cfg, cfg->micro_batch, g->compute, gelu_fits_epilogue(&cfg->cfg),
                                why, sizeof why) == 0;
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
