/* Estimates of each step's wall time (estimate.h): the figures the models take as given, the launch, each
 * program's model called through the registry's table for the fault-free case and the slow node's, and the
 * dry run's lines. The models are the programs' own (bench/<p>/, ga_estimate.h). */
#include "estimate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimate_model.h"
#include "suite_util.h"

/* Per GPU, one NDR InfiniBand NIC (400 Gb/s) of an HGX H100 node: "for NDR @ 400Gbps you should see 46-48GB/s
 * per NIC" (an NCCL maintainer, NVIDIA/nccl-tests issue 290); 4 such nodes reach 366 GB/s (issue 309). */
#define EST_NIC_GBPS 46.0

void est_figures_for(const suite_est_cluster *c, est_figures *f)
{
    memset(f, 0, sizeof *f);
    f->gpu = c->gpu;
    f->launch_s = 1.0, f->launch_per_node_s = 0.02; /* mpirun's daemons over ssh, a tree: an assumption */
    f->split_s = 1e-3, f->split_per_rank = 1e-6;
    f->check_per_byte = 4e-9; /* fill 2.1-2.5 ns/B + compare 1.4-1.7 ns/B, one EPYC core (CPU time) */
    f->mpi_alpha = 20e-6, f->mpi_GBps = 2.0;
    f->report_s = 0.5;
    f->slow_factor = 1;
    f->host_GFLOPs[0] = 40, f->host_GFLOPs[1] = 20; /* docs/gemm_flops.md: 34-47 fp32, 16-24 fp64 per core */
    f->host_mem_GBps = 20, f->host_llc_bytes = 32.0 * (1 << 20);
    if (c->gpu) {
        f->busbw_intra = c->node_busbw_GBps > 0 ? c->node_busbw_GBps : 200;
        double nics = EST_NIC_GBPS * c->ranks_per_node;
        f->busbw_inter = nics < f->busbw_intra ? nics : f->busbw_intra;
        f->alpha_intra = 10e-6, f->alpha_inter = 20e-6, f->alpha_per_doubling = 5e-6;
        f->comm_init_s = 0.5, f->comm_init_per_rank = 2e-3; /* NCCL init: 16 ranks 0.53 s, 4096 8.7 s */
        f->copy_GBps = 25;
        f->nh_s = 2.0, f->ea_s = 1.0;
        f->gemm_setup_s = 0.5, f->gemm_TFLOPs = c->gemm_bf16_TFLOPs;
        f->mem_setup_s = 1.0, f->hbm_GBps = c->mem_copy_GBps > 0 ? c->mem_copy_GBps : 1500, f->pcie_GBps = 25;
        /* allreduce_bw's device check (ar_check.cu) at 0.3 of the SKU's device copy rate, and 50 us per check
         * for two launches, a memset, the counter's copy and the wait. Measured on an H200: 2.72 ms per
         * checked 1 GiB allreduce, the operation included, that is about 1,300 GB/s over the 3 GiB poisoned,
         * filled and read (docs/measured-on-gpu.md, third run). */
        f->dev_check_GBps = 0.3 * f->hbm_GBps, f->dev_check_s = 50e-6;
        f->ddp_GFLOPs = 20000, f->ddp_step_floor_s = 1e-3;
    } else {
        f->busbw_intra = 4.0, f->busbw_inter = 1.25; /* shared memory; 10 Gb/s Ethernet */
        f->alpha_intra = 5e-6, f->alpha_inter = 50e-6, f->alpha_per_doubling = 10e-6;
        f->copy_GBps = 10;
        f->nh_s = 0.5, f->ea_s = 1.0;
        f->gemm_setup_s = 0.2;
        f->mem_setup_s = 0.2;
        f->ddp_GFLOPs = 20;
    }
}

/* The program's model through the registry's table, NULL when it registers none. */
static ga_estimate_fn *program_estimate(const char *program)
{
    for (size_t i = 0; i < suite_n_program_estimates; i++)
        if (strcmp(suite_program_estimates[i].program, program) == 0)
            return suite_program_estimates[i].estimate;
    return NULL;
}

int suite_estimate_step(const char *program, const json_t *args, const suite_est_cluster *c,
                        suite_est_step *out)
{
    memset(out, 0, sizeof *out);
    out->limit_s = c->step_limit_s;
    ga_estimate_fn *estimate = program_estimate(program);
    if (!estimate) {
        snprintf(out->model, sizeof out->model, "no model of %s", program);
        return -1;
    }
    est_figures f;
    est_figures_for(c, &f);
    double launch = ga_est_launch_s(&f, c->nodes);
    for (int k = 0; k < SUITE_EST_CASES; k++) {
        bool slow = k == SUITE_EST_SLOW_NODE;
        f.slow_factor = slow ? EST_SLOW_FACTOR : 1;
        ga_estimate_in in = {&f, c, args, slow};
        ga_estimate_out one;
        memset(&one, 0, sizeof one);
        if (estimate(&in, &one) != 0) {
            snprintf(out->model, sizeof out->model, "%s", one.model);
            return -1;
        }
        out->s[k] = launch + one.run_s;
        out->whole_s[k] = launch + (one.whole_s > 0 ? one.whole_s : one.run_s);
        snprintf(out->cut[k], sizeof out->cut[k], "%s", one.cut);
        if (!slow) { /* the lines say the fault-free case's model */
            snprintf(out->model, sizeof out->model, "%s", one.model);
            snprintf(out->note, sizeof out->note, "%s", one.note);
        }
    }
    return 0;
}

/* ---- the cluster and the lines ---- */

/* The baseline's value of PROGRAM/NAME, 0 when it has none. */
static double baseline_value(const json_t *baseline, const char *program, const char *name)
{
    size_t i;
    json_t *m;
    json_array_foreach(sj_arr(baseline, "metrics"), i, m)
        if (strcmp(sj_str(m, "program", ""), program) == 0 && strcmp(sj_str(m, "name", ""), name) == 0)
            return sj_num(m, "value", 0);
    return 0;
}

int suite_estimate_cluster(const suite_profile_env *env, const json_t *baseline, int nodes_hint,
                           double step_limit_s, double program_timeout_s, suite_est_cluster *out)
{
    memset(out, 0, sizeof *out);
    out->step_limit_s = step_limit_s;
    out->program_timeout_s = program_timeout_s;
    int nodes = env->node_count > 0 ? env->node_count : nodes_hint, world = env->world_size;
    if (nodes <= 0)
        return -1;
    int rpn = env->expect_gpus > 0 ? env->expect_gpus : world > 0 ? (world + nodes - 1) / nodes : 1;
    if (world > 0 && world < nodes * rpn) /* -np below the slots: mpirun fills the first nodes' slots */
        nodes = (world + rpn - 1) / rpn, rpn = world < rpn ? world : rpn;
    out->nodes = nodes;
    out->ranks_per_node = rpn;
    out->gpu = baseline != NULL;
    if (baseline) {
        snprintf(out->sku, sizeof out->sku, "%s", sj_str(baseline, "model", "?"));
        out->node_busbw_GBps = baseline_value(baseline, "allreduce_bw", "busbw_at_max");
        out->gemm_bf16_TFLOPs = baseline_value(baseline, "gemm_flops", "tflops_bf16");
        out->mem_copy_GBps = baseline_value(baseline, "mem_bw", "GBps_device_copy");
    }
    return 0;
}

void suite_estimate_cluster_label(const suite_est_cluster *c, char *buf, size_t len)
{
    snprintf(buf, len, "%d node%s x %d rank%s, %s%s%s", c->nodes, c->nodes == 1 ? "" : "s", c->ranks_per_node,
             c->ranks_per_node == 1 ? "" : "s", c->gpu ? "GPU paths (" : "host paths (no SKU baseline)",
             c->gpu ? c->sku : "", c->gpu ? ")" : "");
}

void suite_estimate_print(FILE *f, const char *prefix, const suite_est_step *e)
{
    static const char *const cases[SUITE_EST_CASES] = {"fault-free", "with one slow node"};
    fprintf(f, "%sestimate: %.0f s fault-free, %.0f s with one slow node (model: %s)\n", prefix,
            e->s[SUITE_EST_FAULT_FREE], e->s[SUITE_EST_SLOW_NODE], e->model);
    for (int k = 0; k < SUITE_EST_CASES; k++)
        if (e->cut[k][0])
            fprintf(f, "%sestimate %s: cut: %s (the whole plan needs %.0f s, the step's limit is %.0f s)\n",
                    prefix, cases[k], e->cut[k], e->whole_s[k], e->limit_s);
    for (int k = 0; k < SUITE_EST_CASES; k++)
        if (e->limit_s > 0 && e->s[k] > e->limit_s)
            fprintf(f, "%sestimate %s: over the step limit of %.0f s: the suite would kill the step\n",
                    prefix, cases[k], e->limit_s);
    if (e->note[0])
        fprintf(f, "%sestimate: %s\n", prefix, e->note);
}
