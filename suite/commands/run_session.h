/* One `gpuaccept run` session once its plan and arguments are made (cmd_run.c): each selected step in turn
 * under the launcher, with progress lines and estimates, the run record (suite_run.json), then the merge, the
 * hand-off and the verdict. */
#ifndef RUN_SESSION_H
#define RUN_SESSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "estimate.h"
#include "launch_plan.h"
#include "profile.h"
#include "run_options.h"

/* What every step of one run shares. */
typedef struct {
    const run_opts *o;
    const suite_launch *plan;
    const char *bin_dir;
    size_t n_sel;             /* steps selected */
    double t0;                /* monotonic start of the run */
    const char *run_id;       /* given to every step with --run-id; the merge takes only its reports */
    json_t *preflight;        /* suite_run.json's "preflight", NULL when none ran */
    json_t *const *step_args; /* per program: the profile's arguments, then --args' */
    json_t *not_covered;      /* what the profile and this run do not check, for the summary */
    bool no_node;             /* the preflight passed no node: nothing to run the steps on */
    /* --dry-run: the cluster the estimates are for (NULL: unknown), the estimates' sums (SUITE_EST_CASES) */
    const suite_est_cluster *est;
    double *est_total;
    const suite_profile_env *env; /* what filled the placeholders; the late ones wait for node_health */
    /* The training steps' cut (train_cut.h): the cluster their estimates are for (NULL: unknown), and the
     * slow fabric a step named, "allreduce_bw: COMM_SLOW_NODE on node01" ("" none yet; RUN_CUT_CAUSE_LEN) */
    const suite_est_cluster *cut_est;
    char *train_cut_cause;
} run_ctx;

#define RUN_CUT_CAUSE_LEN 320

/* The --timeout each program gets: its own watchdog fires first and names the phase it was stuck in; the
 * suite's kill at the step timeout is the backstop. */
double run_program_timeout(double step_timeout_s);

/* Every selected program asked, on this machine and before anything launches, whether it accepts its final
 * arguments (the late placeholders left out): 0, or GA_EXIT_USAGE after the program's own line on stderr
 * (issue 41, item 6). A program that is not here, or cannot run here, is skipped with a line. */
int run_session_check_args(const run_ctx *c);

/* Step i's fault-free estimate in seconds (estimate.h), -1 when there is none (no cluster, no model). */
double run_session_step_estimate(const run_ctx *c, size_t i);

/* Runs (or, with --dry-run, prints) every selected step; returns the steps' records for suite_run.json. */
json_t *run_session_steps(const run_ctx *c);

/* Writes the run record, merges the reports, hands the verdict off and prints it; the run's exit code. */
int run_session_finish(const run_ctx *c, json_t *steps);

#endif
