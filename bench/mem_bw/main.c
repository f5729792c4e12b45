/* mem_bw: memory bandwidth of every GPU (device copy, a read-write kernel) and of its host link (pinned H2D
 * and D2H on the GPU's NUMA node), or of every rank's NUMA node on the host path (STREAM triad), against the
 * median of the same model and the datasheet peak. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_parse.h"
#include "ga_program.h"
#include "ga_remeasure.h"
#include "ga_report.h"
#include "ga_testhook.h"
#include "mb_analysis.h"
#include "mb_json.h"
#include "mb_backend.h"
#include "mb_opts.h"
#include "ga_devflag.h"
#include "ga_host.h"
#include "ga_devreport.h"

static const ga_program_spec spec = {
    .name = "mem_bw",
    .summary =
        "Device memory and host-link bandwidth of every GPU (or each rank's NUMA node on the host path) "
        "against its model's median and datasheet peak.",
    .epilog = "Examples:\n"
              "  mpirun -np 16 --map-by ppr:8:node mem_bw --min-efficiency 70\n"
              "  mpirun -np 2 mem_bw --backend host\n"
              "Peaks: docs/gpu-peaks.md. Report: docs/mem_bw.md.",
    .options = mb_options,
    .n_options = 0, /* set in main, with the aliases: the tables' sizes are known in mb_opts.c */
    .on_option = mb_opts_on_option,
    .default_timeout_s = 900,
};

static void log_devices(const mb_record *all, int n)
{
    int *idx = calloc((size_t)n, sizeof *idx);
    if (!idx)
        return;
    ga_dev_record_order(all, n, sizeof *all, idx);
    for (int k = 0; k < n; k++) {
        const mb_record *r = &all[idx[k]];
        char line[512] = "";
        size_t len = 0;
        for (int t = 0; t < MB_TEST_COUNT && len < sizeof line; t++) {
            const mb_result *x = &r->t[t];
            double pk = mb_peak(r, t);
            if (x->state == MB_FAILED)
                len += (size_t)snprintf(line + len, sizeof line - len, " %s FAILED", mb_test_name(t));
            else if (x->state == MB_MEASURED && pk > 0)
                len += (size_t)snprintf(line + len, sizeof line - len, " %s %.1f (%.0f%%)", mb_test_name(t),
                                        x->GBps, 100.0 * x->GBps / pk);
            else if (x->state == MB_MEASURED)
                len += (size_t)snprintf(line + len, sizeof line - len, " %s %.1f", mb_test_name(t), x->GBps);
        }
        if (r->hdr.device_index >= 0)
            ga_log("COMPUTE", "node %d %s rank %d GPU %d %s (NUMA %d%s): GB/s%s", r->hdr.node_index,
                   r->hdr.host, r->hdr.world_rank, r->hdr.device_index, r->model, r->numa_node,
                   r->numa_bound ? "" : ", unbound", line);
        else
            ga_log("COMPUTE", "node %d %s rank %d NUMA %d (%d threads%s): GB/s%s", r->hdr.node_index,
                   r->hdr.host, r->hdr.world_rank, r->numa_node, r->threads, r->numa_bound ? "" : ", unbound",
                   line);
    }
    free(idx);
}

/* The remeasurement of suspect tests (ga_remeasure_loop): rank 0 finds them, every rank measures them again.
 */
typedef struct {
    const mb_opts *o;
    bool gpu;
    MPI_Comm node_comm;
    int local_size;
} remeasure_ctx;

static unsigned suspect_tests(const void *all, int n, void *user, char *why, size_t why_len)
{
    const remeasure_ctx *c = user;
    mb_policy p = {c->o->tolerance, c->o->min_efficiency, c->o->min_host_efficiency, c->o->relative_warn};
    return mb_suspect_tests(all, n, &p, why, why_len);
}

static void measure_again(unsigned mask, void *mine, void *user)
{
    const remeasure_ctx *c = user;
    mb_record *r = mine;
    mb_opts again = *c->o;
    again.tests = mask;
    char err[256] = "";
    int rc = 0;
    /* every rank of a node enters the GPU path, even one that could not measure: it passes the node
     * barriers of the host-link tests, which the others wait at */
    GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* all start together, as the first time */
#if GA_HAVE_CUDA
    if (c->gpu)
        rc = mb_gpu_measure(&again, c->node_comm, r, err, sizeof err);
#endif
    if (!c->gpu && r->hdr.status == 0)
        rc = mb_host_measure(&again, c->local_size, r, err, sizeof err);
    if (rc != 0) /* the earlier measurements stand */
        ga_log_rank("COMPUTE", "measuring again: %s; the earlier measurements stand", err);
}

/* This rank's measurement: its GPU's memory and host link, or its NUMA node (STREAM triad, with the test
 * hook). Returns 0, MB_OUT_OF_MEMORY or another failure with err. */
static int measure(const ga_ctx *ctx, bool gpu, bool quick, mb_opts *o, mb_record *mine, char *err,
                   size_t errlen)
{
    int mrc = 0;
    if (gpu) {
#if GA_HAVE_CUDA
        ga_gpu_info info;
        ga_gpu_select(ctx, &info);
        ga_record_header_init(ctx, &mine->hdr); /* again, now with the device */
        snprintf(mine->model, sizeof mine->model, "%s", info.name);
        if (quick && !o->size)
            o->size = (uint64_t)256 << 20;
        if (quick && !o->pinned_size)
            o->pinned_size = (uint64_t)64 << 20;
        mrc = mb_gpu_measure(o, ctx->node_comm, mine, err, errlen);
#else
        (void)quick;
#endif
    } else {
        ga_host_cpu_model(mine->model, sizeof mine->model);
        o->slow_factor = ga_test_slow_factor(ctx->world_rank); /* docs/testing.md, "Test hooks" */
        mrc = mb_host_measure(o, ctx->local_size, mine, err, errlen);
    }
    return mrc;
}

int main(int argc, char **argv)
{
    ga_ctx ctx;
    ga_common_opts common;
    mb_opts o = {
        .tolerance = 0.10, .device = GA_BACKEND_AUTO, .remeasure = GA_REMEASURE_DEFAULT, .slow_factor = 1};
    ga_program_spec s = spec;
    s.n_options = mb_n_options;
    s.aliases = mb_aliases;
    s.n_aliases = mb_n_aliases;
    int rc = ga_program_begin(&argc, &argv, &s, &ctx, &common, &o);
    if (rc >= 0)
        return ga_program_end(&ctx, rc);
    if (!o.reps)
        o.reps = common.quick ? 5 : 20;

    /* --min-efficiency is a percentage of a GPU's datasheet peak: the host path has none (issue 25) */
    char gpu_only[64] = "";
    if (o.min_efficiency > 0)
        snprintf(gpu_only, sizeof gpu_only, "--min-efficiency %g", 100 * o.min_efficiency);
    if ((ga_backend)o.device == GA_BACKEND_HOST && gpu_only[0]) {
        ga_error_once(spec.name, "%s: the host path (--backend host) has no datasheet peak", gpu_only);
        return ga_program_end(&ctx, GA_EXIT_USAGE);
    }
    bool gpu = ga_backend_resolve(&ctx, (ga_backend)o.device) == GA_BACKEND_GPU;
    rc = ga_backend_gpu_only(&ctx, (ga_backend)o.device, gpu ? GA_BACKEND_GPU : GA_BACKEND_HOST, spec.name,
                             gpu_only[0] ? gpu_only : NULL);
    if (rc >= 0)
        return ga_program_end(&ctx, rc);
    mb_record *mine = calloc(1, sizeof *mine);
    if (!mine)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ga_record_header_init(&ctx, &mine->hdr);
    mine->numa_node = -1;
    ga_log("COMPUTE", "mem_bw: %d rank%s on %d node%s, %s", ctx.world_size, ctx.world_size == 1 ? "" : "s",
           ctx.node_count, ctx.node_count == 1 ? "" : "s",
           gpu ? "each rank's GPU memory and host link" : "each rank's NUMA node (STREAM triad)");
    char err[256] = "";
    int mrc = 0;
    /* Every rank starts together: the figures are what each GPU (or NUMA node) gives with its neighbours
     * busy, as in training. */
    GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    mrc = measure(&ctx, gpu, common.quick, &o, mine, err, sizeof err);
    /* Out of memory on any rank ends the job with exit 5 on all of them, decided together before the gather.
     */
    int oom = GA_AGREE_FAILURE(GA_EXIT_INTERNAL, mrc == MB_OUT_OF_MEMORY ? err : NULL);
    if (oom) {
        free(mine);
        return ga_program_end(&ctx, oom);
    }
    if (mrc != 0)
        ga_record_header_fail(&mine->hdr, GA_EXIT_ENV, "COMPUTE", err);

    mb_record *all = NULL;
    remeasure_ctx rc_ctx = {&o, gpu, ctx.node_comm, ctx.local_size};
    ga_remeasure_spec rs = {sizeof *mine, suspect_tests, measure_again, "COMPUTE", spec.name};
    ga_remeasure_loop(&ctx, &rs, o.remeasure, mine, (void **)&all, &rc_ctx);
    free(mine);
    int exit_code = GA_EXIT_PASS;
    if (ctx.world_rank == 0) {
        log_devices(all, ctx.world_size);
        ga_program_report r;
        ga_program_report_open(&r, &ctx, spec.name, "COMPUTE", &common, all, sizeof *all, mb_record_json);
        mb_policy p = {o.tolerance, o.min_efficiency, o.min_host_efficiency, o.relative_warn};
        mb_outcome out;
        mb_analyse(all, ctx.world_size, &p, gpu ? "cuda" : "host", r.json, &r.findings, &out);
        for (int t = 0; t < out.n_tests; t++) {
            ga_dev_figure_log(&out.tests[t], "COMPUTE");
            ga_dev_figure_headline(r.json, &out.tests[t], true);
        }
        ga_findings_log(&r.findings, "COMPUTE");
        exit_code = ga_program_report_close(&r, -1);
    }
    free(all);
    return ga_program_end(&ctx, exit_code);
}
