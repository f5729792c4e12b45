/* gemm_flops: GEMM TFLOP/s per dtype on every GPU (cuBLASLt) or every rank's cores (OpenBLAS), against the
 * median of the GPUs of the same model and the model's datasheet peak; burn mode for throttling and silent
 * data corruption. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_headline.h"
#include "ga_engine.h"
#include "ga_gather.h"
#include "ga_report.h"
#include "ga_testhook.h"
#include "gf_analysis.h"
#include "gf_json.h"
#include "gf_backend.h"
#include "gf_opts.h"
#include "ga_devflag.h"
#include "ga_host.h"
#include "ga_devreport.h"

/* One [COMPUTE] line per GPU (or rank), in device order. */
static void log_devices(const gf_record *all, int n, unsigned dtypes)
{
    int *idx = calloc((size_t)n, sizeof *idx);
    if (!idx)
        return;
    ga_dev_record_order(all, n, sizeof *all, idx);
    for (int k = 0; k < n; k++) {
        const gf_record *r = &all[idx[k]];
        char line[768] = "";
        size_t len = 0;
        for (int d = 0; d < GA_DTYPE_COUNT && len < sizeof line; d++) {
            if (!(dtypes & (1u << d)) || r->dt[d].state == GF_NOT_RUN)
                continue;
            const gf_result *x = &r->dt[d];
            const ga_gpu_peaks *pk = r->hdr.device_index >= 0 ? ga_peaks_lookup(r->model) : NULL;
            if (x->state != GF_MEASURED)
                len += (size_t)snprintf(line + len, sizeof line - len, " %s %s", ga_dtype_name(d),
                                        x->state == GF_SKIPPED ? "n/a" : "FAILED");
            else if (pk && pk->tflops[d] > 0)
                len += (size_t)snprintf(line + len, sizeof line - len, " %s %.4g (%.0f%%)", ga_dtype_name(d),
                                        x->tflops, 100.0 * x->tflops / pk->tflops[d]);
            else
                len +=
                    (size_t)snprintf(line + len, sizeof line - len, " %s %.4g", ga_dtype_name(d), x->tflops);
        }
        if (r->hdr.device_index >= 0)
            ga_log("COMPUTE", "node %d %s rank %d GPU %d %s: TFLOP/s%s", r->hdr.node_index, r->hdr.host,
                   r->hdr.world_rank, r->hdr.device_index, r->model, line);
        else
            ga_log("COMPUTE", "node %d %s rank %d cpu (%d threads): TFLOP/s%s", r->hdr.node_index,
                   r->hdr.host, r->hdr.world_rank, r->threads, line);
    }
    free(idx);
}

static gf_policy policy_of(const gf_opts *o)
{
    return (gf_policy){o->tolerance, o->min_efficiency,  o->max_drop_pct,
                       o->dtypes,    o->dtypes_explicit, o->relative_warn};
}

/* Every rank the burn called throttling, with all its intervals: the live lines are rank 0's alone. */
static void log_throttled(const gf_record *all, int n, const ga_findings *f, double max_drop_pct)
{
    for (size_t k = 0; k < f->count; k++) {
        if (strcmp(f->items[k].code, "GEMM_THROTTLING") != 0)
            continue;
        for (int i = 0; i < n; i++)
            if (all[i].hdr.world_rank == f->items[k].world_rank) {
                char line[2048];
                gf_burn_intervals_line(&all[i], max_drop_pct, line, sizeof line);
                ga_log("COMPUTE", "burn: throttling: %s", line);
            }
    }
}

/* The remeasurement of suspect dtypes (ga_remeasure_loop): rank 0 finds them, every rank measures them again.
 */
static unsigned suspect_dtypes(const void *all, int n, ga_run *run, char *why, size_t why_len)
{
    gf_policy p = policy_of(&((const gf_cli *)run->opts)->o);
    return gf_suspect_dtypes(all, n, &p, why, why_len);
}

static void measure_again(unsigned mask, void *mine, ga_run *run)
{
    gf_record *r = mine;
    if (r->hdr.status != 0)
        return; /* it could not measure at all: nothing to measure again */
    gf_opts again = ((const gf_cli *)run->opts)->o;
    again.dtypes = mask;
    again.warmup = again.warmup > 0 ? 1 : 0; /* the GEMMs are warm already */
    char err[256] = "";
    int rc = 0;
    bool gpu = run->backend == GA_BACKEND_GPU;
#if GA_HAVE_CUDA
    if (gpu)
        rc = gf_gpu_measure(&again, r, err, sizeof err);
#endif
    if (!gpu)
        rc = gf_host_measure(&again, r, err, sizeof err);
    if (rc != 0) /* the earlier measurements stand */
        ga_log_rank("COMPUTE", "measuring again: %s; the earlier measurements stand", err);
}

static int analyse_and_report(ga_run *run)
{
    const gf_opts *o = &((const gf_cli *)run->opts)->o;
    const gf_record *all = run->all;
    bool gpu = run->backend == GA_BACKEND_GPU;
    int n = run->ctx.world_size;
    log_devices(all, n, o->dtypes);
    json_t *report = run->report->json;
    ga_findings *f = &run->report->findings;
    gf_policy p = policy_of(o);
    gf_outcome out;
    gf_analyse(all, n, &p, gpu ? "cublas" : "openblas", report, f, &out);
    log_throttled(all, n, f, o->max_drop_pct);
    for (int d = 0; d < out.n_dtypes; d++) {
        ga_dev_figure_log(&out.dtypes[d], "COMPUTE");
        ga_dev_figure_headline(report, &out.dtypes[d], true);
    }
    if (out.burned) {
        ga_log("COMPUTE", "burn: %d intervals of %.1f s, %d SDC mismatches", out.burn_intervals,
               out.burn_interval_s, out.sdc_mismatches);
        ga_report_add_headline(report, &(ga_headline){.name = "sdc_mismatches",
                                                      .label = "burn: intervals with silent data corruption",
                                                      .value = out.sdc_mismatches,
                                                      .unit = "intervals",
                                                      .reference = NAN});
        ga_report_add_headline(report, &(ga_headline){.name = "throttling_gpus",
                                                      .label = "burn: GPUs throttling",
                                                      .value = out.throttling_gpus,
                                                      .unit = gpu ? "GPUs" : "ranks",
                                                      .reference = NAN});
    }
    ga_findings_log(f, "COMPUTE");
    return GA_GO_ON;
}

/* What the command line asks that only a GPU does: a dtype OpenBLAS has not (an explicit --dtype all
 * included), a threshold against a GPU's datasheet peak. "" when nothing. */
static void gpu_only_request(const ga_run *run, char *out, size_t len)
{
    const gf_cli *c = run->opts;
    const unsigned host = (1u << GA_FP32) | (1u << GA_FP64);
    out[0] = '\0';
    if (c->dtype_arg[0] && (c->o.dtypes & ~host))
        snprintf(out, len, "--datatype %s", c->dtype_arg);
    if (c->o.min_efficiency > 0)
        snprintf(out + strlen(out), len - strlen(out), "%s--min-efficiency %g", out[0] ? " and " : "",
                 100 * c->o.min_efficiency);
}

/* The device's defaults and this rank's record for it: its GPU (cuBLASLt) or its cores (OpenBLAS, with the
 * test hooks). Returns -1, or a usage error's exit code. */
static int prepare_device(const ga_ctx *ctx, bool gpu, bool quick, gf_opts *o, gf_record *mine)
{
    if (gpu) {
#if GA_HAVE_CUDA
        ga_gpu_info info;
        ga_gpu_select(ctx, &info);
        ga_record_header_init(ctx, &mine->hdr); /* again, now with the device */
        snprintf(mine->model, sizeof mine->model, "%s", info.name);
        gf_gpu_defaults(o, quick);
#endif
        return -1;
    }
    ga_host_cpu_model(mine->model, sizeof mine->model);
    gf_host_defaults(o, quick);
    if (!o->threads)
        o->threads = ga_host_threads(ctx->local_size);
    /* Test hook (ga_testhook.h, docs/gemm_flops.md): proves that a wrong GEMM cannot pass. */
    o->corrupt = ga_test_names_rank("CORRUPT_RANK", ctx->world_rank);
    o->slow_factor = ga_test_slow_factor(ctx->world_rank); /* docs/testing.md, "Test hooks" */
    if (!o->dtypes_explicit)
        o->dtypes &= (1u << GA_FP32) | (1u << GA_FP64); /* "all" on the host: what OpenBLAS has */
    if (o->duration_s > 0 && o->burn_dtype != GA_FP32 && o->burn_dtype != GA_FP64) {
        ga_error_once(gf_command_line.name, "--burn-dtype %s: the host path burns fp32 or fp64 only",
                      ga_dtype_name(o->burn_dtype));
        return GA_EXIT_USAGE;
    }
    return -1;
}

/* Collective, with --duration: the burn after the measurement and its remeasurement, then every rank's record
 * gathered again. Returns GA_GO_ON, or the exit code of an out-of-memory agreed by all ranks. */
static int run_burn(ga_run *run)
{
    gf_opts *o = &((gf_cli *)run->opts)->o;
    if (!(o->duration_s > 0))
        return GA_GO_ON;
    bool gpu = run->backend == GA_BACKEND_GPU;
    int mrc = run->measured != GA_MEASURED;
    gf_record *mine = run->mine;
    char err[256] = "";
    /* Every rank takes part, whatever its measurement gave: a rank that failed and skipped this would leave
     * the others waiting. The count of failed ranks, agreed here, is the start line of the burn, so the
     * intervals of all GPUs cover the same stretch of time; the failed ranks do not burn. */
    int failed = mrc != 0, n_failed = 0;
    ga_phase("agreeing on the start of the burn");
    GA_MPI_CHECK(MPI_Allreduce(&failed, &n_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    ga_log("COMPUTE", "burn: %s GEMMs for %.0f s%s", ga_dtype_name(o->burn_dtype), o->duration_s,
           n_failed ? " (without the ranks whose measurement failed)" : "");
    int brc = 0;
#if GA_HAVE_CUDA
    if (gpu && mrc == 0)
        brc = gf_gpu_burn(o, mine, err, sizeof err);
#endif
    if (!gpu && mrc == 0)
        brc = gf_host_burn(o, mine, err, sizeof err);
    int oom = GA_AGREE_FAILURE(GA_EXIT_INTERNAL, brc == GF_OUT_OF_MEMORY ? err : NULL);
    if (oom)
        return oom;
    if (brc != 0)
        ga_record_header_fail(&mine->hdr, GA_EXIT_ENV, "COMPUTE", err);
    ga_engine_gather(run);
    return GA_GO_ON;
}

/* The options checked against each other before the backend is chosen. Returns GA_GO_ON, or a usage error's
 * exit code. */
static int validate(ga_run *run)
{
    gf_cli *cli = run->opts;
    const ga_common_opts *common = &run->common;
    gf_opts *o = &cli->o;
    if (cli->burn_only && !(o->duration_s > 0)) {
        ga_error_once(gf_command_line.name, "%s belongs to burn mode: give --duration SEC too (see --help)",
                      cli->burn_only);
        return GA_EXIT_USAGE;
    }
    /* The default whole-run bound is for the measurement alone: a burn of --duration comes on top. */
    if (!common->timeout_given && o->duration_s > 0)
        ga_deadline_start_run(gf_command_line.default_timeout_s + o->duration_s);
    if (o->device == GA_BACKEND_HOST && o->min_efficiency > 0) {
        /* asked for, the host path runs (its "all" is fp32 and fp64; a GPU dtype is reported unavailable),
         * but a percentage of a datasheet peak it does not have would be dropped without a word */
        ga_error_once(gf_command_line.name,
                      "--min-efficiency: the host path (--backend host) has no datasheet peak");
        return GA_EXIT_USAGE;
    }
    return GA_GO_ON;
}

static ga_backend backend_asked(const ga_run *run)
{
    return ((const gf_cli *)run->opts)->o.device;
}

/* This rank's device and the defaults that depend on it; the start line. Returns GA_GO_ON or a usage error.
 */
static int prepare(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    gf_opts *o = &((gf_cli *)run->opts)->o;
    gf_record *mine = run->mine;
    bool gpu = run->backend == GA_BACKEND_GPU;
    mine->burn_dtype = -1;
    o->target_s = run->common.quick ? 0.25 : 1.0;
    int rc = prepare_device(ctx, gpu, run->common.quick, o, mine);
    if (rc >= 0)
        return rc;
    /* Suspects are measured again on every rank before the burn heats the GPUs: the figures stay comparable.
     */
    run->remeasure_passes = o->remeasure;
    ga_log("COMPUTE", "gemm_flops: %d rank%s on %d node%s, %s, m=%lld n=%lld k=%lld%s", ctx->world_size,
           ga_plural(ctx->world_size), ctx->node_count, ga_plural(ctx->node_count),
           gpu ? "cuBLASLt on each rank's GPU" : "OpenBLAS on each rank's cores", (long long)o->m,
           (long long)o->n, (long long)o->k, o->duration_s > 0 ? ", then burn" : "");
    return GA_GO_ON;
}

static ga_measured measure(ga_run *run)
{
    gf_opts *o = &((gf_cli *)run->opts)->o;
    int mrc = 0;
#if GA_HAVE_CUDA
    if (run->backend == GA_BACKEND_GPU)
        mrc = gf_gpu_measure(o, run->mine, run->err, sizeof run->err);
#endif
    if (run->backend != GA_BACKEND_GPU)
        mrc = gf_host_measure(o, run->mine, run->err, sizeof run->err);
    return mrc == 0 ? GA_MEASURED : mrc == GF_OUT_OF_MEMORY ? GA_MEASURE_OUT_OF_MEMORY : GA_MEASURE_FAILED;
}

static void opts_init(void *opts)
{
    *(gf_cli *)opts = (gf_cli){.o = {.warmup = 3,
                                     .tolerance = 0.10,
                                     .max_drop_pct = 10,
                                     .remeasure = GA_REMEASURE_DEFAULT,
                                     .slow_factor = 1,
                                     .burn_dtype = -1,
                                     .algos = GF_DEFAULT_ALGOS,
                                     .layout_nn = true,
                                     .seed = 42,
                                     .device = GA_BACKEND_AUTO,
                                     .dtypes = (1u << GA_DTYPE_COUNT) - 1}};
}

/* -T/--wait-timeout: every wait from the first collective on (0: --timeout alone) */
static double wait_bound(const ga_run *run)
{
    return ((const gf_cli *)run->opts)->wait_timeout_s;
}

static const ga_program_def gemm_flops_program = {
    .cli = &gf_command_line,
    .tag = "COMPUTE",
    .opts_size = sizeof(gf_cli),
    .opts_init = opts_init,
    .record_size = sizeof(gf_record),
    .record_json = gf_record_json,
    .wait_bound = wait_bound,
    .validate = validate,
    .backend_asked = backend_asked,
    .gpu_only = gpu_only_request,
    .prepare = prepare,
    .measure = measure,
    .agree_out_of_memory = true,
    .suspects = suspect_dtypes,
    .measure_again = measure_again,
    .after_gather = run_burn,
    .report = analyse_and_report,
};

int main(int argc, char **argv)
{
    return ga_program_run(argc, argv, &gemm_flops_program);
}
