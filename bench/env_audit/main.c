/* env_audit: the software stack, GPUs and topology of every rank, and their consistency across nodes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "env_analysis.h"
#include "env_json.h"
#include "env_opts.h"
#include "env_probe.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_log.h"
#include "ga_headline.h"
#include "ga_program.h"
#include "ga_report.h"

static const ga_program_spec spec = {
    .name = "env_audit",
    .summary = "Records the software stack, GPUs and topology of every rank and checks that nodes agree.",
    .epilog = "Example: mpirun -np 16 --map-by ppr:8:node env_audit --expect-gpus 8 --report-dir reports",
    .options = env_options,
    .on_option = env_opts_on_option,
    .default_timeout_s = 300,
};

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

/* Rank 0: audit, report, verdict. Returns the exit code. */
static int analyse_and_report(const ga_ctx *ctx, const ga_common_opts *common, const env_audit_opts *opts,
                              const env_record *all)
{
    int n = ctx->world_size;
    log_nodes(all, n);

    ga_program_report r;
    ga_program_report_open(&r, ctx, spec.name, "ENV", common, all, sizeof *all, env_record_json);
    json_t *report = r.json;
    ga_findings *findings = &r.findings;
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
    return ga_program_report_close(&r, -1);
}

int main(int argc, char **argv)
{
    ga_ctx ctx;
    ga_common_opts common;
    env_audit_opts opts = {0};
    ga_program_spec s = spec;
    s.n_options = env_n_options; /* the table's size is known where it is defined (env_opts.c) */
    int rc = ga_program_begin(&argc, &argv, &s, &ctx, &common, &opts);
    if (rc >= 0)
        return ga_program_end(&ctx, rc);

    ga_log("ENV", "env_audit: %d rank%s on %d node%s, launched by %s", ctx.world_size,
           ctx.world_size == 1 ? "" : "s", ctx.node_count, ctx.node_count == 1 ? "" : "s",
           ctx.launcher.detail);
    ga_phase("probing the environment");
    env_record *mine = malloc(sizeof *mine);
    if (!mine)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    env_probe(&ctx, mine);

    ga_phase("gathering %d records", ctx.world_size);
    env_record *all = NULL;
    ga_gather_records(&ctx, mine, sizeof *mine, (void **)&all);
    free(mine);

    int exit_code = GA_EXIT_PASS;
    if (ctx.world_rank == 0)
        exit_code = analyse_and_report(&ctx, &common, &opts, all);
    free(all);
    return ga_program_end(&ctx, exit_code);
}
