/* lm_train's GPU trainer under the GPU test double (2 ranks): orchestration only, never numerics (the
 * double's GEMMs write a pattern and its kernels are recorded, not run). The driver interposes on
 * ncclAllReduce, ncclReduceScatter, ncclAllGather, ncclBroadcast and cublasLtMatmul (the executable's
 * definitions come before the preloaded double's, and pass each call on to it) and checks, step by step: one
 * bucket per block, blocks L-1 .. 0 in backward order, then the embeddings' bucket and the loss; each bucket
 * the block's slice of the gradients (lm_block_range; block L-1's with the final layernorm), bf16, ncclAvg,
 * on a stream that is not the GEMMs'; each enqueued as soon as backward leaves its block (exactly one
 * block's backward GEMMs between two buckets, so they overlap the rest of backward). Also: the initial
 * weights one fp32 broadcast from rank 0; the GPU model's layout the host model's; the encoder backward's
 * grouping of positions by token. With --zero1: reduce-scatters (ncclAvg, each rank's shard
 * ceil(count / ranks)) in the same order, the norm summed over the ranks, one all-gather per bucket on the
 * compute stream. The tests (ctest/lm_train/CMakeLists.txt) add: with the double's hang hook a collective
 * that never completes ends in the bounded wait (exit 4); a model too big for the double's device memory is
 * refused with one line before training (exit 2).
 *
 * usage: test_lm_gpu_double --layers L --channels C --heads NH --seq-len T --vocab V --batch-size B
 *                           [--accum K] [--steps N] [-T SECONDS] [--zero1] [--report-dir IGNORED] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <mpi.h>
#include <nccl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_runtime.h"
#include "lm_data.h"
#include "lm_gpu_model.h"
#include "lm_model.h"
#include "lm_trainer.h"

/* ---- what the trainer called ---- */

typedef enum { BROADCAST, ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER } coll_kind;

typedef struct {
    coll_kind kind;
    const void *buf; /* the input: the gradients' slice a bucket reduces */
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    int root;
    cudaStream_t stream;
    long gemms_before; /* cublasLtMatmul calls before this collective */
} coll_call;

static coll_call calls[1024];
static int n_calls;
static long n_gemms;
static cudaStream_t gemm_stream;
static bool gemm_streams_differ;

static void *next_symbol(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "[lm_gpu_double] FAIL: no %s after the driver's\n", name);
        exit(1);
    }
    return f;
}

static void note(coll_call c)
{
    c.gemms_before = n_gemms;
    if (n_calls < (int)(sizeof calls / sizeof calls[0]))
        calls[n_calls++] = c;
}

ncclResult_t ncclAllReduce(const void *in, void *out, size_t count, ncclDataType_t t, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t s)
{
    static ncclResult_t (*real)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                cudaStream_t);
    if (!real)
        *(void **)&real = next_symbol("ncclAllReduce");
    note((coll_call){ALL_REDUCE, in, count, t, op, -1, s, 0});
    return real(in, out, count, t, op, comm, s);
}

ncclResult_t ncclReduceScatter(const void *in, void *out, size_t count, ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t s)
{
    static ncclResult_t (*real)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                cudaStream_t);
    if (!real)
        *(void **)&real = next_symbol("ncclReduceScatter");
    note((coll_call){REDUCE_SCATTER, in, count, t, op, -1, s, 0});
    return real(in, out, count, t, op, comm, s);
}

ncclResult_t ncclAllGather(const void *in, void *out, size_t count, ncclDataType_t t, ncclComm_t comm,
                           cudaStream_t s)
{
    static ncclResult_t (*real)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    if (!real)
        *(void **)&real = next_symbol("ncclAllGather");
    note((coll_call){ALL_GATHER, in, count, t, ncclSum, -1, s, 0});
    return real(in, out, count, t, comm, s);
}

ncclResult_t ncclBroadcast(const void *in, void *out, size_t count, ncclDataType_t t, int root,
                           ncclComm_t comm, cudaStream_t s)
{
    static ncclResult_t (*real)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    if (!real)
        *(void **)&real = next_symbol("ncclBroadcast");
    note((coll_call){BROADCAST, out, count, t, ncclSum, root, s, 0});
    return real(in, out, count, t, root, comm, s);
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha, const void *A,
                              cublasLtMatrixLayout_t la, const void *B, cublasLtMatrixLayout_t lb,
                              const void *beta, const void *C, cublasLtMatrixLayout_t lc, void *D,
                              cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo, void *ws,
                              size_t wsb, cudaStream_t stream)
{
    static cublasStatus_t (*real)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
                                  cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t, const void *,
                                  const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                  const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);
    if (!real)
        *(void **)&real = next_symbol("cublasLtMatmul");
    if (n_gemms++ == 0)
        gemm_stream = stream;
    else if (stream != gemm_stream)
        gemm_streams_differ = true;
    return real(h, d, alpha, A, la, B, lb, beta, C, lc, D, ld, algo, ws, wsb, stream);
}

/* ---- checks ---- */

static int failures;

#define EXPECT(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "[lm_gpu_double] FAIL: " __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                                             \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

/* GEMMs of one micro-batch: forward 6 per block (4 projections, 2 attention) + the classifier; backward 12
 * per block (2 per projection, 4 attention) + 2 for the classifier. */
#define GEMMS_BACKWARD_PER_BLOCK 12
static long gemms_per_micro_batch(int L)
{
    return 6L * L + 1 + GEMMS_BACKWARD_PER_BLOCK * (long)L + 2;
}

/* Bucket i of a step: block L-1-i for i < L, then the embeddings' (i == L). */
static void expected_bucket(const lm_config *cfg, int i, size_t *offset, size_t *count)
{
    size_t c = (size_t)cfg->channels;
    if (i == cfg->layers) {
        *offset = 0;
        *count = ((size_t)cfg->padded_vocab + (size_t)cfg->seq_len) * c;
        return;
    }
    lm_block_range(cfg, cfg->layers - 1 - i, offset, count);
    if (i == 0)
        *count += 2 * c; /* the final layernorm follows block L-1 */
}

/* The L + 1 buckets of a step at calls[first ..]: kind, order, slices, stream, and one block's backward
 * GEMMs between two (ZeRO-1: reduce-scatters, each rank receiving ceil(count / ranks) elements). */
static void check_buckets(const lm_config *cfg, int first, int ranks, bool zero1, int step)
{
    int L = cfg->layers;
    const coll_call *emb = &calls[first + L];
    for (int i = 0; i <= L; i++) {
        const coll_call *b = &calls[first + i];
        size_t offset, count;
        expected_bucket(cfg, i, &offset, &count);
        size_t want = zero1 ? (count + (size_t)ranks - 1) / (size_t)ranks : count;
        long at = (long)((const char *)b->buf - (const char *)emb->buf);
        EXPECT(b->kind == (zero1 ? REDUCE_SCATTER : ALL_REDUCE) && b->type == ncclBfloat16 &&
                   b->op == ncclAvg,
               "step %d bucket %d: not an %s of bf16 with ncclAvg", step, i,
               zero1 ? "ncclReduceScatter" : "ncclAllReduce");
        EXPECT(b->count == want && at == (long)(offset * 2),
               "step %d bucket %d: %zu elements at byte %ld, expected %zu at %zu (block %d's slice)", step, i,
               b->count, at, want, offset * 2, L - 1 - i);
        EXPECT(b->stream != gemm_stream && b->stream == emb->stream,
               "step %d bucket %d: not on the communication stream", step, i);
        if (i < L - 1)
            EXPECT(calls[first + i + 1].gemms_before - b->gemms_before == GEMMS_BACKWARD_PER_BLOCK,
                   "step %d: %ld GEMMs between the buckets of blocks %d and %d, expected one block's %d",
                   step, calls[first + i + 1].gemms_before - b->gemms_before, L - 1 - i, L - 2 - i,
                   GEMMS_BACKWARD_PER_BLOCK);
    }
    EXPECT(emb->gemms_before == calls[first + L - 1].gemms_before,
           "step %d: GEMMs between block 0's bucket and the embeddings'", step);
}

/* ZeRO-1, after the loss: the norm summed over the ranks' shards, then every bucket's updated shards
 * all-gathered on the compute stream (which the next forward runs on). */
static void check_zero1_tail(const lm_config *cfg, int first, int ranks, int step)
{
    int L = cfg->layers;
    const coll_call *norm = &calls[first + L + 2];
    EXPECT(norm->kind == ALL_REDUCE && norm->type == ncclFloat && norm->op == ncclSum && norm->count == 1,
           "step %d: the squared norm is not summed over the ranks (fp32 ncclSum)", step);
    for (int slot = 0; slot <= L; slot++) {
        const coll_call *g = &calls[first + L + 3 + slot];
        size_t offset, count;
        expected_bucket(cfg, slot == L ? L : L - 1 - slot, &offset, &count);
        EXPECT(g->kind == ALL_GATHER && g->type == ncclBfloat16 && g->stream == gemm_stream &&
                   g->count == (count + (size_t)ranks - 1) / (size_t)ranks,
               "step %d: all-gather %d is not bucket %d's bf16 shard on the compute stream", step, slot,
               slot);
    }
}

/* The collectives calls[first ..] and GEMMs since gemms_at_start of one step. */
static void check_step(const lm_config *cfg, int accum, int first, long gemms_at_start, int ranks, bool zero1,
                       int step)
{
    int L = cfg->layers, want = zero1 ? 2 * L + 4 : L + 2;
    EXPECT(n_calls - first == want,
           "step %d: %d collectives, expected %d (one bucket per block, the embeddings', the loss%s)", step,
           n_calls - first, want, zero1 ? ", the norm and one all-gather per bucket" : "");
    if (n_calls - first != want)
        return;
    check_buckets(cfg, first, ranks, zero1, step);
    /* The first bucket leaves once the last block's backward is done: the other micro-batches, the forward,
     * the classifier's backward GEMMs and one block's. */
    long before_first = calls[first].gemms_before - gemms_at_start;
    long expect_first = (accum - 1) * gemms_per_micro_batch(L) + 6L * L + 1 + 2 + GEMMS_BACKWARD_PER_BLOCK;
    EXPECT(before_first == expect_first,
           "step %d: the first bucket after %ld GEMMs of the step, expected %ld (as soon as backward leaves "
           "block %d)",
           step, before_first, expect_first, L - 1);
    EXPECT(n_gemms - gemms_at_start == accum * gemms_per_micro_batch(L), "step %d: %ld GEMMs, expected %ld",
           step, n_gemms - gemms_at_start, accum * gemms_per_micro_batch(L));
    const coll_call *loss = &calls[first + L + 1];
    EXPECT(loss->kind == ALL_REDUCE && loss->type == ncclFloat && loss->op == ncclAvg && loss->count == 1 &&
               loss->stream == calls[first + L].stream,
           "step %d: the loss is not averaged (fp32, ncclAvg) on the communication stream after the buckets",
           step);
    if (zero1)
        check_zero1_tail(cfg, first, ranks, step);
    EXPECT(!gemm_streams_differ, "step %d: GEMMs on more than one stream", step);
}

/* The GPU model's tensors lie where the host model's do (lm_model.h), so that lm_block_range's slices are
 * the buckets. */
static void check_layout(const lm_config *cfg)
{
    lm_gpu_offsets off;
    if (lm_gpu_offsets_make(cfg, &off) != 0)
        exit(1);
    size_t c = (size_t)cfg->channels;
    for (int l = 0; l < cfg->layers; l++) {
        size_t offset, count;
        lm_block_range(cfg, l, &offset, &count);
        EXPECT(off.blocks[l].ln1w == offset && off.blocks[l].fcprojb + c == offset + count,
               "block %d's tensors are not lm_block_range's slice", l);
    }
    EXPECT(off.lnfw == off.blocks[cfg->layers - 1].fcprojb + c && off.total == lm_param_count(cfg),
           "the final layernorm does not follow the last block, or the count is not lm_param_count's");
    lm_gpu_offsets_free(&off);
}

/* The encoder backward's groups: tokens in increasing order, each with its positions in increasing order. */
static void check_token_groups(void)
{
    const int tokens[6] = {3, 1, 3, 0, 1, 3};
    const int want_token[3] = {0, 1, 3}, want_start[4] = {0, 1, 3, 6}, want_pos[6] = {3, 1, 4, 0, 2, 5};
    int count[4], cursor[4], token[6], start[7], pos[6];
    int n = lm_gpu_token_groups(tokens, 6, 4, count, cursor, token, start, pos);
    EXPECT(n == 3 && !memcmp(token, want_token, sizeof want_token) &&
               !memcmp(start, want_start, sizeof want_start) && !memcmp(pos, want_pos, sizeof want_pos),
           "lm_gpu_token_groups does not group positions by token in order");
}

typedef struct {
    lm_config cfg;
    int batch, accum, steps;
    double timeout_s;
    bool zero1;
} driver_args;

static int int_arg(char **argv, int i, int argc)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "[lm_gpu_double] %s needs a value\n", argv[i]);
        exit(2);
    }
    return atoi(argv[i + 1]);
}

static void parse(int argc, char **argv, driver_args *a)
{
    int L = 2, C = 64, NH = 4, T = 64, V = 256;
    *a = (driver_args){.batch = 2, .accum = 1, .steps = 3, .timeout_s = 5};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int *dst = !strcmp(o, "--layers")       ? &L
                   : !strcmp(o, "--channels")   ? &C
                   : !strcmp(o, "--heads")      ? &NH
                   : !strcmp(o, "--seq-len")    ? &T
                   : !strcmp(o, "--vocab")      ? &V
                   : !strcmp(o, "--batch-size") ? &a->batch
                   : !strcmp(o, "--accum")      ? &a->accum
                   : !strcmp(o, "--steps")      ? &a->steps
                                                : NULL;
        if (dst)
            *dst = int_arg(argv, i++, argc);
        else if (!strcmp(o, "-T"))
            a->timeout_s = int_arg(argv, i++, argc);
        else if (!strcmp(o, "--zero1"))
            a->zero1 = true;
        else if (!strcmp(o, "--report-dir"))
            i++;
    }
    char err[256];
    if (lm_config_make(&a->cfg, L, C, NH, T, V, err, sizeof err) != 0) {
        fprintf(stderr, "[lm_gpu_double] %s\n", err);
        exit(2);
    }
}

/* Trains a.steps steps on the synthetic stream (each rank its own sequences), checking each. */
static void train(lm_trainer *t, const driver_args *a, int rank, int size)
{
    lm_markov mc;
    char err[256];
    if (lm_markov_init(&mc, a->cfg.vocab, 1234, err, sizeof err) != 0) {
        fprintf(stderr, "[lm_gpu_double] %s\n", err);
        exit(1);
    }
    int seqs = a->batch * a->accum;
    size_t n = (size_t)seqs * (size_t)a->cfg.seq_len;
    int *tokens = malloc(2 * n * sizeof(int));
    if (!tokens)
        exit(1);
    for (int s = 0; s < a->steps; s++) {
        int first = n_calls;
        long g0 = n_gemms;
        lm_markov_batch(&mc, ((uint64_t)s * (uint64_t)size + (uint64_t)rank) * (uint64_t)seqs, seqs,
                        a->cfg.seq_len, tokens, tokens + n);
        lm_step_result r;
        if (t->step(t, tokens, tokens + n, &r, err, sizeof err) != 0) {
            fprintf(stderr, "[lm_gpu_double] step %d: %s\n", s, err);
            exit(1);
        }
        check_step(&a->cfg, a->accum, first, g0, size, a->zero1, s);
        if (rank == 0)
            printf(
                "[lm_gpu_double] step %d: %d buckets (blocks %d..0, then the embeddings) %s, ncclAvg, on the "
                "communication stream, and the loss; %d GEMMs between buckets%s; step %.3f s, exposed comm "
                "%.3f s, loss %g\n",
                s, a->cfg.layers + 1, a->cfg.layers - 1, a->zero1 ? "reduce-scattered" : "all-reduced",
                GEMMS_BACKWARD_PER_BLOCK, a->zero1 ? "; the norm, then one all-gather per bucket" : "",
                r.step_s, r.comm_wait_s, r.loss);
    }
    free(tokens);
    lm_markov_free(&mc);
}

int main(int argc, char **argv)
{
    ga_ctx ctx;
    ga_init(&argc, &argv, &ctx);
    driver_args a;
    parse(argc, argv, &a);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1 ||
        cudaSetDevice(ctx.local_rank % ndev) != cudaSuccess) {
        fprintf(stderr, "[lm_gpu_double] no GPU (is the double preloaded?)\n");
        return 3;
    }
    lm_trainer_config tc = {.cfg = a.cfg,
                            .micro_batch = a.batch,
                            .grad_accum = a.accum,
                            .optim = lm_optim_defaults(1, a.steps),
                            .seed = 1234,
                            .zero1 = a.zero1,
                            .comm_timeout_s = a.timeout_s,
                            .slow_factor = 1.0};
    char err[1024];
    lm_trainer *t = lm_gpu_trainer_create(&tc, MPI_COMM_WORLD, err, sizeof err);
    if (!t) {
        if (ctx.world_rank == 0)
            fprintf(stderr, "[lm_train] %s\n", err);
        EXPECT(n_gemms == 0 && n_calls == 0, "refused only after %ld GEMMs and %d collectives", n_gemms,
               n_calls);
        ga_deadline_stop(); /* its watcher tests MPI requests: never after MPI_Finalize */
        MPI_Finalize();
        return failures ? 1 : 2;
    }
    EXPECT(n_calls == 1 && calls[0].kind == BROADCAST && calls[0].type == ncclFloat && calls[0].root == 0 &&
               calls[0].count == t->n_params,
           "the initial weights are not one fp32 broadcast of %zu parameters from rank 0", t->n_params);
    check_layout(&a.cfg);
    check_token_groups();
    train(t, &a, ctx.world_rank, ctx.world_size);
    (void)t->params(t);
    if (ctx.world_rank == 0)
        printf("[lm_gpu_double] %s %s trainer: %zu parameters, %.1f MiB of device memory used\n", t->backend,
               t->dtype, t->n_params, t->bytes_used / (1 << 20));
    t->destroy(t);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (ctx.world_rank == 0)
        printf("[lm_gpu_double] %s\n", total ? "FAIL" : "PASS");
    ga_deadline_stop();
    MPI_Finalize();
    return total ? 1 : 0;
}
