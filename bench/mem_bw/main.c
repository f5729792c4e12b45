/* mem_bw: memory bandwidth of every GPU (device copy, a read-write kernel) and of its host link (pinned H2D
 * and D2H on the GPU's NUMA node), or of every rank's NUMA node on the host path (STREAM triad), against the
 * median of the same model and the datasheet peak. */
#include <stdio.h>
#include <stdlib.h>

#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_engine.h"
#include "ga_gather.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_testhook.h"
#include "mb_analysis.h"
#include "mb_triad.h" /* MB_TRIAD_FLAT */
#include "mb_json.h"
#include "mb_backend.h"
#include "mb_opts.h"
#include "ga_devflag.h"
#include "ga_host.h"
#include "ga_devreport.h"
#include "mb_p2p.h"
#include "mb_p2p_gpu.h"
#include "mb_p2p_host.h"

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

static mb_policy policy_of(const mb_opts *o)
{
    return (mb_policy){o->tolerance, o->min_efficiency, o->min_host_efficiency, o->relative_warn};
}

/* The remeasurement of suspect tests (ga_remeasure_loop): rank 0 finds them, every rank measures them again.
 */
static unsigned suspect_tests(const void *all, int n, ga_run *run, char *why, size_t why_len)
{
    mb_policy p = policy_of(run->opts);
    return mb_suspect_tests(all, n, &p, why, why_len);
}

static void measure_again(unsigned mask, void *mine, ga_run *run)
{
    mb_record *r = mine;
    mb_opts again = *(const mb_opts *)run->opts;
    again.tests = mask;
    char err[256] = "";
    int rc = 0;
    bool gpu = run->backend == GA_BACKEND_GPU;
    /* every rank of a node enters the GPU path, even one that could not measure: it passes the node
     * barriers of the host-link tests, which the others wait at */
    GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* all start together, as the first time */
#if GA_HAVE_CUDA
    if (gpu)
        rc = mb_gpu_measure(&again, run->ctx.node_comm, r, err, sizeof err);
#endif
    if (!gpu && r->hdr.status == 0)
        rc = mb_host_measure(&again, run->ctx.local_size, r, err, sizeof err);
    if (rc != 0) /* the earlier measurements stand */
        ga_log_rank("COMPUTE", "measuring again: %s; the earlier measurements stand", err);
}

/* --min-efficiency is a percentage of a GPU's datasheet peak: the host path has none (issue 25);
 * --triad-kernel picks a GPU kernel: the host path runs none, and ignoring it would report a host figure as
 * the kernel's. */
static void gpu_only_request(const ga_run *run, char *out, size_t len)
{
    const mb_opts *o = run->opts;
    if (o->min_efficiency > 0)
        snprintf(out, len, "--min-efficiency %g", 100 * o->min_efficiency);
    else if (o->triad_kernel_set)
        snprintf(out, len, "--triad-kernel %s", mb_triad_kernel_name(o->triad_kernel));
}

static int validate(ga_run *run)
{
    mb_opts *o = run->opts;
    if (!o->reps)
        o->reps = run->common.quick ? 5 : 20;
    char gpu_only[64] = "";
    gpu_only_request(run, gpu_only, sizeof gpu_only);
    if ((ga_backend)o->device == GA_BACKEND_HOST && gpu_only[0]) {
        ga_error_once(mb_command_line.name, "%s: the host path (--backend host) %s", gpu_only,
                      o->min_efficiency > 0 ? "has no datasheet peak" : "runs no GPU kernel");
        return GA_EXIT_USAGE;
    }
    return GA_GO_ON;
}

static ga_backend backend_asked(const ga_run *run)
{
    return (ga_backend)((const mb_opts *)run->opts)->device;
}

static int prepare(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    mb_record *mine = run->mine;
    mine->numa_node = -1;
    run->remeasure_passes = ((const mb_opts *)run->opts)->remeasure;
    ga_log("COMPUTE", "mem_bw: %d rank%s on %d node%s, %s", ctx->world_size, ga_plural(ctx->world_size),
           ctx->node_count, ga_plural(ctx->node_count),
           run->backend == GA_BACKEND_GPU ? "each rank's GPU memory and host link"
                                          : "each rank's NUMA node (STREAM triad)");
    return GA_GO_ON;
}

/* --p2p: this rank's row of its node's copy matrix (mb_p2p.h). Every rank of the node takes part. */
static void measure_p2p(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    int world_of_local[MB_P2P_MAX];
    char err[256] = "";
#if GA_HAVE_CUDA
    if (run->backend == GA_BACKEND_GPU) { /* device to peer device through IPC handles, timed by events */
        if (mb_p2p_gpu_measure(run->opts, ctx->node_comm, run->mine, err, sizeof err) != 0)
            ga_log_rank("COMPUTE", "%s", err);
        return;
    }
#endif
    if (ctx->local_size <= MB_P2P_MAX)
        GA_MPI_CHECK(MPI_Allgather(&ctx->world_rank, 1, MPI_INT, world_of_local, 1, MPI_INT, ctx->node_comm));
    if (mb_p2p_host_measure(run->opts, ctx->node_comm, world_of_local, run->mine, err, sizeof err) != 0)
        ga_log_rank("COMPUTE", "%s", err);
}

/* Rank 0: the copy matrices judged, their findings and the report's "p2p". */
static void report_p2p(ga_run *run)
{
    const mb_opts *o = run->opts;
    mb_p2p_pair *pairs = NULL;
    int n = mb_p2p_pairs(run->all, run->ctx.world_size, &pairs);
    json_t *part = NULL;
    int named = n < 0 ? -1 : mb_p2p_judge(pairs, n, o->tolerance, o->min_p2p, &run->report->findings, &part);
    if (named < 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    json_object_set_new(run->report->json, "p2p", part);
    int copied = 0;
    for (int i = 0; i < n; i++)
        copied += pairs[i].state == MB_P2P_COPIED;
    ga_log("COMPUTE", "p2p: %d GPU pair%s copied, %d not (no peer access or a failed copy); %d named", copied,
           ga_plural(copied), n - copied, named);
    free(pairs);
}

/* This rank's measurement: its GPU's memory and host link, or its NUMA node (STREAM triad, with the test
 * hook). Every rank starts together (barrier_before_measure): the figures are what each GPU (or NUMA node)
 * gives with its neighbours busy, as in training. */
static ga_measured measure(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    mb_opts *o = run->opts;
    mb_record *mine = run->mine;
    int mrc = 0;
    if (run->backend == GA_BACKEND_GPU) {
#if GA_HAVE_CUDA
        ga_gpu_info info;
        ga_gpu_select(ctx, &info);
        ga_record_header_init(ctx, &mine->hdr); /* again, now with the device */
        snprintf(mine->model, sizeof mine->model, "%s", info.name);
        if (run->common.quick && !o->size)
            o->size = (uint64_t)256 << 20;
        if (run->common.quick && !o->pinned_size)
            o->pinned_size = (uint64_t)64 << 20;
        mrc = mb_gpu_measure(o, ctx->node_comm, mine, run->err, sizeof run->err);
#endif
    } else {
        ga_host_cpu_model(mine->model, sizeof mine->model);
        o->slow_factor = ga_test_slow_factor(ctx->world_rank); /* docs/testing.md, "Test hooks" */
        mrc = mb_host_measure(o, ctx->local_size, mine, run->err, sizeof run->err);
    }
    if (o->p2p)
        measure_p2p(run);
    return mrc == 0 ? GA_MEASURED : mrc == MB_OUT_OF_MEMORY ? GA_MEASURE_OUT_OF_MEMORY : GA_MEASURE_FAILED;
}

static int analyse_and_report(ga_run *run)
{
    const mb_record *all = run->all;
    log_devices(all, run->ctx.world_size);
    mb_policy p = policy_of(run->opts);
    mb_outcome out;
    ga_program_report *r = run->report;
    mb_analyse(all, run->ctx.world_size, &p, run->backend == GA_BACKEND_GPU ? "cuda" : "host", r->json,
               &r->findings, &out);
    for (int t = 0; t < out.n_tests; t++) {
        ga_dev_figure_log(&out.tests[t], "COMPUTE");
        ga_dev_figure_headline(r->json, &out.tests[t], true);
    }
    if (((const mb_opts *)run->opts)->p2p)
        report_p2p(run);
    ga_findings_log(&r->findings, "COMPUTE");
    return GA_GO_ON;
}

static void opts_init(void *opts)
{
    /* flat: 1.008 of torch's triad on an H200, grid 0.963 (docs/measured-on-gpu.md, third run) */
    *(mb_opts *)opts = (mb_opts){.tolerance = 0.10,
                                 .device = GA_BACKEND_AUTO,
                                 .remeasure = GA_REMEASURE_DEFAULT,
                                 .slow_factor = 1,
                                 .triad_kernel = MB_TRIAD_FLAT};
}

/* -T/--wait-timeout: every wait from the first collective on (0: --timeout alone) */
static double wait_bound(const ga_run *run)
{
    return ((const mb_opts *)run->opts)->wait_timeout_s;
}

static const ga_program_def mem_bw_program = {
    .cli = &mb_command_line,
    .tag = "COMPUTE",
    .opts_size = sizeof(mb_opts),
    .opts_init = opts_init,
    .record_size = sizeof(mb_record),
    .record_json = mb_record_json,
    .wait_bound = wait_bound,
    .validate = validate,
    .backend_asked = backend_asked,
    .gpu_only = gpu_only_request,
    .prepare = prepare,
    .barrier_before_measure = true,
    .measure = measure,
    .agree_out_of_memory = true,
    .suspects = suspect_tests,
    .measure_again = measure_again,
    .report = analyse_and_report,
};

int main(int argc, char **argv)
{
    return ga_program_run(argc, argv, &mem_bw_program);
}
