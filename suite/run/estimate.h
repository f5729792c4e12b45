/* What a step of `gpuaccept run` should take, before it runs: each program's model of its own run (in its
 * folder, bench/<p>/, named by the registry and called through the table generated from it: ga_estimate.h),
 * from the arguments the profile gives it, the cluster's size and the SKU's expected figures, fault-free and
 * with one slow node (its links 60 times slower); here the figures they take as given, the launch, the two
 * cases and the dry run's lines. Every figure the models assume is stated in the line they print. Pure: no
 * MPI, no clock, no file. */
#ifndef ESTIMATE_H
#define ESTIMATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "ga_estimate.h"
#include "profile.h"

/* The cluster an estimate is for (ga_estimate.h: the programs' models read it too). */
typedef ga_est_cluster suite_est_cluster;

enum { SUITE_EST_FAULT_FREE, SUITE_EST_SLOW_NODE, SUITE_EST_CASES };

/* One step's estimate. */
typedef struct {
    double s[SUITE_EST_CASES];                 /* wall time of the step as its plan runs, launch included */
    double whole_s[SUITE_EST_CASES];           /* the same with no time limit: what the whole plan needs */
    char cut[SUITE_EST_CASES][GA_EST_CUT_LEN]; /* what the plan cuts to fit its --timeout ("" nothing) */
    char model[GA_EST_MODEL_LEN];              /* the model, one line */
    char note[GA_EST_NOTE_LEN];                /* a further line ("" none): allreduce_bw's pairs coverage */
    double limit_s;                            /* the step's limit (the cluster's) */
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
