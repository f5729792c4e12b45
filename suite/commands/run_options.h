/* gpuaccept run's options: what the command line asks for, from the verb's option table (verb_options.h),
 * with the profile loaded and the defaults that depend on it filled in. */
#ifndef SUITE_RUN_OPTIONS_H
#define SUITE_RUN_OPTIONS_H

#include <jansson.h>
#include <stdbool.h>

#include "ga_cli.h"
#include "programs.h"

typedef struct {
    bool verbose, dry_run, dump_profile;
    const char *profile_spec;               /* --profile (--quick: "quick"), default SUITE_PROFILE_DEFAULT */
    json_t *profile;                        /* the profile loaded */
    char profile_source[4096];              /* "built-in" or its path */
    double burn_s;                          /* --burn: the full profile's burn */
    json_t *extra_args[SUITE_MAX_PROGRAMS]; /* --args PROGRAM='...', split: appended to its command */
    double preflight_s;                     /* --preflight-timeout, 0 = none, < 0 = the default */
    char report_dir[GA_PATH_MAX];
    long np;
    const char *hostfile;
    bool selected[SUITE_MAX_PROGRAMS];
    double step_timeout_s;
    const char *baseline;
    double tolerance_pct;
    int list_programs;     /* --list-programs: 0 no, else 1 + suite_list_format */
    bool drain, apply_k8s; /* run drain.sh, gpuaccept-k8s.sh after the summary (docs/handoff.md) */
    const char *srun_args, *container_image; /* for every srun under Slurm (launch_plan.h) */
    bool no_gpus;        /* --expect-gpus 0: a CPU cluster (the host paths, nothing expected of NVML) */
    long expect_gpus;    /* --expect-gpus: GPUs every node must have, 0: the hostfile's, Slurm's, here */
    bool allow_sockets;  /* --allow-sockets: sockets between nodes are intended (allreduce_bw) */
    bool fit_allocation; /* --fit-allocation: steps beyond the Slurm job's time left are cut, not refused */
} run_opts;

/* Parses argv into o: 0 when the run goes on, -2 when it printed what was asked (--help, --version,
 * --list-programs, --dump-profile) and ends with exit 0, else the exit code (2 for a usage error). */
int run_options_parse(int argc, char **argv, run_opts *o);

#endif
