/* env_audit: the software stack, GPUs and topology of every rank, and their consistency across nodes. */
#include <math.h>

#include "env_analysis.h"
#include "env_json.h"
#include "env_opts.h"
#include "env_probe.h"
#include "ga_log.h"
#include "ga_headline.h"
#include "ga_engine.h"
#include "ga_report.h"

static void log_nodes(const env_record *all, int n)
{
    for (int i = 0; i < n; i++) {
        const env_record *r = &all[i];
        if (r->hdr.local_rank != 0)
            continue;
        const env_version *v = r->versions;
        ga_log("ENV", "node %d %s: %d ranks, %d GPUs%s%s, %s, kernel %s", r->hdr.node_index, r->hdr.host,
               r->hdr.local_size, env_node_gpu_count(all, n, r->hdr.node_index), r->gpu_count ? "" : " - ",
               r->gpu_count ? "" : r->gpu_why, r->os, r->kernel);
        ga_log("ENV", "  driver %s, CUDA driver %s, runtime %s, cuBLAS %s, NCCL %s, %s",
               v[ENV_V_NVIDIA_DRIVER].value[0] ? v[ENV_V_NVIDIA_DRIVER].value : "-",
               v[ENV_V_CUDA_DRIVER].value[0] ? v[ENV_V_CUDA_DRIVER].value : "-",
               v[ENV_V_CUDA_RUNTIME].value[0] ? v[ENV_V_CUDA_RUNTIME].value : "-",
               v[ENV_V_CUBLAS].value[0] ? v[ENV_V_CUBLAS].value : "-",
               v[ENV_V_NCCL_LIBRARY].value[0] ? v[ENV_V_NCCL_LIBRARY].value : "-",
               v[ENV_V_MPI_LIBRARY].value);
        for (int g = 0; g < r->gpu_count && g < ENV_MAX_GPUS; g++)
            ga_debug("ENV", "  GPU %d: %s %s %s NUMA %d", g, r->gpus[g].name, r->gpus[g].uuid,
                     r->gpus[g].pci_bus_id, r->gpus[g].numa_node);
    }
}

static void start_line(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    ga_log("ENV", "env_audit: %d rank%s on %d node%s, launched by %s", ctx->world_size,
           ga_plural(ctx->world_size), ctx->node_count, ga_plural(ctx->node_count), ctx->launcher.detail);
}

static ga_measured measure(ga_run *run)
{
    start_line(run);
    ga_phase("probing the environment");
    env_probe(&run->ctx, run->mine);
    return GA_MEASURED;
}

/* Rank 0: audit, report, verdict. */
static int analyse_and_report(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    const env_audit_opts *opts = run->opts;
    const env_record *all = run->all;
    int n = ctx->world_size;
    log_nodes(all, n);

    json_t *report = run->report->json;
    ga_findings *findings = &run->report->findings;
    json_t *consistency = env_audit_consistency(all, n, opts, findings);
    size_t fields = json_array_size(consistency), agreeing = 0;
    for (size_t i = 0; i < fields; i++)
        agreeing += json_array_size(json_object_get(json_array_get(consistency, i), "deviating")) == 0;
    ga_log("ENV", "consistency: %zu of %zu fields agree on all %d nodes", agreeing, fields, ctx->node_count);
    ga_findings_log(findings, "ENV");

    json_object_set_new(
        report, "summary",
        json_pack("{s:i, s:o}", "expect_gpus", opts->expect_gpus, "consistency", consistency));
    ga_report_add_headline(report, &(ga_headline){.name = "nodes_audited",
                                                  .label = "nodes audited",
                                                  .value = ctx->node_count,
                                                  .unit = "nodes",
                                                  .higher_is_better = true,
                                                  .reference = NAN});
    ga_report_add_headline(report, &(ga_headline){.name = "fields_deviating",
                                                  .label = "audited fields on which some node deviates",
                                                  .value = (double)(fields - agreeing),
                                                  .unit = "fields",
                                                  .reference = NAN});
    return GA_GO_ON;
}

/* -T/--wait-timeout: every wait from the first collective on (0: --timeout alone) */
static double wait_bound(const ga_run *run)
{
    return ((const env_audit_opts *)run->opts)->wait_timeout_s;
}

static const ga_program_def env_audit_program = {
    .cli = &env_command_line,
    .tag = "ENV",
    .opts_size = sizeof(env_audit_opts),
    .record_size = sizeof(env_record),
    .record_json = env_record_json,
    .wait_bound = wait_bound,
    .measure = measure,
    .report = analyse_and_report,
};

int main(int argc, char **argv)
{
    return ga_program_run(argc, argv, &env_audit_program);
}
