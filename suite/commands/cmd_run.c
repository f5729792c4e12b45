/* gpuaccept run: every program in turn under the launcher found, progress as it goes, then the merged
 * summary. A step that crashes or times out is a failure of that step; the run goes on with the next. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocation.h"
#include "baseline.h"
#include "estimate.h"
#include "ga_exit.h"
#include "ga_report.h"
#include "ga_str.h"
#include "ga_time.h"
#include "ga_version.h"
#include "hostfile.h"
#include "launch_plan.h"
#include "preflight.h"
#include "profile.h"
#include "run_options.h"
#include "run_session.h"
#include "step_runner.h"
#include "suite.h"
#include "suite_util.h"

extern char **environ;

/* The quick profile's words at the start and the end of a run: it shows that the suite runs, it accepts
 * nothing (issue 41, observation 8: --quick printed a green PASS over a sweep cut at 16 B). */
#define QUICK_BANNER                                                                                         \
    ": a smoke test, not an acceptance (reduced sizes, no thresholds, relative checks as warnings); the "    \
    "standard profile accepts a cluster"

/* Where the programs are: $GPUACCEPT_BIN_DIR, else beside gpuaccept, else ".". */
static void resolve_bin_dir(char *bin_dir, size_t len)
{
    const char *env_bin = getenv("GPUACCEPT_BIN_DIR");
    if (env_bin && *env_bin)
        snprintf(bin_dir, len, "%s", env_bin);
    else if (suite_self_dir(bin_dir, len) != 0)
        snprintf(bin_dir, len, ".");
}

static int make_plan(const run_opts *o, suite_launch *plan)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    suite_launch_in in = {.np = (int)o->np,
                          .hostfile = o->hostfile,
                          .local_gpus = suite_local_gpu_count(ga_process_getenv),
                          .local_cores = cores > 0 ? (int)cores : 1,
                          .as_root = geteuid() == 0,
                          .envp = environ,
                          .srun_args = o->srun_args,
                          .container_image = o->container_image};
    char err[512];
    int rc = suite_launch_plan(ga_process_getenv, &in, plan, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "gpuaccept run: %s\n", err);
        return rc == -2 ? GA_EXIT_USAGE : GA_EXIT_ENV;
    }
    return 0;
}

/* The hostfile the steps would use (given, or the MPIJob operator's), refused now if it cannot work: nothing
 * is launched. NULL when the plan has none. */
static const char *plan_hostfile(const suite_launch *plan)
{
    if (plan->kind != SUITE_LAUNCH_HOSTFILE && plan->kind != SUITE_LAUNCH_MPIJOB)
        return NULL;
    for (int i = 0; i + 1 < plan->argc; i++)
        if (strcmp(plan->argv[i], "--hostfile") == 0)
            return plan->argv[i + 1];
    return NULL;
}

static int check_hostfile(const suite_launch *plan, const run_opts *o, suite_hostlist *hosts)
{
    const char *path = plan_hostfile(plan);
    hosts->n = 0;
    if (!path || (o->dry_run && access(path, R_OK) != 0))
        return 0; /* a dry run away from the cluster prints the commands for a hostfile that is not here */
    char err[700];
    int rc = suite_hostfile_validate(path, o->np, hosts, err, sizeof err);
    if (rc == GA_EXIT_ENV && o->dry_run) {
        /* a dry run from a machine outside the cluster's DNS still plans; the run itself refuses */
        printf("[SUITE] dry run: %s: planned anyway (a run refuses it)\n", err);
        return 0;
    }
    if (rc)
        fprintf(stderr, "gpuaccept run: %s\n", err);
    return rc;
}

/* Every node alone first; the steps then run on those that passed (preflight.h). */
static int preflight(run_ctx *c, suite_launch *plan, const suite_hostlist *hosts)
{
    if (c->o->preflight_s <= 0 || plan->kind == SUITE_LAUNCH_LOCAL)
        return 0;
    char self[4096], gpuaccept[4200], work[4200], err[700];
    if (suite_self_dir(self, sizeof self) != 0)
        snprintf(self, sizeof self, "%s", c->bin_dir);
    snprintf(gpuaccept, sizeof gpuaccept, "%s/gpuaccept", self);
    snprintf(work, sizeof work, "%s/preflight", c->o->report_dir);
    suite_preflight_in in = {gpuaccept, work, c->o->preflight_s, plan_hostfile(plan) ? hosts : NULL,
                             c->o->report_dir};
    size_t passed = 0;
    int rc = suite_preflight_run(plan, &in, &c->preflight, &passed, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "gpuaccept run: %s\n", err);
        json_decref(c->preflight);
        c->preflight = NULL;
        return rc == -2 ? GA_EXIT_USAGE : GA_EXIT_ENV; /* -2: a --report-dir rank 0's node does not share */
    }
    c->no_node = c->preflight && passed == 0;
    return 0;
}

/* A bad baseline file is a usage error now, not after an hour of measuring. */
static int check_baseline_file(const char *spec)
{
    if (strcmp(spec, "auto") == 0 || strcmp(spec, "none") == 0)
        return 0;
    char err[512], verr[256] = "";
    json_t *b = suite_load_json(spec, err, sizeof err);
    int bad = !b || suite_baseline_validate(b, verr, sizeof verr) != 0;
    json_decref(b);
    return bad ? suite_usage_error("run", "--baseline: %s", b ? verr : err) : 0;
}

static void add_line(json_t *lines, const char *fmt, const char *a)
{
    char line[256];
    snprintf(line, sizeof line, fmt, a);
    json_array_append_new(lines, json_string(line));
}

/* What the run knows for the profile's placeholders (profile.h) and the dry run's estimates. */
static suite_profile_run_facts run_facts(const run_opts *o, const suite_launch *plan,
                                         const suite_hostlist *hosts)
{
    suite_profile_run_facts facts = {
        (int)plan->kind, plan->np,         hosts,    suite_local_gpu_count(ga_process_getenv),
        o->baseline,     o->tolerance_pct, o->burn_s};
    return facts;
}

/* --expect-gpus (for the programs that take it, where the profile did not already give it) and
 * --allow-sockets (allreduce_bw) after the profile's arguments. */
static void add_run_options(const run_opts *o, const suite_profile_env *env, const char *name, json_t *args)
{
    bool takes_gpus = strcmp(name, "node_health") == 0 || strcmp(name, "env_audit") == 0, has = false;
    size_t i;
    json_t *a;
    json_array_foreach(args, i, a)
        has |= ga_streq(json_string_value(a), "--expect-gpus");
    if ((o->expect_gpus > 0 || o->no_gpus) && takes_gpus && !has) {
        char n[32];
        snprintf(n, sizeof n, "%d", env->expect_gpus);
        json_array_append_new(args, json_string("--expect-gpus"));
        json_array_append_new(args, json_string(n));
    }
    if (o->allow_sockets && strcmp(name, "allreduce_bw") == 0)
        json_array_append_new(args, json_string("--allow-sockets"));
}

/* Whether line says that program runs without option ("no --X for PROGRAM", "PROGRAM ... (no --X)"). */
/* Whether line names a program of the suite. */
static bool line_names_a_program(const char *line)
{
    for (size_t k = 0; k < suite_n_programs; k++)
        if (strstr(line, suite_programs[k].name))
            return true;
    return false;
}

/* Whether line says that program runs without option: "no --X for PROGRAM", "PROGRAM ... (no --X)", or
 * "no --X: why" naming no program (a profile's line, e.g. "no --expect-gpus: quick profile"). */
static bool line_says_absent(const char *line, const char *program, const char *option)
{
    char no[96];
    snprintf(no, sizeof no, "no %s", option);
    for (const char *at = strstr(line, no); at; at = strstr(at + 1, no)) {
        char after = at[strlen(no)];
        if ((after == ' ' || after == ')' || after == ':' || after == '\0') &&
            (strstr(line, program) || !line_names_a_program(line)))
            return true;
    }
    return false;
}

/* The not-covered lines that name an option the final command of their program carries anyway (a profile's
 * line, or --args that gave it) are dropped: a line is said only when its cause is there (issue 41,
 * observation 7). */
static void drop_given_options(json_t *not_covered, json_t **args)
{
    for (size_t i = json_array_size(not_covered); i-- > 0;) {
        const char *line = json_string_value(json_array_get(not_covered, i));
        bool given = false;
        for (size_t k = 0; k < suite_n_programs && !given; k++) {
            size_t j;
            json_t *w;
            json_array_foreach(args[k], j, w) {
                const char *word = json_string_value(w);
                if (word && strncmp(word, "--", 2) == 0 && word[2] && word[2] != '{' &&
                    line_says_absent(line, suite_programs[k].name, word))
                    given = true;
            }
        }
        if (given)
            json_array_remove(not_covered, i);
    }
}

/* Every step's arguments (the profile's, placeholders filled, then --args'), and what the run does not
 * cover. 0, or a usage error (a baseline that cannot be read). */
static int build_step_args(const run_opts *o, const suite_launch *plan, const suite_hostlist *hosts,
                           json_t **args, json_t *not_covered, suite_profile_env *envp, json_t **baselinep)
{
    suite_profile_run_facts facts = run_facts(o, plan, hosts);
    suite_profile_env env;
    json_t *baseline, *v;
    char err[512];
    if (suite_profile_env_make(&facts, &env, &baseline, err, sizeof err) != 0)
        return suite_usage_error("run", "--baseline: %s", err);
    if (o->expect_gpus > 0)
        env.expect_gpus = (int)o->expect_gpus;
    if (o->no_gpus) { /* a CPU cluster: the GPU-only words drop out and say so, nothing is held to a GPU SKU
                       */
        env.gpu = false;
        env.expect_gpus = 0;
        env.expect_gpus_why = "--expect-gpus 0: a CPU cluster";
        env.baseline = NULL;
        env.no_baseline_why = "--expect-gpus 0: a CPU cluster, no GPU SKU";
        add_line(not_covered,
                 "GPUs: none on this cluster (--expect-gpus 0): every program ran its host path%s", "");
    } else if (env.gpu && !env.baseline && facts.local_gpus == 0 &&
               (!o->baseline || ga_streq(o->baseline, "auto")))
        /* a login node without GPUs launching onto GPU nodes: the SKU's floors are lost, loudly */
        printf("[SUITE] warning: no GPU on this machine to read the GPU model from: no SKU thresholds (GEMM, "
               "memory and NVLink floors); give --baseline FILE (share/gpuaccept/baselines/) for the nodes' "
               "model\n");
    size_t i;
    json_array_foreach(sj_arr(o->profile, "not_covered"), i, v)
        json_array_append(not_covered, v);
    for (size_t k = 0; k < suite_n_programs; k++) {
        const char *name = suite_programs[k].name;
        args[k] = json_array();
        if (!o->selected[k]) {
            add_line(not_covered,
                     suite_profile_runs(o->profile, name) ? "not run: %s (--only/--skip)"
                                                          : "not run: %s (not in the profile)",
                     name);
            continue;
        }
        suite_profile_args(o->profile, name, &env, args[k], not_covered);
        add_run_options(o, &env, name, args[k]);
        if (o->extra_args[k])
            json_array_extend(args[k], o->extra_args[k]);
    }
    drop_given_options(not_covered, args);
    *envp = env;
    *baselinep = baseline; /* the late placeholders need it when allreduce_bw starts */
    return 0;
}

static int run_main(run_opts *o, json_t **step_args, json_t *not_covered);

/* --dry-run: the cluster the estimates are for, from the facts the profile is filled from (Slurm: its node
 * count); NULL when its size is unknown here. */
/* The cluster the estimates are for; NULL, said when say, when its size is unknown. */
static const suite_est_cluster *dry_run_cluster(const run_opts *o, const suite_launch *plan,
                                                const suite_hostlist *hosts, suite_est_cluster *out, bool say)
{
    suite_profile_run_facts facts = run_facts(o, plan, hosts);
    suite_profile_env env;
    json_t *baseline;
    char err[512];
    if (suite_profile_env_make(&facts, &env, &baseline, err, sizeof err) != 0)
        return NULL;
    const char *slurm = getenv("SLURM_JOB_NUM_NODES");
    int rc = suite_estimate_cluster(&env, baseline, slurm ? atoi(slurm) : 0, o->step_timeout_s,
                                    run_program_timeout(o->step_timeout_s), out);
    json_decref(baseline);
    if (rc != 0 && say)
        printf("[SUITE] estimate: none: the cluster's size is unknown (no hostfile here, no Slurm nodes)\n");
    return rc == 0 ? out : NULL;
}

/* Planning against the Slurm job's end (issue 41, item 4): the plan's fault-free estimate, the preflight's
 * bound and a minute for the merge against the time left. It fits: one line. It does not: refused (exit 3,
 * one line saying what to do), or with --fit-allocation the steps that do not fit, in order, are left out and
 * each is said under "not covered". 0, or the exit code. */
static int fit_allocation(run_ctx *c, run_opts *o, const suite_launch *plan)
{
    double left = 0;
    char source[160];
    if (suite_alloc_time_left(&left, source, sizeof source) != 0) {
        if (getenv("SLURM_JOB_ID"))
            printf("[SUITE] allocation: time left unknown (%s): the plan is not checked against it\n",
                   source);
        return 0;
    }
    if (!c->est) {
        printf("[SUITE] allocation: %.0f s left (%s); no estimate to check the plan against\n", left, source);
        return 0;
    }
    double margin = 60 + (plan->kind != SUITE_LAUNCH_LOCAL && o->preflight_s > 0 ? o->preflight_s : 0);
    double step_s[SUITE_MAX_PROGRAMS] = {0}, need = margin;
    for (size_t i = 0; i < suite_n_programs; i++)
        if (o->selected[i]) {
            double e = run_session_step_estimate(c, i);
            step_s[i] = e >= 0 ? e : o->step_timeout_s; /* no model: its bound */
            need += step_s[i];
        }
    if (need <= left) {
        printf("[SUITE] allocation: %.0f s left in Slurm job %s (%s); the plan needs about %.0f s\n", left,
               getenv("SLURM_JOB_ID"), source, need);
        return 0;
    }
    if (!o->fit_allocation) {
        fprintf(
            stderr,
            "gpuaccept run: the plan needs about %.0f s (its steps' fault-free estimate, the preflight and "
            "the merge) and Slurm job %s has %.0f s left (%s): ask for more time (sbatch --time), run fewer "
            "steps (--only, --skip, --profile quick), or give --fit-allocation to run the steps that fit\n",
            need, getenv("SLURM_JOB_ID"), left, source);
        return GA_EXIT_ENV;
    }
    double used = margin;
    for (size_t i = 0; i < suite_n_programs; i++) {
        if (!o->selected[i])
            continue;
        if (used + step_s[i] <= left) {
            used += step_s[i];
            continue;
        }
        o->selected[i] = false;
        c->n_sel--;
        char line[320];
        snprintf(
            line, sizeof line,
            "not run: %s: no time left in the Slurm job (it needs about %.0f s; %.0f s were left after the "
            "steps before it) (--fit-allocation)",
            suite_programs[i].name, step_s[i], left - used > 0 ? left - used : 0);
        json_array_append_new(c->not_covered, json_string(line));
    }
    printf("[SUITE] allocation: %.0f s left in Slurm job %s (%s); the plan needed about %.0f s: %zu step%s "
           "fit (--fit-allocation)\n",
           left, getenv("SLURM_JOB_ID"), source, need, c->n_sel, c->n_sel == 1 ? "" : "s");
    if (c->n_sel == 0) {
        fprintf(stderr, "gpuaccept run: no step fits in the %.0f s left in Slurm job %s\n", left,
                getenv("SLURM_JOB_ID"));
        return GA_EXIT_ENV;
    }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    json_t *step_args[SUITE_MAX_PROGRAMS] = {0}, *not_covered = json_array();
    int rc = run_options_parse(argc, argv, &o);
    if (rc == 0)
        rc = run_main(&o, step_args, not_covered);
    json_decref(not_covered);
    json_decref(o.profile);
    for (size_t k = 0; k < SUITE_MAX_PROGRAMS; k++) {
        json_decref(step_args[k]);
        json_decref(o.extra_args[k]);
    }
    return rc == -2 ? GA_EXIT_PASS : rc;
}

/* One id for every step of this run, unique enough that no earlier run's report can pass for it. */
static void make_run_id(char *run_id, size_t len)
{
    const char *given = getenv("GPUACCEPT_RUN_ID");
    if (given && ga_cli_valid_run_id(given)) {
        snprintf(run_id, len, "%s", given);
        return;
    }
    char stamp[32];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&ts.tv_sec));
    snprintf(run_id, len, "run-%s-%ld-%06ld", stamp, (long)getpid(), ts.tv_nsec / 1000);
}

/* The plan, the selection, the baseline, the hostfile and every step's arguments, checked before anything
 * starts; the report directory made (not for a dry run). 0, or the exit code. */
static int prepare_run(run_opts *o, suite_launch *plan, size_t *n_sel, suite_hostlist *hosts,
                       json_t **step_args, json_t *not_covered, suite_profile_env *env, json_t **baseline)
{
    int rc;
    if ((rc = make_plan(o, plan)) != 0)
        return rc;
    *n_sel = 0;
    for (size_t i = 0; i < suite_n_programs; i++)
        *n_sel += o->selected[i];
    if (*n_sel == 0)
        return suite_usage_error("run", "no step left to run after --only/--skip");
    if ((rc = check_baseline_file(o->baseline)) != 0)
        return rc;
    if ((rc = check_hostfile(plan, o, hosts)) != 0)
        return rc;
    if ((rc = build_step_args(o, plan, hosts, step_args, not_covered, env, baseline)) != 0)
        return rc;
    char err[512];
    if (!o->dry_run && ga_report_dir_prepare(o->report_dir, err, sizeof err) != 0) {
        fprintf(stderr, "gpuaccept run: %s\n", err);
        return GA_EXIT_USAGE;
    }
    return 0;
}

/* The run's opening lines: its id, the profile (with the quick profile's banner) and what it does not cover.
 */
static void print_run_start(const run_opts *o, const char *run_id, const json_t *not_covered)
{
    printf("[SUITE] run id %s\n", run_id);
    printf("[SUITE] profile %s (%s)%s\n", sj_str(o->profile, "name", "?"), o->profile_source,
           ga_streq(sj_str(o->profile, "name", ""), "quick") ? QUICK_BANNER : "");
    size_t i;
    json_t *v;
    json_array_foreach(not_covered, i, v)
        printf("[SUITE] not covered: %s\n", json_string_value(v));
}

static int run_main(run_opts *op, json_t **step_args, json_t *not_covered)
{
    run_opts o = *op;
    int rc;
    char bin_dir[4096];
    resolve_bin_dir(bin_dir, sizeof bin_dir);
    static suite_launch plan;
    static suite_hostlist hosts;
    static suite_profile_env env;
    static json_t *baseline; /* the late placeholders need it when allreduce_bw starts */
    size_t n_sel = 0;
    if ((rc = prepare_run(&o, &plan, &n_sel, &hosts, step_args, not_covered, &env, &baseline)) != 0)
        return rc;
    printf("[SUITE] gpuaccept run %s: %zu step%s under %s; reports in %s\n", ga_version(), n_sel,
           n_sel == 1 ? "" : "s", plan.detail, o.report_dir);
    suite_step_install_signal_handlers();

    char run_id[GA_RUN_ID_MAX];
    make_run_id(run_id, sizeof run_id);
    static suite_est_cluster est, cut_est;
    static char train_cut_cause[RUN_CUT_CAUSE_LEN];
    double est_total[SUITE_EST_CASES] = {0};
    run_ctx c = {.o = &o,
                 .plan = &plan,
                 .bin_dir = bin_dir,
                 .n_sel = n_sel,
                 .t0 = ga_now(),
                 .run_id = run_id,
                 .step_args = step_args,
                 .not_covered = not_covered,
                 .est_total = est_total,
                 .env = &env,
                 .train_cut_cause = train_cut_cause};
    if ((rc = run_session_check_args(&c)) != 0)
        return rc;
    if (o.dry_run || getenv("SLURM_JOB_ID"))
        c.est = dry_run_cluster(&o, &plan, &hosts, &est, true);
    c.cut_est = dry_run_cluster(&o, &plan, &hosts, &cut_est, false);
    if ((rc = fit_allocation(&c, &o, &plan)) != 0)
        return rc;
    if (!o.dry_run)
        c.est = NULL; /* the estimates are the dry run's lines; a run prints its own times */
    print_run_start(&o, run_id, not_covered);
    if (!o.dry_run && (rc = preflight(&c, &plan, &hosts)) != 0)
        return rc;
    json_t *steps = run_session_steps(&c);
    if (o.dry_run) {
        char label[256];
        if (c.est) {
            suite_estimate_cluster_label(c.est, label, sizeof label);
            printf("[SUITE] estimate: total %.0f s fault-free, %.0f s with one slow node, for %s\n",
                   est_total[SUITE_EST_FAULT_FREE], est_total[SUITE_EST_SLOW_NODE], label);
        }
        json_decref(steps);
        return GA_EXIT_PASS;
    }
    rc = run_session_finish(&c, steps);
    json_decref(c.preflight);
    return rc;
}
