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
#include "ga_gather.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_parse.h"
#include "ga_headline.h"
#include "ga_program.h"
#include "ga_remeasure.h"
#include "ga_report.h"
#include "ga_testhook.h"
#include "gf_analysis.h"
#include "gf_json.h"
#include "gf_backend.h"
#include "gf_opts.h"
#include "ga_devflag.h"
#include "ga_host.h"
#include "ga_devreport.h"

static const ga_program_spec spec = {
    .name = "gemm_flops",
    .summary = "GEMM TFLOP/s per dtype on every GPU against its model's median and datasheet peak; burn mode "
               "for throttling and silent data corruption.",
    .epilog = "Examples:\n"
              "  mpirun -np 16 --map-by ppr:8:node gemm_flops --dtype all --min-efficiency 60\n"
              "  mpirun -np 16 --map-by ppr:8:node gemm_flops --dtype bf16 --duration 600\n"
              "  mpirun -np 2 gemm_flops --backend host -m 2048 -n 2048 -k 2048\n"
              "Peaks: docs/gpu-peaks.md. Report: docs/gemm_flops.md.",
    .options = gf_options,
    .n_options = 0, /* set in main, with the aliases: the tables' sizes are known in gf_opts.c */
    .on_option = gf_opts_on_option,
    .default_timeout_s = 1800,
};

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
typedef struct {
    const gf_opts *o;
    bool gpu;
} remeasure_ctx;

static unsigned suspect_dtypes(const void *all, int n, void *user, char *why, size_t why_len)
{
    const remeasure_ctx *c = user;
    gf_policy p = policy_of(c->o);
    return gf_suspect_dtypes(all, n, &p, why, why_len);
}

static void measure_again(unsigned mask, void *mine, void *user)
{
    const remeasure_ctx *c = user;
    gf_record *r = mine;
    if (r->hdr.status != 0)
        return; /* it could not measure at all: nothing to measure again */
    gf_opts again = *c->o;
    again.dtypes = mask;
    again.warmup = again.warmup > 0 ? 1 : 0; /* the GEMMs are warm already */
    char err[256] = "";
    int rc = 0;
#if GA_HAVE_CUDA
    if (c->gpu)
        rc = gf_gpu_measure(&again, r, err, sizeof err);
#endif
    if (!c->gpu)
        rc = gf_host_measure(&again, r, err, sizeof err);
    if (rc != 0) /* the earlier measurements stand */
        ga_log_rank("COMPUTE", "measuring again: %s; the earlier measurements stand", err);
}

static int analyse_and_report(const ga_ctx *ctx, const ga_common_opts *common, const gf_opts *o,
                              const gf_record *all, bool gpu)
{
    int n = ctx->world_size;
    log_devices(all, n, o->dtypes);
    ga_program_report r;
    ga_program_report_open(&r, ctx, spec.name, "COMPUTE", common, all, sizeof *all, gf_record_json);
    json_t *report = r.json;
    ga_findings *f = &r.findings;
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
    return ga_program_report_close(&r, -1);
}

/* What the command line asks that only a GPU does: a dtype OpenBLAS has not (an explicit --dtype all
 * included), a threshold against a GPU's datasheet peak. "" when nothing. */
static void gpu_only_request(const gf_cli *c, char *out, size_t len)
{
    const unsigned host = (1u << GA_FP32) | (1u << GA_FP64);
    out[0] = '\0';
    if (c->dtype_arg[0] && (c->o.dtypes & ~host))
        snprintf(out, len, "--dtype %s", c->dtype_arg);
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
        ga_error_once(spec.name, "--burn-dtype %s: the host path burns fp32 or fp64 only",
                      ga_dtype_name(o->burn_dtype));
        return GA_EXIT_USAGE;
    }
    return -1;
}

/* Collective: the burn after the measurement (mrc: this rank's), then every rank's record gathered into *all
 * at rank 0. Returns 0, or the exit code of an out-of-memory agreed by all ranks. */
static int run_burn(const ga_ctx *ctx, gf_opts *o, bool gpu, int mrc, gf_record *mine, gf_record **all)
{
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
    ga_phase("gathering %d records", ctx->world_size);
    ga_gather_records(ctx, mine, sizeof *mine, (void **)all);
    return 0;
}

/* The options checked against each other and the backend chosen (*gpu). Returns -1, or the exit code to end
 * with: a usage error, or a GPU-only request on a host without one (no silent host fallback, issue 25). */
static int choose_backend(const ga_ctx *ctx, const ga_common_opts *common, gf_cli *cli, bool *gpu)
{
    gf_opts *o = &cli->o;
    if (cli->burn_only && !(o->duration_s > 0)) {
        ga_error_once(spec.name, "%s belongs to burn mode: give --duration SEC too (see --help)",
                      cli->burn_only);
        return GA_EXIT_USAGE;
    }
    /* The default whole-run bound is for the measurement alone: a burn of --duration comes on top. */
    if (!common->timeout_given && o->duration_s > 0)
        ga_deadline_start_run(spec.default_timeout_s + o->duration_s);
    char gpu_only[192];
    gpu_only_request(cli, gpu_only, sizeof gpu_only);
    if (o->device == GA_BACKEND_HOST && o->min_efficiency > 0) {
        /* asked for, the host path runs (its "all" is fp32 and fp64; a GPU dtype is reported unavailable),
         * but a percentage of a datasheet peak it does not have would be dropped without a word */
        ga_error_once(spec.name, "--min-efficiency: the host path (--backend host) has no datasheet peak");
        return GA_EXIT_USAGE;
    }
    *gpu = ga_backend_resolve(ctx, o->device) == GA_BACKEND_GPU;
    return ga_backend_gpu_only(ctx, o->device, *gpu ? GA_BACKEND_GPU : GA_BACKEND_HOST, spec.name,
                               gpu_only[0] ? gpu_only : NULL);
}

int main(int argc, char **argv)
{
    ga_ctx ctx;
    ga_common_opts common;
    gf_cli cli = {.o = {.warmup = 3,
                        .tolerance = 0.10,
                        .max_drop_pct = 10,
                        .remeasure = GA_REMEASURE_DEFAULT,
                        .slow_factor = 1,
                        .burn_dtype = -1,
                        .seed = 42,
                        .device = GA_BACKEND_AUTO,
                        .dtypes = (1u << GA_DTYPE_COUNT) - 1}};
    ga_program_spec s = spec;
    s.n_options = gf_n_options;
    s.aliases = gf_aliases;
    s.n_aliases = gf_n_aliases;
    int rc = ga_program_begin(&argc, &argv, &s, &ctx, &common, &cli);
    if (rc >= 0)
        return ga_program_end(&ctx, rc);
    gf_opts *o = &cli.o;
    bool gpu = false;
    rc = choose_backend(&ctx, &common, &cli, &gpu);
    if (rc >= 0)
        return ga_program_end(&ctx, rc);
    gf_record *mine = calloc(1, sizeof *mine);
    if (!mine)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ga_record_header_init(&ctx, &mine->hdr);
    mine->burn_dtype = -1;
    o->target_s = common.quick ? 0.25 : 1.0;
    rc = prepare_device(&ctx, gpu, common.quick, o, mine);
    if (rc >= 0) {
        free(mine);
        return ga_program_end(&ctx, rc);
    }
    ga_log("COMPUTE", "gemm_flops: %d rank%s on %d node%s, %s, m=%lld n=%lld k=%lld%s", ctx.world_size,
           ctx.world_size == 1 ? "" : "s", ctx.node_count, ctx.node_count == 1 ? "" : "s",
           gpu ? "cuBLASLt on each rank's GPU" : "OpenBLAS on each rank's cores", (long long)o->m,
           (long long)o->n, (long long)o->k, o->duration_s > 0 ? ", then burn" : "");

    char err[256] = "";
    int mrc = 0;
#if GA_HAVE_CUDA
    if (gpu)
        mrc = gf_gpu_measure(o, mine, err, sizeof err);
#endif
    if (!gpu)
        mrc = gf_host_measure(o, mine, err, sizeof err);
    /* Out of memory on any rank ends the job with exit 5 on all of them, before the burn's collective. */
    int oom = GA_AGREE_FAILURE(GA_EXIT_INTERNAL, mrc == GF_OUT_OF_MEMORY ? err : NULL);
    if (oom) {
        free(mine);
        return ga_program_end(&ctx, oom);
    }
    if (mrc != 0)
        ga_record_header_fail(&mine->hdr, GA_EXIT_ENV, "COMPUTE", err);
    /* Suspects are measured again on every rank before the burn heats the GPUs: the figures stay comparable.
     */
    gf_record *all = NULL;
    remeasure_ctx rc_ctx = {o, gpu};
    ga_remeasure_spec rs = {sizeof *mine, suspect_dtypes, measure_again, "COMPUTE", spec.name};
    ga_remeasure_loop(&ctx, &rs, o->remeasure, mine, (void **)&all, &rc_ctx);
    if (o->duration_s > 0) {
        free(all);
        all = NULL;
        oom = run_burn(&ctx, o, gpu, mrc, mine, &all);
        if (oom) {
            free(mine);
            return ga_program_end(&ctx, oom);
        }
    }
    free(mine);
    int exit_code = GA_EXIT_PASS;
    if (ctx.world_rank == 0)
        exit_code = analyse_and_report(&ctx, &common, o, all, gpu);
    free(all);
    return ga_program_end(&ctx, exit_code);
}
