#include "run_options.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_parse.h"
#include "ga_str.h"
#include "ga_time.h"
#include "profile.h"
#include "suite.h"
#include "verb_options.h"

enum {
    OPT_QUICK = 1000,
    OPT_REPORT_DIR,
    OPT_NP,
    OPT_HOSTFILE,
    OPT_ONLY,
    OPT_SKIP,
    OPT_STEP_TIMEOUT,
    OPT_BASELINE,
    OPT_TOLERANCE,
    OPT_DRY_RUN,
    OPT_VERBOSE,
    OPT_LIST_PROGRAMS,
    OPT_PREFLIGHT_TIMEOUT,
    OPT_DRAIN,
    OPT_APPLY_K8S,
    OPT_PROFILE,
    OPT_DUMP_PROFILE,
    OPT_ARGS,
    OPT_BURN,
    OPT_SRUN_ARGS,
    OPT_CONTAINER_IMAGE,
    OPT_EXPECT_GPUS,
    OPT_ALLOW_SOCKETS,
    OPT_FIT_ALLOCATION
};

static void run_before(void)
{
    char names[256];
    suite_program_names(", ", names, sizeof names);
    printf(
        "usage: gpuaccept run [options]\n"
        "Runs %s in turn and merges their reports into\n"
        "summary.json, summary.md and summary.html. Launcher: srun --mpi=pmix inside a Slurm allocation, "
        "mpirun\n"
        "with the operator's hostfile inside an MPIJob launcher, else mpirun on this machine with one rank "
        "per\n"
        "GPU (2 ranks on the host paths when there is no GPU).\n",
        names);
}

static void run_after(void)
{
    char names[256];
    suite_program_names(" ", names, sizeof names);
    printf(
        "Steps: %s. Programs are looked up beside gpuaccept\n"
        "(or in $GPUACCEPT_BIN_DIR).\n"
        "Exit code: the verdict. 0 pass; 1 a check failed (the cluster is not fit: see summary.html); else "
        "the\n"
        "worst reason a step could not measure: 2 usage, 3 environment (or a program missing), 4 timeout,\n"
        "5 crash or internal error.\n",
        names);
}

static int parse_list(const char *verb, const char *arg, bool *set, bool value)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    char *items[16];
    int n = ga_split_list(buf, items, 16);
    if (n <= 0)
        return suite_usage_error(verb, "empty or too long step list '%s'", arg);
    for (int i = 0; i < n; i++) {
        int k = suite_program_index(items[i]);
        if (k < 0) {
            char names[256];
            suite_program_names(" ", names, sizeof names);
            return suite_usage_error(verb, "unknown step '%s' (steps: %s)", items[i], names);
        }
        set[k] = value;
    }
    return 0;
}

/* --args PROGRAM='...': the words, split as a shell would, go after the profile's arguments. */
static int parse_args_option(run_opts *o, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char prog[64], err[256];
    snprintf(prog, sizeof prog, "%.*s", eq ? (int)(eq - arg) : 0, arg);
    int k = eq ? suite_program_index(prog) : -1;
    if (k < 0) {
        char names[256];
        suite_program_names(" ", names, sizeof names);
        return suite_usage_error("run", "--args: '%s' is not PROGRAM='ARGS' with PROGRAM one of %s", arg,
                                 names);
    }
    if (!o->extra_args[k])
        o->extra_args[k] = json_array();
    if (suite_split_program_args(eq + 1, o->extra_args[k], err, sizeof err) != 0)
        return suite_usage_error("run", "--args %s: %s", prog, err);
    return 0;
}

/* The profile, and with no --only the steps it lists (--skip still takes steps out). */
static int load_profile(run_opts *o, bool only_seen)
{
    char err[1024];
    if (!o->profile_spec)
        o->profile_spec = SUITE_PROFILE_DEFAULT;
    if (suite_profile_load(o->profile_spec, &o->profile, o->profile_source, sizeof o->profile_source, err,
                           sizeof err) != 0)
        return suite_usage_error("run", "--profile: %s", err);
    for (size_t i = 0; !only_seen && i < suite_n_programs; i++)
        o->selected[i] = o->selected[i] && suite_profile_runs(o->profile, suite_programs[i].name);
    return 0;
}

/* The last of repeated --srun-args / --container-image wins, as with the other options; checked by the plan.
 */
static void set_srun_option(const char **slot, const char *arg)
{
    *slot = arg;
}

static const suite_option run_options[] = {
    {"np", 'n', required_argument, "N",
     "ranks (default: the launcher's; on this machine one per GPU, else 2)", GA_OPT_INT},
    {"hostfile", 'H', required_argument, "FILE", "mpirun with this hostfile", GA_OPT_PATH},
    {"only", OPT_ONLY, required_argument, "LIST", "only these steps (comma separated)", GA_OPT_LIST},
    {"skip", OPT_SKIP, required_argument, "LIST", "not these steps", GA_OPT_LIST},
    {"profile", OPT_PROFILE, required_argument, "NAME|FILE",
     "what to run: quick, standard (the default) or full, or a profile file (format: docs/suite.md); "
     "standard "
     "because a smoke test would pass a node short of a GPU",
     GA_OPT_STRING},
    {"quick", OPT_QUICK, no_argument, NULL, "the same as --profile quick: a smoke test in minutes",
     GA_OPT_FLAG},
    {"burn", OPT_BURN, required_argument, "SEC", "the full profile's GEMM burn (default 600)", GA_OPT_REAL,
     "s", GA_AT(run_opts, burn_s), 1, 7 * 24 * 3600},
    {"args", OPT_ARGS, required_argument, "PROG='ARGS'",
     "append ARGS to PROG's command (split like a shell, no expansion; repeatable)", GA_OPT_STRING},
    {"dump-profile", OPT_DUMP_PROFILE, no_argument, NULL, "print the profile in its file format and exit",
     GA_OPT_FLAG, NULL, GA_AT(run_opts, dump_profile)},
    {"expect-gpus", OPT_EXPECT_GPUS, required_argument, "N",
     "GPUs every node must have (default: the hostfile's slots, Slurm's GPUs per node, this machine's GPUs): "
     "a node that shows fewer fails; 0: a CPU cluster (every program on its host path)",
     GA_OPT_INT},
    {"allow-sockets", OPT_ALLOW_SOCKETS, no_argument, NULL,
     "traffic between nodes over sockets is intended: allreduce_bw does not fail it, and the summary says so "
     "(InfiniBand not exercised)",
     GA_OPT_FLAG, NULL, GA_AT(run_opts, allow_sockets)},
    {"fit-allocation", OPT_FIT_ALLOCATION, no_argument, NULL,
     "in a Slurm job whose time left is shorter than the plan's estimate, run the steps that fit and say the "
     "others are not covered (without it the run is refused, exit 3)",
     GA_OPT_FLAG, NULL, GA_AT(run_opts, fit_allocation)},
    {"report-dir", OPT_REPORT_DIR, required_argument, "DIR",
     "reports and summary go here (default: gpuaccept-<UTC time>); with several nodes, a directory the node "
     "of rank 0 shares with this one",
     GA_OPT_PATH},
    {"step-timeout", OPT_STEP_TIMEOUT, required_argument, "SEC",
     "kill a step after SEC seconds (default: the profile's, 600 quick, 1800 standard, 3600 full); each "
     "program gets a whole-run --timeout a little below it",
     GA_OPT_REAL, "s", GA_AT(run_opts, step_timeout_s), 1, 7 * 24 * 3600},
    {"preflight-timeout", OPT_PREFLIGHT_TIMEOUT, required_argument, "SEC",
     "with a hostfile, an MPIJob or Slurm: each node is first checked alone, all at once, for at most SEC s "
     "(default 60, or the step timeout if less; 0: no preflight); the steps run on the nodes that passed",
     GA_OPT_REAL, "s", GA_AT(run_opts, preflight_s), 0, 3600},
    {"baseline", OPT_BASELINE, required_argument, "FILE|auto|none",
     "hold the figures to a baseline (default auto: the shipped one of the GPU model, if any)", GA_OPT_PATH},
    {"baseline-tolerance", OPT_TOLERANCE, required_argument, "PCT",
     "how far below the baseline a figure may be, in percent (default: the file's)", GA_OPT_PCT, "%",
     GA_AT(run_opts, tolerance_pct), 0, 100},
    {"srun-args", OPT_SRUN_ARGS, required_argument, "'OPTS'",
     "under Slurm: extra srun options for every srun (split at blanks)", GA_OPT_STRING},
    {"container-image", OPT_CONTAINER_IMAGE, required_argument, "IMG",
     "under Slurm: every srun runs in IMG (Pyxis --container-image)", GA_OPT_STRING},
    {"dry-run", OPT_DRY_RUN, no_argument, NULL, "print the commands and exit", GA_OPT_FLAG, NULL,
     GA_AT(run_opts, dry_run)},
    {"verbose", OPT_VERBOSE, no_argument, NULL, "programs print detail", GA_OPT_FLAG, NULL,
     GA_AT(run_opts, verbose)},
    {"drain", OPT_DRAIN, no_argument, NULL,
     "run the drain.sh the summary leaves: scontrol drains failed nodes", GA_OPT_FLAG, NULL,
     GA_AT(run_opts, drain)},
    {"apply-k8s", OPT_APPLY_K8S, no_argument, NULL,
     "run gpuaccept-k8s.sh: kubectl labels every node, taints failed ones", GA_OPT_FLAG, NULL,
     GA_AT(run_opts, apply_k8s)},
    {"list-programs", OPT_LIST_PROGRAMS, optional_argument, "[=json]",
     "print the programs of the suite, in run order, and exit: one per line, tab-separated order, name, "
     "fault-code prefixes, docs page, headline, purpose (or a JSON array)",
     GA_OPT_ENUM},
};

/* --tolerance, this verb's first name of --baseline-tolerance (the programs' --tolerance is "below peers").
 */
static const ga_alias run_aliases[] = {{"tolerance", "baseline-tolerance"}};

const suite_verb run_verb = {"run",     run_options, sizeof run_options / sizeof run_options[0], run_before,
                             run_after, run_aliases, sizeof run_aliases / sizeof run_aliases[0]};

/* The options that take a number. Returns 0, a usage error's exit code, or -1 when key is none of them. */
static int on_number(run_opts *o, int key, const char *arg)
{
    char err[256];
    switch (key) {
    case 'n':
        if (ga_parse_long(arg, 1, 1000000, &o->np, err, sizeof err))
            return suite_usage_error("run", "--np: %s", err);
        return 0;
    case OPT_EXPECT_GPUS:
        if (ga_parse_long(arg, 0, 1024, &o->expect_gpus, err, sizeof err))
            return suite_usage_error("run", "--expect-gpus: %s", err);
        o->no_gpus = o->expect_gpus == 0;
        return 0;
    default:
        return -1;
    }
}

/* What parse() hands each option: the options so far, and whether --only was seen (the first one empties the
 * selection). */
typedef struct {
    run_opts *o;
    bool only_seen;
} run_parse;

/* One option of `gpuaccept run`: 0, or an exit code. */
static int on_option(void *ctx, int key, const char *arg)
{
    run_opts *o = ((run_parse *)ctx)->o;
    bool *only_seen = &((run_parse *)ctx)->only_seen;
    if (key == OPT_QUICK) {
        o->profile_spec = "quick";
        return 0;
    }
    int rc = on_number(o, key, arg);
    if (rc >= 0)
        return rc;
    switch (key) {
    case OPT_PROFILE:
        o->profile_spec = arg;
        return 0;
    case OPT_ARGS:
        return parse_args_option(o, arg) != 0 ? GA_EXIT_USAGE : 0;
    case OPT_REPORT_DIR:
        if (!*arg || strlen(arg) >= sizeof o->report_dir - 64)
            return suite_usage_error("run", "--report-dir: '%s' is not a usable path", arg);
        snprintf(o->report_dir, sizeof o->report_dir, "%s", arg);
        return 0;
    case 'H':
        if (access(arg, R_OK) != 0)
            return suite_usage_error("run", "--hostfile: cannot read '%s'", arg);
        o->hostfile = arg;
        return 0;
    case OPT_ONLY:
        if (!*only_seen)
            for (size_t i = 0; i < suite_n_programs; i++)
                o->selected[i] = false;
        *only_seen = true;
        return parse_list("run", arg, o->selected, true) ? GA_EXIT_USAGE : 0;
    case OPT_SKIP:
        return parse_list("run", arg, o->selected, false) ? GA_EXIT_USAGE : 0;
    case OPT_BASELINE:
        o->baseline = arg;
        return 0;
    case OPT_LIST_PROGRAMS:
        if (!arg || strcmp(arg, "tsv") == 0)
            o->list_programs = 1 + SUITE_LIST_TSV;
        else if (strcmp(arg, "json") == 0)
            o->list_programs = 1 + SUITE_LIST_JSON;
        else
            return suite_usage_error("run", "--list-programs: '%s' is neither tsv nor json", arg);
        return 0;
    case OPT_SRUN_ARGS:
    case OPT_CONTAINER_IMAGE:
        set_srun_option(key == OPT_SRUN_ARGS ? &o->srun_args : &o->container_image, arg);
        return 0;
    default:
        return suite_usage_error("run", "option %d has no handler", key); /* a table row without a case */
    }
}

/* After the options: what they ask to print, the profile, and the defaults that depend on it. 0, -2 when the
 * run ends here, or an exit code. */
static int finish_options(run_opts *o, int argc, char **argv, bool only_seen)
{
    if (optind < argc)
        return suite_usage_error("run", "unexpected argument '%s'", argv[optind]);
    if (o->list_programs) {
        if (suite_programs_print(stdout, (suite_list_format)(o->list_programs - 1)) != 0) {
            fprintf(stderr, "gpuaccept run: --list-programs: cannot write the list\n");
            return GA_EXIT_ENV;
        }
        return -2;
    }
    if (load_profile(o, only_seen) != 0)
        return GA_EXIT_USAGE;
    if (o->dump_profile) {
        const char *text = suite_profile_builtin(o->profile_spec);
        if (text)
            fputs(text, stdout);
        else if (json_dumpf(o->profile, stdout, JSON_INDENT(2)) != 0 || fputc('\n', stdout) == EOF)
            return GA_EXIT_ENV;
        return -2;
    }
    if (!o->step_timeout_s)
        o->step_timeout_s = suite_profile_step_timeout(o->profile);
    if (!o->step_timeout_s)
        o->step_timeout_s = 1800;
    if (o->preflight_s < 0)
        o->preflight_s = o->step_timeout_s < 60 ? o->step_timeout_s : 60;
    if (!o->report_dir[0])
        ga_utc_format(o->report_dir, sizeof o->report_dir, "gpuaccept-%Y%m%d-%H%M%SZ");
    return 0;
}

int run_options_parse(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < suite_n_programs; i++)
        o->selected[i] = true;
    o->baseline = "auto";
    o->tolerance_pct = -1;
    o->preflight_s = -1;
    run_parse ctx = {o, false};
    int rc = suite_verb_parse_into(&run_verb, argc, argv, on_option, &ctx, o);
    if (rc >= 0)
        return rc == GA_EXIT_PASS ? -2 : rc;
    return finish_options(o, argc, argv, ctx.only_seen);
}
