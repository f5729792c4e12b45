/* ddp_smoke: a real data-parallel training loop. Every rank trains the same MLP on its shard of each global
 * batch, gradients are averaged in buckets overlapping the backward pass, and at the end the loss must have
 * fallen and every replica must hold bit-identical parameters. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddp_analysis.h"
#include "ddp_data.h"
#include "ddp_json.h"
#include "ddp_opts.h"
#include "ddp_record.h"
#include "ddp_train.h"
#include "ddp_trainer.h"
#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_engine.h"
#include "ga_report.h"
#include "ga_transport_capture.h"
#include "ga_testhook.h"
#include "ga_text.h"
#include "ga_time.h"
#include "ga_train_budget.h"

/* What the phases share: the data, the model and its trainer, the run and what the report needs of it. */
typedef struct {
    ddp_dataset ds;
    ddp_layout layout;
    ddp_sampler sampler;
    ddp_trainer *trainer;
    ddp_loop_config loop, window; /* the run's steps; a straggler's remeasurement (quiet, fewer steps) */
    ddp_loop_result res;
    bool trained;
    ddp_run_info info;
    ddp_check_opts checks;
    json_t *transport; /* rank 0's for the report */
    int steps_asked;
    double budget_s; /* the training phase's share of the time; 0: no bound */
} ddp_state;

/* Loads or generates the data on every rank. Out of memory on any rank is exit 5 on all of them. A file rank
 * 0 cannot read is a usage error; one that only other ranks cannot read is an environment error (the data is
 * not visible on every node): those ranks end with exit 3, the others with 0, so that ga_program_end names
 * the failing ranks. *stop tells every rank alike whether to end. */
static int load_data(const ga_ctx *ctx, const ddp_opts *o, ddp_dataset *ds, bool *stop)
{
    char err[1400] = "";
    int rc = o->data_idx ? ddp_dataset_load_idx(ds, o->idx_dir, err, sizeof err)
                         : ddp_dataset_synthetic(ds, o->samples, o->input_dim, o->classes, (uint64_t)o->seed,
                                                 err, sizeof err);
    *stop = true;
    int oom = GA_AGREE_FAILURE(GA_EXIT_INTERNAL, rc == DDP_DATA_OUT_OF_MEMORY ? err : NULL);
    if (oom) {
        ddp_dataset_free(ds);
        return oom;
    }
    int failed = rc != 0, any = 0, rank0 = 0;
    ga_deadline_arm("agreeing on whether every rank has the data");
    GA_MPI_CHECK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (!any) {
        *stop = false;
        return GA_EXIT_PASS;
    }
    ddp_dataset_free(ds);
    rank0 = failed;
    ga_deadline_arm("asking whether rank 0 has the data");
    GA_MPI_CHECK(MPI_Bcast(&rank0, 1, MPI_INT, 0, MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (rank0) {
        ga_error_once(ddp_command_line.name, "%s", err);
        return GA_EXIT_USAGE;
    }
    if (!failed)
        return GA_EXIT_PASS;
    fprintf(stderr, "%s: %s rank %d: %s\n", ddp_command_line.name, ctx->host, ctx->world_rank, err);
    fflush(stderr);
    return GA_EXIT_ENV;
}

/* Ranks of a node share its cores: unless told otherwise, each rank's OpenBLAS gets its share. */
static int host_blas_threads(const ga_ctx *ctx)
{
    if (getenv("OPENBLAS_NUM_THREADS") || getenv("OMP_NUM_THREADS"))
        return openblas_get_num_threads();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int share = (int)(cores / (ctx->local_size > 0 ? ctx->local_size : 1));
    openblas_set_num_threads(share > 0 ? share : 1);
    return share > 0 ? share : 1;
}

static ddp_trainer *make_trainer(const ga_ctx *ctx, const ddp_trainer_config *cfg, ga_backend backend,
                                 ddp_record *mine)
{
#if GA_HAVE_CUDA
    if (backend == GA_BACKEND_GPU) {
        ga_gpu_info gpu;
        ga_gpu_select(ctx, &gpu);
        ga_record_header_init(ctx, &mine->hdr); /* again, now with the device */
        return ddp_gpu_trainer_create(cfg, MPI_COMM_WORLD);
    }
#else
    (void)backend;
    (void)mine;
#endif
    int threads = host_blas_threads(ctx);
    ga_log("DDP", "host path: fp64, OpenBLAS with %d thread%s per rank, MPI_Iallreduce per bucket", threads,
           threads == 1 ? "" : "s");
    return ddp_host_trainer_create(cfg, MPI_COMM_WORLD);
}

static void log_buckets(const ddp_trainer *t, const ddp_layout *m, int64_t cap)
{
    char line[1024] = "";
    size_t len = 0;
    for (int k = 0; k < t->plan.n && len < sizeof line - 64; k++)
        len += (size_t)snprintf(line + len, sizeof line - len, "%s[layers %d-%d: %.1f KiB]", k ? " " : "",
                                t->plan.b[k].first_layer, t->plan.b[k].last_layer,
                                (double)(t->plan.b[k].count * t->elem_size) / 1024.0);
    ga_log("DDP",
           "%zu parameters (%.2f MiB %s) in %d bucket%s (cap %lld bytes), reduced last layer first: %s",
           m->n_params, (double)(m->n_params * t->elem_size) / (1024.0 * 1024.0), t->dtype, t->plan.n,
           t->plan.n == 1 ? "" : "s", (long long)cap, line);
}

/* The rank's compute time per timed step: its CPU time on the host path, else the step less the wait. */
static double loop_compute_ms(const ddp_loop_result *res)
{
    if (res->compute_s >= 0)
        return 1e3 * res->compute_s / res->timed_steps;
    return 1e3 * (res->train_s - res->comm_wait_s) / res->timed_steps;
}

/* This rank's record from the loop's result and the final parameters. */
static void fill_record(ddp_trainer *t, const ddp_layout *m, const ddp_loop_result *res, int local_batch,
                        ddp_record *r)
{
    int done = res->steps_done, w = ddp_loss_window(done);
    r->local_batch = local_batch;
    r->steps_done = done;
    r->timed_steps = res->timed_steps;
    r->nonfinite_step = res->nonfinite_step;
    r->n_buckets = t->plan.n;
    r->n_params = (int64_t)m->n_params;
    r->loss_start = ddp_mean(res->loss_curve, 0, w < done ? w : done);
    r->loss_end = ddp_mean(res->loss_curve, done - w, w);
    r->accuracy_end = ddp_mean(res->accuracy_curve, done - w, w);
    r->train_s = res->train_s;
    if (res->timed_steps > 0 && res->train_s > 0) {
        r->step_time_ms = 1e3 * res->train_s / res->timed_steps;
        r->comm_wait_ms = 1e3 * res->comm_wait_s / res->timed_steps;
        r->comm_fraction = res->comm_wait_s / res->train_s;
        r->samples_per_s = (double)local_batch * res->timed_steps / res->train_s;
    }
    if (ga_test_names_rank("PERTURB_RANK", r->hdr.world_rank)) { /* test hook (ga_testhook.h) */
        ga_log_rank("DDP", "test only (" GA_TEST_PREFIX "PERTURB_RANK): moving one parameter by one ulp");
        t->perturb(t);
    }
    ddp_digest d;
    ddp_params_digest(t->params(t), m->n_params, t->elem_size, &d);
    r->param_hash = d.hash;
    r->param_sum = d.sum;
    r->params_finite = d.finite;
    if (r->timed_steps > 0)
        ddp_add_compute(r, loop_compute_ms(res));
}

/* The remeasurement of a straggler (ga_remeasure_loop): rank 0 finds one, every rank trains another window of
 * steps (collective: the gradients are averaged as before) and keeps its best compute time per step. */
static unsigned straggler_suspects(const void *all, int n, ga_run *run, char *why, size_t why_len)
{
    const ddp_state *st = run->state;
    return ddp_straggler_suspects(all, n, &st->checks, why, why_len) ? 1u : 0u;
}

static void measure_again(unsigned mask, void *mine, ga_run *run)
{
    (void)mask;
    ddp_state *st = run->state;
    ddp_loop_result res;
    st->window.phase_end = ga_train_phase_end(1.0);
    ddp_train_run(st->trainer, &st->sampler, &st->window, &res);
    if (res.timed_steps > 0)
        ddp_add_compute(mine, loop_compute_ms(&res));
    ddp_loop_result_free(&res);
}

/* Collective: the transport the gradients' allreduce used (ga_transport), for the report on rank 0. */
static json_t *record_transport(const ga_ctx *ctx, ga_backend backend)
{
    ga_transport_policy pol = {.nccl = backend == GA_BACKEND_GPU, .node_count = ctx->node_count};
    ga_findings none;
    ga_findings_init(&none);
    json_t *t = ga_transport_collect(ctx, &pol, &none);
    ga_findings_free(&none);
    return t;
}

/* Rank 0: the per-rank and job lines of the log. */
static void log_outcome(const ga_run *run, const ddp_record *all, const ddp_outcome *out)
{
    const ddp_run_info *info = &((const ddp_state *)run->state)->info;
    int n = run->ctx.world_size;
    for (int i = 0; i < n; i++)
        if (n <= 8 || run->common.verbose)
            ga_log("DDP",
                   "rank %d %s: %.0f samples/s, %.3f ms/step, %.3f ms/step waiting on gradients (%.1f%%), "
                   "params %016llx",
                   all[i].hdr.world_rank, all[i].hdr.host, all[i].samples_per_s, all[i].step_time_ms,
                   all[i].comm_wait_ms, 100.0 * all[i].comm_fraction, (unsigned long long)all[i].param_hash);
    ga_log("TRAIN", "loss %.5f -> %.5f (%.1f%% lower, need %.1f%%), training accuracy %.3f, %d steps",
           out->loss_start, out->loss_end, 100.0 * out->improvement, 100.0 * info->min_improvement,
           out->accuracy_end, out->steps);
    ga_log("DDP",
           "%d ranks x %d = %d samples/step: %.0f samples/s, %.3f ms/step, %.1f%% of the step waiting on "
           "gradient communication",
           n, info->local_batch, info->global_batch, out->samples_per_s, out->step_time_ms,
           100.0 * out->comm_fraction);
    ga_log("DDP", "replicas: %s", out->replicas_identical ? "all identical" : "DIFFER (see the findings)");
}

/* Rank 0: what the run's time cut, for the report's "not_covered" and the log. */
static json_t *not_covered_json(const ddp_state *st)
{
    json_t *nc = json_array();
    if (!st->res.out_of_time)
        return nc;
    char line[320];
    snprintf(line, sizeof line,
             "ddp_smoke: training steps %d-%d of %d not run: out of time (its share of --timeout: %.1f s; "
             "throughput measured over the %d steps taken)",
             st->res.steps_done + 1, st->steps_asked, st->steps_asked, st->budget_s, st->res.steps_done);
    ga_log("TRAIN", "not covered: %s", line);
    json_array_append_new(nc, ga_json_text(line));
    return nc;
}

/* Rank 0: checks, report, verdict. */
static int analyse_and_report(ga_run *run)
{
    ddp_state *st = run->state;
    const ddp_run_info *info = &st->info;
    const ddp_loop_result *res = &st->res;
    const ddp_record *all = run->all;
    int n = run->ctx.world_size;
    json_t *report = run->report->json;
    ddp_outcome out;
    ddp_analyse(all, n, &st->checks, &run->report->findings, &out);
    log_outcome(run, all, &out);

    json_object_set_new(report, "summary", ddp_summary_json(info, &out, res->loss_curve, res->steps_done));
    json_object_set_new(report, "conditions", ddp_conditions_json(info, out.steps));
    json_object_set_new(report, "not_covered", not_covered_json(st));
    ddp_add_headlines(report, &out, res->loss_curve, res->steps_done);
    ga_report_add_metric(report, "samples_per_s", out.samples_per_s, "samples/s", true, GA_WHERE_CLUSTER);
    ga_report_add_metric(report, "loss_improvement", out.improvement, "fraction", true, GA_WHERE_CLUSTER);
    ga_report_add_metric(report, "comm_fraction", out.comm_fraction, "fraction", false, GA_WHERE_CLUSTER);
    ga_report_add_metric(report, "step_time_ms", out.step_time_ms, "ms", false, GA_WHERE_CLUSTER);
    for (int i = 0; i < n; i++)
        ga_report_add_metric(report, "samples_per_s_rank", all[i].samples_per_s, "samples/s", true,
                             ga_record_where(&all[i].hdr));
    /* recorded, not judged: allreduce_bw checks it */
    json_object_set_new(report, "transport", st->transport);
    st->transport = NULL;
    ddp_outcome_free(&out);
    return GA_GO_ON;
}

/* What the report says the run was: the trainer, the data, the model and the thresholds. */
static ddp_run_info run_info_of(const ga_ctx *ctx, const ddp_opts *o, const ddp_trainer *trainer,
                                const ddp_dataset *ds, const ddp_layout *layout, int64_t global_batch)
{
    ddp_run_info info = {.backend = trainer->backend,
                         .dtype = trainer->dtype,
                         .data = ds->source,
                         .ranks = ctx->world_size,
                         .local_batch = o->batch,
                         .global_batch = global_batch,
                         .hidden_layers = o->hidden_layers,
                         .hidden = o->hidden,
                         .input_dim = ds->dim,
                         .classes = ds->classes,
                         .n_params = layout->n_params,
                         .bucket_cap_bytes = (size_t)o->bucket_bytes,
                         .elem_size = trainer->elem_size,
                         .plan = &trainer->plan,
                         .lr = o->lr,
                         .momentum = o->momentum,
                         .min_improvement = o->min_improvement,
                         .straggler_ratio = isnan(o->straggler_pct) ? 1.5
                                            : o->straggler_pct > 0  ? 1 + o->straggler_pct / 100
                                                                    : 0,
                         .seed = (uint64_t)o->seed};
    return info;
}

/* A straggler suspected is timed again over a window of the run's steps (none after a run that diverged). */
static void plan_remeasure(ga_run *run, const ddp_opts *o)
{
    ddp_state *st = run->state;
    const ddp_loop_result *res = &st->res;
    st->window = st->loop;
    st->window.steps = res->timed_steps < 100 ? (res->timed_steps > 0 ? res->timed_steps : 1) : 100;
    st->window.warmup = 0;
    st->window.quiet = true;
    st->checks = (ddp_check_opts){.min_improvement = st->info.min_improvement,
                                  .global_batch = st->info.global_batch,
                                  .straggler_ratio = st->info.straggler_ratio,
                                  .cut_short = res->out_of_time};
    run->remeasure_passes = res->nonfinite_step >= 0 ? 0 : o->remeasure;
}

/* The data, the steps they make and the model's layout. Returns -1, or the exit code to end with (the data
 * could not be had, or a usage error); on -1 the caller frees ds. */
static int prepare_data(const ga_ctx *ctx, ddp_opts *o, ddp_dataset *ds, ddp_layout *layout)
{
    ga_phase("loading the data");
    bool stop;
    int rc = load_data(ctx, o, ds, &stop);
    if (stop)
        return rc;
    char err[256];
    bool bad = ddp_opts_resolve_steps(o, ds->n, ctx->world_size, err, sizeof err) != 0;
    if (!bad)
        ga_log("TRAIN", "data %s; %d steps of %d x %d samples (%.2f epochs)", ds->source, o->steps,
               ctx->world_size, o->batch, (double)o->steps * ctx->world_size * o->batch / (double)ds->n);
    bad = bad ||
          ddp_layout_init(layout, ds->dim, o->hidden, o->hidden_layers, ds->classes, err, sizeof err) != 0;
    if (bad) {
        ga_error_once(ddp_command_line.name, "%s", err);
        ddp_dataset_free(ds);
        return GA_EXIT_USAGE;
    }
    return -1;
}

static int validate(ga_run *run)
{
    ddp_opts *opts = run->opts;
    if (opts->steps != DDP_UNSET && opts->epochs != DDP_UNSET) {
        ga_error_once(ddp_command_line.name, "give --steps or --epochs, not both (see --help)");
        return GA_EXIT_USAGE;
    }
    ddp_opts_defaults(opts, run->common.quick);
    ga_phase("choosing the backend");
    return GA_GO_ON;
}

static ga_backend backend_asked(const ga_run *run)
{
    return ((const ddp_opts *)run->opts)->backend;
}

/* Collective: the data, the model and its trainer. Returns GA_GO_ON, or the exit code when the data could
 * not be had or a usage error. */
static int prepare(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    ddp_opts *opts = run->opts;
    ddp_state *st = run->state;
    ga_log("TRAIN", "ddp_smoke: %d rank%s on %d node%s, %s backend, launched by %s", ctx->world_size,
           ga_plural(ctx->world_size), ctx->node_count, ga_plural(ctx->node_count),
           ga_backend_name(run->backend), ctx->launcher.detail);
    int rc = prepare_data(ctx, opts, &st->ds, &st->layout);
    if (rc >= 0)
        return rc;
    if (ddp_sampler_init(&st->sampler, &st->ds, (uint64_t)opts->seed) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ga_phase("building the model");
    ddp_trainer_config cfg = {.layout = &st->layout,
                              .bucket_cap_bytes = (size_t)opts->bucket_bytes,
                              .local_batch = opts->batch,
                              .global_batch = (int64_t)ctx->world_size * opts->batch,
                              .sgd = {opts->lr, opts->momentum},
                              .seed = (uint64_t)opts->seed,
                              .comm_timeout_s = opts->comm_timeout_s,
                              /* the test hook (docs/testing.md); the GPU path does not read it */
                              .slow_factor = ga_test_slow_factor(ctx->world_rank),
                              .delay_s = ga_test_delay_s(ctx->world_rank)};
    st->trainer = make_trainer(ctx, &cfg, run->backend, run->mine);
    log_buckets(st->trainer, &st->layout, opts->bucket_bytes);
    return GA_GO_ON;
}

/* Collective: the training run, this rank's record of it and the transport its gradients took. */
static ga_measured measure(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    const ddp_opts *opts = run->opts;
    ddp_state *st = run->state;
    st->loop = (ddp_loop_config){.steps = opts->steps,
                                 .rank = ctx->world_rank,
                                 .ranks = ctx->world_size,
                                 .local_batch = opts->batch,
                                 .dataset_size = st->ds.n,
                                 .warmup = opts->steps / 10 < 5 ? opts->steps / 10 : 5,
                                 .comm = MPI_COMM_WORLD};
    /* the remeasurement windows, when a straggler calls for them, run in what training leaves */
    double t0 = ga_now();
    st->loop.phase_end = ga_train_phase_end(opts->remeasure > 0 ? 0.8 : 1.0);
    st->steps_asked = opts->steps;
    st->budget_s = st->loop.phase_end > 0 ? st->loop.phase_end - t0 : 0;
    if (st->budget_s > 0)
        ga_log("TRAIN", "training: %d steps at most in %.1f s (its share of --timeout)", opts->steps,
               st->budget_s);
    ddp_train_run(st->trainer, &st->sampler, &st->loop, &st->res);
    st->trained = true;
    ga_phase("checking the replicas");
    fill_record(st->trainer, &st->layout, &st->res, opts->batch, run->mine);
    st->info =
        run_info_of(ctx, opts, st->trainer, &st->ds, &st->layout, (int64_t)ctx->world_size * opts->batch);
    st->transport = record_transport(ctx, run->backend);
    plan_remeasure(run, opts);
    return GA_MEASURED;
}

static void cleanup(ga_run *run)
{
    ddp_state *st = run->state;
    json_decref(st->transport);
    if (st->trained)
        ddp_loop_result_free(&st->res);
    st->trainer->destroy(st->trainer);
    ddp_sampler_free(&st->sampler);
    ddp_dataset_free(&st->ds);
}

static void opts_init(void *opts)
{
    ddp_opts_init(opts);
}

/* -T/--wait-timeout (validate resolved its default): every wait from the first collective on */
static double wait_bound(const ga_run *run)
{
    return ((const ddp_opts *)run->opts)->comm_timeout_s;
}

static const ga_program_def ddp_smoke_program = {
    .cli = &ddp_command_line,
    .tag = "DDP",
    .opts_size = sizeof(ddp_opts),
    .opts_init = opts_init,
    .record_size = sizeof(ddp_record),
    .record_json = ddp_record_json,
    .state_size = sizeof(ddp_state),
    .validate = validate,
    .wait_bound = wait_bound,
    .backend_asked = backend_asked,
    .prepare = prepare,
    .measure = measure,
    .suspects = straggler_suspects,
    .measure_again = measure_again,
    .report = analyse_and_report,
    .cleanup = cleanup,
};

int main(int argc, char **argv)
{
    return ga_program_run(argc, argv, &ddp_smoke_program);
}
