/* What a step of `gpuaccept run` should take, before it runs: a model of each program's plan from the
 * arguments the profile gives it, the cluster's size and the SKU's expected figures, fault-free and with one
 * slow node (its links 60 times slower). allreduce_bw is modelled phase by phase as its plan runs (its own
 * option parser and budget rules, bench/allreduce_bw/ar_budget.h, on a virtual clock); the other programs by
 * a fixed or simple model each. Every figure the models assume is stated in the line they print. Pure: no
 * MPI, no clock, no file. */
#ifndef ESTIMATE_H
#define ESTIMATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "profile.h"

/* The cluster an estimate is for. */
typedef struct {
    int nodes, ranks_per_node; /* >= 1 each */
    bool gpu;                  /* the GPU paths (the SKU is known), else the host paths */
    char sku[128];             /* the baseline's model ("" on the host paths) */
    double step_limit_s;       /* the suite's kill of a step */
    double program_timeout_s;  /* each program's --timeout (cmd_run: a little below the limit) */
    /* the SKU's figures from its baseline, 0 when it gives none (the model's own then) */
    double node_busbw_GBps;  /* allreduce_bw busbw_at_max: one node's GPUs over NVLink */
    double gemm_bf16_TFLOPs; /* gemm_flops tflops_bf16 */
    double mem_copy_GBps;    /* mem_bw GBps_device_copy */
} suite_est_cluster;

enum { SUITE_EST_FAULT_FREE, SUITE_EST_SLOW_NODE, SUITE_EST_CASES };

/* One step's estimate. */
typedef struct {
    double s[SUITE_EST_CASES];       /* wall time of the step as its plan runs, launch included */
    double whole_s[SUITE_EST_CASES]; /* the same with no time limit: what the whole plan needs */
    char cut[SUITE_EST_CASES][512];  /* what the plan cuts to fit its --timeout ("" nothing) */
    char model[640];                 /* the model, one line */
    char note[512];                  /* a further line ("" none): allreduce_bw's pairs coverage */
    double limit_s;                  /* the step's limit (the cluster's) */
} suite_est_step;

/* The cluster from the run's facts (profile.h): nodes and ranks from the hostfile or the launcher (nodes: the
 * hostfile's, else nodes_hint, e.g. Slurm's node count; 0 unknown), the figures from the baseline (NULL: the
 * host paths). Returns 0, or -1 when the cluster's size is unknown (no estimate can be made). */
int suite_estimate_cluster(const suite_profile_env *env, const json_t *baseline, int nodes_hint,
                           double step_limit_s, double program_timeout_s, suite_est_cluster *out);

/* The estimate of program run with args (the profile's words and --args', as the step gets them after
 * --timeout). 0, or -1 with why in out->model (arguments the program would refuse, an unknown program). */
int suite_estimate_step(const char *program, const json_t *args, const suite_est_cluster *c,
                        suite_est_step *out);

/* The dry run's lines of one step: "estimate: N s fault-free, M s with one slow node (model: ...)", the cut
 * when the plan makes one, the note. prefix starts every line. */
void suite_estimate_print(FILE *f, const char *prefix, const suite_est_step *e);

/* "512 nodes x 8 ranks, GPU paths (NVIDIA H100 SXM5 80GB)" */
void suite_estimate_cluster_label(const suite_est_cluster *c, char *buf, size_t len);

#endif
