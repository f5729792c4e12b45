/* lm_train: a GPT-2-family transformer trained data-parallel on every rank (fp32 on the host path, the GPU
 * trainer where built), with its time as a budget. It reports tokens/s per GPU and per job, step times, the
 * share of the step exposed to communication, MFU, and scaling efficiency, and checks that the loss falls,
 * that every replica ends identical and that no GPU holds the step back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_peaks.h"
#include "ga_engine.h"
#include "ga_remeasure.h"
#include "ga_report.h"
#include "ga_testhook.h"
#include "ga_text.h"
#include "ga_time.h"
#include "lm_analysis.h"
#include "lm_json.h"
#include "lm_loop.h"
#include "lm_opts.h"
#include "lm_record.h"
#include "lm_setup.h"

/* What the run holds between its phases. */
typedef struct {
    lm_opts o;
    lm_config cfg;
    lm_dataset ds;
    lm_trainer_config tc;
    lm_trainer *trainer;
    lm_loop_config loop, window;
    lm_loop_result res;
    lm_check_opts checks;
    json_t *not_covered; /* rank 0's lines */
    bool prepared;       /* the data and the trainer are there for cleanup */
} lm_state;

static void not_covered(lm_state *st, const ga_ctx *ctx, const char *line)
{
    if (ctx->world_rank != 0)
        return;
    ga_log("TRAIN", "not covered: %s", line);
    json_array_append_new(st->not_covered, ga_json_text(line)); /* may quote a path or a GPU name */
}

/* The options against each other and the model's sizes; -1 to go on, else 2 (rank 0 printed one line). */
static int check_sizes(const ga_ctx *ctx, lm_state *st, ga_backend backend, bool quick)
{
    (void)ctx;
    lm_opts_defaults(&st->o, backend == GA_BACKEND_GPU, quick);
    char err[256];
    if (lm_opts_config(&st->o, &st->cfg, err, sizeof err) != 0) {
        ga_error_once(lm_command_line.name, "%s", err);
        return GA_EXIT_USAGE;
    }
    lm_config named;
    lm_config_named(st->o.model, &named, err, sizeof err);
    if (memcmp(&named, &st->cfg, sizeof named) != 0) /* explicit sizes: the report says it is no named size */
        snprintf(st->o.model, sizeof st->o.model, "custom");
    return -1;
}

static lm_trainer_config trainer_config(const ga_ctx *ctx, const lm_state *st)
{
    const lm_opts *o = &st->o;
    lm_trainer_config tc = {.cfg = st->cfg,
                            .micro_batch = o->batch,
                            .grad_accum = o->grad_accum,
                            .optim = lm_optim_defaults(o->warmup, o->steps),
                            .seed = (uint64_t)o->seed,
                            .zero1 = o->zero1,
                            .comm_timeout_s = o->comm_timeout_s,
                            /* the test hook (docs/testing.md); the GPU path does not read it */
                            .slow_factor = ga_test_slow_factor(ctx->world_rank),
                            .delay_s = ga_test_delay_s(ctx->world_rank)};
    tc.optim.lr = (float)o->lr;
    tc.optim.min_lr_frac = 0.1f;
    return tc;
}

/* The host path refuses a model that does not fit its rank's share of the node's memory before anything is
 * allocated (the GPU trainer checks the device's). -1 to go on, else 2 with one line from rank 0. */
static int check_host_memory(const ga_ctx *ctx, const lm_state *st, ga_backend backend)
{
    if (backend == GA_BACKEND_GPU)
        return -1;
    lm_memory need = lm_memory_estimate(&st->cfg, st->o.batch, LM_PREC_FP32);
    double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) /
                  (ctx->local_size > 0 ? ctx->local_size : 1);
    int fits = need.total <= 0.9 * have, all_fit = 0;
    GA_MPI_CHECK(MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (all_fit)
        return -1;
    ga_error_once(
        lm_command_line.name,
        "model %s (%d layers, %d channels, seq %d) at --batch-size %d needs %.2f GiB per rank on the "
        "host path; a node's memory gives each of its ranks %.2f GiB: a smaller model or batch",
        st->o.model, st->cfg.layers, st->cfg.channels, st->cfg.seq_len, st->o.batch, need.total / (1 << 30),
        have / (1 << 30));
    return GA_EXIT_USAGE;
}

/* The GPU's dense bf16 peak (ga_peaks) for MFU; 0 on the host path or an unknown model. */
static double device_peak_tflops(const lm_record *r)
{
    if (r->hdr.device_index < 0 || !r->hdr.device_name[0])
        return 0;
    const ga_gpu_peaks *p = ga_peaks_lookup(r->hdr.device_name);
    return p ? p->tflops[GA_BF16] : 0;
}

/* The rank's compute time per step: the median over a loop's timed steps. */
static double loop_compute_ms(const lm_loop_result *res)
{
    return 1e3 * lm_median_of(res->compute_s, res->timed_steps);
}

/* This rank's record from the training loop and the final parameters (the perturb hook first). */
static void fill_record(lm_state *st, lm_record *r)
{
    const lm_loop_result *res = &st->res;
    lm_trainer *t = st->trainer;
    int done = res->steps_done, w = lm_loss_window(done);
    r->micro_batch = st->o.batch;
    r->grad_accum = st->o.grad_accum;
    r->seq_len = st->cfg.seq_len;
    r->steps_asked = st->o.steps;
    r->steps_done = done;
    r->timed_steps = res->timed_steps;
    r->nonfinite_step = res->nonfinite_step;
    r->n_params = (int64_t)t->n_params;
    r->loss_start = lm_mean(res->loss_curve, 0, w < done ? w : done);
    r->loss_end = lm_mean(res->loss_curve, done - w, w);
    r->train_s = res->train_s;
    r->bytes_used = t->bytes_used;
    r->peak_tflops = device_peak_tflops(r);
    if (res->timed_steps > 0 && res->train_s > 0) {
        double tokens = (double)res->timed_steps * st->o.batch * st->o.grad_accum * st->cfg.seq_len;
        r->tokens_per_s = tokens / res->train_s;
        r->step_ms_median = 1e3 * lm_median_of(res->step_s, res->timed_steps);
        for (int k = 0; k < res->timed_steps; k++)
            r->step_ms_worst = fmax(r->step_ms_worst, 1e3 * res->step_s[k]);
        r->comm_wait_ms = 1e3 * res->comm_wait_s / res->timed_steps;
        r->comm_fraction = res->comm_wait_s / res->train_s;
        lm_add_compute(r, loop_compute_ms(res));
    }
    if (ga_test_names_rank("PERTURB_RANK", r->hdr.world_rank)) { /* test hook (ga_testhook.h) */
        ga_log_rank("TRAIN", "test only (" GA_TEST_PREFIX "PERTURB_RANK): moving one parameter by one ulp");
        t->perturb(t);
    }
    bool finite;
    lm_params_digest(t->params(t), t->n_params, &r->param_hash, &r->param_sum, &finite);
    r->params_finite = finite;
}

/* The remeasurement of a straggler (ga_remeasure_loop): rank 0 finds one, every rank trains another window
 * of steps (collective: the gradients are averaged as before) and keeps its best compute time per step. */
static unsigned straggler_suspects(const void *all, int n, ga_run *run, char *why, size_t why_len)
{
    const lm_state *st = run->state;
    return lm_straggler_suspects(all, n, &st->checks, why, why_len) ? 1u : 0u;
}

static void measure_again(unsigned mask, void *mine, ga_run *run)
{
    (void)mask;
    lm_state *st = run->state;
    lm_loop_result res;
    char err[256];
    st->window.phase_end = lm_phase_end(1.0);
    if (lm_loop_run(st->trainer, &st->ds.src, &st->window, &res, err, sizeof err) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "remeasurement: %s", err);
    if (res.timed_steps > 0)
        lm_add_compute(mine, loop_compute_ms(&res));
    st->window.first_sequence += (uint64_t)res.steps_done * 1000000ull;
    lm_loop_result_free(&res);
}

static lm_check_opts check_opts(const ga_ctx *ctx, const lm_state *st)
{
    const lm_opts *o = &st->o;
    return (lm_check_opts){.min_improvement = o->min_improvement,
                           .loss_floor = st->ds.loss_floor,
                           .ln_vocab = log((double)st->cfg.vocab),
                           .straggler_ratio = lm_opts_straggler_ratio(o),
                           .flops_per_token = lm_flops_per_token(&st->cfg, LM_FLOPS_LLMC),
                           .min_mfu = o->min_mfu,
                           .min_scaling = o->min_scaling,
                           .min_tokens_per_gpu = o->min_tokens_per_gpu,
                           .floors_estimated = o->floors_estimated,
                           .tokens_per_step =
                               (int64_t)ctx->world_size * o->batch * o->grad_accum * st->cfg.seq_len};
}

/* Rank 0: the per-rank and job lines of the log. */
static void log_outcome(const ga_ctx *ctx, const ga_common_opts *common, const lm_record *all,
                        const lm_outcome *out, const lm_check_opts *co)
{
    int n = ctx->world_size;
    for (int i = 0; i < n; i++)
        if (n <= 8 || common->verbose)
            ga_log("TRAIN",
                   "rank %d %s: %.0f tokens/s, step %.2f ms median, %.2f ms worst, compute %.2f ms, "
                   "waiting on gradients %.1f%%, params %016llx",
                   all[i].hdr.world_rank, all[i].hdr.host, all[i].tokens_per_s, all[i].step_ms_median,
                   all[i].step_ms_worst, lm_compute_ms(&all[i]), 100.0 * all[i].comm_fraction,
                   (unsigned long long)all[i].param_hash);
    ga_log("TRAIN",
           "loss %.4f -> %.4f in %d steps: %.1f%% of the way to the floor %.4f (need %.1f%%; ln V %.4f)",
           out->loss_start, out->loss_end, out->steps, 100.0 * out->improvement, co->loss_floor,
           100.0 * co->min_improvement, co->ln_vocab);
    ga_log("TRAIN",
           "%.0f tokens/s for the job, %.0f per GPU; step %.2f ms median, %.2f ms worst; %.1f%% of the step "
           "waiting on gradients",
           out->tokens_per_s, out->tokens_per_s_per_gpu, out->step_ms_median, out->step_ms_worst,
           100.0 * out->comm_fraction);
    if (isfinite(out->mfu))
        ga_log("TRAIN",
               "MFU %.1f%%: %.0f tokens/s per GPU x %.4g FLOPs/token (6N + 6LCT) / %.1f TFLOP/s dense bf16",
               100.0 * out->mfu, out->tokens_per_s_per_gpu, co->flops_per_token, out->peak_tflops);
    if (isfinite(out->scaling_efficiency))
        ga_log("TRAIN", "scaling: %.0f tokens/s per GPU for the job, %.0f for a group alone: %.1f%%",
               out->tokens_per_s_per_gpu, out->single_tokens_per_s_per_gpu, 100.0 * out->scaling_efficiency);
    ga_log("TRAIN", "replicas: %s", out->replicas_identical ? "all identical" : "DIFFER (see the findings)");
}

static lm_run_info run_info_of(const ga_ctx *ctx, const lm_state *st)
{
    return (lm_run_info){.backend = st->trainer->backend,
                         .dtype = st->trainer->dtype,
                         .data = st->ds.what,
                         .model = st->o.model,
                         .cfg = st->cfg,
                         .ranks = ctx->world_size,
                         .micro_batch = st->o.batch,
                         .grad_accum = st->o.grad_accum,
                         .steps_asked = st->o.steps,
                         .warmup = st->o.warmup,
                         .tokens_per_step = st->checks.tokens_per_step,
                         .n_params = st->trainer->n_params,
                         .lr = st->o.lr,
                         .seed = (uint64_t)st->o.seed,
                         .zero1 = st->o.zero1,
                         .flops_per_token = lm_flops_per_token(&st->cfg, LM_FLOPS_LLMC),
                         .flops_per_token_palm = lm_flops_per_token(&st->cfg, LM_FLOPS_PALM),
                         .checks = &st->checks};
}

/* Rank 0: the checks into the open report r (its findings, summary, headlines, metrics). */
static void analyse_into(const ga_ctx *ctx, const ga_common_opts *common, lm_state *st, const lm_record *all,
                         ga_program_report *r)
{
    int n = ctx->world_size;
    lm_outcome out;
    lm_analyse(all, n, &st->checks, &r->findings, &out);
    log_outcome(ctx, common, all, &out, &st->checks);
    /* the host path has no MFU to speak of (its summary says why); a GPU whose model has no peak does */
    if (isnan(out.mfu) && strcmp(st->trainer->backend, "gpu") == 0)
        not_covered(st, ctx, "MFU: no dense bf16 peak known for this GPU model (common/analysis/ga_peaks)");
    lm_run_info info = run_info_of(ctx, st);
    json_object_set_new(r->json, "summary",
                        lm_summary_json(&info, &out, st->res.loss_curve, st->res.steps_done));
    json_object_set_new(r->json, "conditions", lm_conditions_json(&info));
    json_object_set_new(r->json, "not_covered", st->not_covered);
    st->not_covered = NULL;
    lm_add_headlines(r->json, &out, st->res.loss_curve, st->res.steps_done);
    ga_report_add_metric(r->json, "tokens_per_s", out.tokens_per_s, "tokens/s", true, GA_WHERE_CLUSTER);
    ga_report_add_metric(r->json, "tokens_per_s_per_gpu", out.tokens_per_s_per_gpu, "tokens/s", true,
                         GA_WHERE_CLUSTER);
    ga_report_add_metric(r->json, "step_ms_median", out.step_ms_median, "ms", false, GA_WHERE_CLUSTER);
    ga_report_add_metric(r->json, "comm_fraction", out.comm_fraction, "fraction", false, GA_WHERE_CLUSTER);
    ga_report_add_metric(r->json, "loss_improvement", out.improvement, "fraction", true, GA_WHERE_CLUSTER);
    if (isfinite(out.mfu))
        ga_report_add_metric(r->json, "mfu", out.mfu, "fraction", true, GA_WHERE_CLUSTER);
    if (isfinite(out.scaling_efficiency))
        ga_report_add_metric(r->json, "scaling_efficiency", out.scaling_efficiency, "fraction", true,
                             GA_WHERE_CLUSTER);
    for (int i = 0; i < n; i++)
        ga_report_add_metric(r->json, "tokens_per_s_rank", all[i].tokens_per_s, "tokens/s", true,
                             ga_record_where(&all[i].hdr));
    lm_outcome_free(&out);
}

/* A binary built without the GPU trainer (LM_HAVE_GPU_TRAINER off) trains on the host when the backend was
 * left to it, and says so; --backend gpu is refused when the trainer is made. */
static ga_backend without_gpu_trainer(const ga_ctx *ctx, lm_state *st, ga_backend backend)
{
#if GA_HAVE_CUDA && LM_HAVE_GPU_TRAINER
    (void)ctx;
    (void)st;
    return backend;
#else
    if (backend != GA_BACKEND_GPU || st->o.backend == GA_BACKEND_GPU)
        return backend;
    not_covered(st, ctx, "GPU path: this lm_train was built without the GPU trainer; it trained on the host");
    return GA_BACKEND_HOST;
#endif
}

/* Collective: this rank's GPU (the GPU path), the data and the trainer. -1 to go on, else the exit code. */
static int prepare_training(const ga_ctx *ctx, lm_state *st, ga_backend backend, lm_record *mine)
{
    ga_phase("loading the data");
    int rc = lm_data_prepare(ctx, &st->o, &st->cfg, &st->ds);
    if (rc >= 0)
        return rc;
    ga_log("TRAIN", "data: %s", st->ds.what);
#if GA_HAVE_CUDA
    if (backend == GA_BACKEND_GPU) {
        ga_gpu_info gpu;
        ga_gpu_select(ctx, &gpu);
    }
#endif
    ga_record_header_init(ctx, &mine->hdr); /* again, now with the device */
    st->tc = trainer_config(ctx, st);
    st->checks = check_opts(ctx, st);
    if (st->o.scaling) {
        char why[256];
        if (!lm_scaling_phase(ctx, &st->o, &st->tc, &st->ds.src, backend, mine, why, sizeof why))
            not_covered(st, ctx, why);
    }
    ga_phase("building the model");
    char err[1024] = ""; /* the GPU trainer says what it needs and what the GPU has */
    st->trainer = lm_make_trainer(ctx, &st->tc, backend, MPI_COMM_WORLD, err, sizeof err);
    /* every rank alike; on the host path the one failure is memory (exit 5) */
    if (!st->trainer) {
        ga_error_once(lm_command_line.name, "%s", err);
        lm_data_free(&st->ds);
        return backend == GA_BACKEND_GPU ? GA_EXIT_ENV : GA_EXIT_INTERNAL;
    }
    ga_log("TRAIN",
           "model %s: %d layers, %d channels, %d heads, seq %d, vocab %d (padded %d): %zu parameters, %s %s, "
           "%.1f MiB per rank; %lld tokens per step (%d ranks x %d x %d micro-batch%s x %d)",
           st->o.model, st->cfg.layers, st->cfg.channels, st->cfg.heads, st->cfg.seq_len, st->cfg.vocab,
           st->cfg.padded_vocab, st->trainer->n_params, st->trainer->backend, st->trainer->dtype,
           st->trainer->bytes_used / (1 << 20), (long long)st->checks.tokens_per_step, ctx->world_size,
           st->o.batch, st->o.grad_accum, st->o.grad_accum == 1 ? "" : "es", st->cfg.seq_len);
    if (st->o.zero1 && strcmp(st->trainer->backend, "host") == 0)
        not_covered(st, ctx, "ZeRO-1 (--zero1): a GPU path option; the host path averaged whole gradients");
    return -1;
}

/* Collective: the whole job trains for its share of the time; what the time cut is said as not covered. */
static void train(const ga_ctx *ctx, const ga_common_opts *common, lm_state *st)
{
    const lm_opts *o = &st->o;
    /* the remeasurement windows, when a straggler calls for them, train in what the job leaves */
    st->loop = (lm_loop_config){.steps = o->steps,
                                .micro_batch = o->batch,
                                .grad_accum = o->grad_accum,
                                .seq_len = st->cfg.seq_len,
                                .warmup = o->steps >= 10 ? 2 : 0,
                                .phase_end = lm_phase_end(o->remeasure > 0 ? 0.8 : 1.0),
                                .comm = MPI_COMM_WORLD,
                                .what = "training"};
    char err[256] = "";
    if (lm_loop_run(st->trainer, &st->ds.src, &st->loop, &st->res, err, sizeof err) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "training: %s", err);
    if (st->res.out_of_time) {
        char line[256];
        snprintf(line, sizeof line, "training: steps %d-%d of %d not run: out of time (--timeout %.0f s)",
                 st->res.steps_done + 1, o->steps, o->steps, common->timeout_s);
        not_covered(st, ctx, line);
        st->checks.cut_short = true;
    }
    st->window = st->loop;
    st->window.steps = st->res.timed_steps < 20 ? (st->res.timed_steps > 0 ? st->res.timed_steps : 1) : 20;
    st->window.warmup = 0;
    st->window.quiet = true;
    st->window.what = "remeasurement";
    st->window.first_sequence = 1ull << 41;
}

static void opts_init(void *opts)
{
    lm_opts_init(opts);
}

static ga_backend backend_asked(const ga_run *run)
{
    return ((const lm_opts *)run->opts)->backend;
}

/* Collective: the sizes and the memory they need (usage errors), the data, the scaling phase and the trainer.
 * GA_GO_ON, or the exit code to end with. */
static int prepare(ga_run *run)
{
    lm_state *st = run->state;
    const ga_ctx *ctx = &run->ctx;
    st->o = *(const lm_opts *)run->opts;
    st->not_covered = json_array();
    run->backend = without_gpu_trainer(ctx, st, run->backend);
    int rc;
    if ((rc = check_sizes(ctx, st, run->backend, run->common.quick)) >= 0 ||
        (rc = check_host_memory(ctx, st, run->backend)) >= 0) {
        json_decref(st->not_covered);
        return rc;
    }
    ga_log("TRAIN", "lm_train: %d rank%s on %d node%s, %s backend, launched by %s", ctx->world_size,
           ga_plural(ctx->world_size), ctx->node_count, ga_plural(ctx->node_count),
           ga_backend_name(run->backend), ctx->launcher.detail);
    if ((rc = prepare_training(ctx, st, run->backend, run->mine)) >= 0) {
        json_decref(st->not_covered);
        return rc;
    }
    st->prepared = true;
    return GA_GO_ON;
}

/* Collective: the training, this rank's record of it and the remeasurement's plan. */
static ga_measured measure(ga_run *run)
{
    lm_state *st = run->state;
    train(&run->ctx, &run->common, st);
    ga_phase("checking the replicas");
    fill_record(st, run->mine);
    run->remeasure_passes = st->res.nonfinite_step >= 0 ? 0 : st->o.remeasure;
    return GA_MEASURED;
}

/* Rank 0: the checks into the report the engine opened with the records; the findings give the exit code. */
static int report(ga_run *run)
{
    analyse_into(&run->ctx, &run->common, run->state, run->all, run->report);
    return GA_GO_ON;
}

static void cleanup(ga_run *run)
{
    lm_state *st = run->state;
    if (!st->prepared)
        return;
    json_decref(st->not_covered);
    lm_loop_result_free(&st->res);
    st->trainer->destroy(st->trainer);
    lm_data_free(&st->ds);
}

/* -T/--wait-timeout: every wait from the first collective on; its default (120 s) is resolved with the
 * backend, so until then an unset -T leaves the agreements to --timeout */
static double wait_bound(const ga_run *run)
{
    double t = ((const lm_opts *)run->opts)->comm_timeout_s;
    return t > 0 ? t : 0;
}

static const ga_program_def lm_train_program = {
    .cli = &lm_command_line,
    .tag = "TRAIN",
    .opts_size = sizeof(lm_opts),
    .opts_init = opts_init,
    .record_size = sizeof(lm_record),
    .record_json = lm_record_json,
    .state_size = sizeof(lm_state),
    .wait_bound = wait_bound,
    .backend_asked = backend_asked,
    .prepare = prepare,
    .measure = measure,
    .suspects = straggler_suspects,
    .measure_again = measure_again,
    .report = report,
    .cleanup = cleanup,
};

int main(int argc, char **argv)
{
    return ga_program_run(argc, argv, &lm_train_program);
}
