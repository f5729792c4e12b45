/* gpuaccept run: every program in turn under the launcher found, progress as it goes, then the merged
 * summary. A step that crashes or times out is a failure of that step; the run goes on with the next. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution.h"
#include "baseline.h"
#include "estimate.h"
#include "ga_cli.h"
#include "run_options.h"
#include "ga_exit.h"
#include "ga_str.h"
#include "ga_parse.h"
#include "ga_report.h"
#include "ga_time.h"
#include "handoff.h"
#include "launch_plan.h"
#include "hostfile.h"
#include "merge.h"
#include "preflight.h"
#include "fabric.h"
#include "profile.h"
#include "programs.h"
#include "step_runner.h"
#include "suite.h"
#include "suite_util.h"
#include "ga_version.h"
#include "report_check.h"

extern char **environ;

static const char *process_getenv(const char *name)
{
    return getenv(name);
}

/* The program's own watchdog fires first and names the phase it was stuck in; the suite's kill is the
 * backstop. */
static double program_timeout(double step_timeout_s)
{
    return step_timeout_s > 50 ? step_timeout_s - 20 : step_timeout_s * 0.6;
}

static void fmt_clock(double s, char *buf, size_t len)
{
    snprintf(buf, len, "%d:%02d", (int)(s / 60), (int)s % 60);
}

/* argv of one step: the launcher prefix, the program, its options, then the profile's and --args' words
 * (args). words holds the strings; argv has room for SUITE_LAUNCH_MAX_WORDS + 16 + the size of args. */
static size_t step_argv(const suite_launch *plan, const char *path, const run_opts *o, const char *run_id,
                        const json_t *args, char words[][64], char **argv)
{
    size_t n = 0;
    for (int i = 0; i < plan->argc; i++)
        argv[n++] = (char *)plan->argv[i];
    argv[n++] = (char *)path;
    argv[n++] = "--report-dir";
    argv[n++] = (char *)o->report_dir;
    argv[n++] = "--run-id";
    argv[n++] = (char *)run_id;
    argv[n++] = "--timeout";
    snprintf(words[0], 64, "%.0f",
             program_timeout(o->step_timeout_s) < 1 ? 1 : program_timeout(o->step_timeout_s));
    argv[n++] = words[0];
    if (o->verbose)
        argv[n++] = "--verbose";
    size_t i;
    json_t *a;
    json_array_foreach(args, i, a)
        argv[n++] = (char *)json_string_value(a);
    argv[n] = NULL;
    return n;
}

static json_t *argv_json(char **argv)
{
    json_t *a = json_array();
    for (char **p = argv; *p; p++)
        json_array_append_new(a, json_string(*p));
    return a;
}

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
} run_ctx;

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
                          .local_gpus = suite_local_gpu_count(process_getenv),
                          .local_cores = cores > 0 ? (int)cores : 1,
                          .as_root = geteuid() == 0,
                          .envp = environ,
                          .srun_args = o->srun_args,
                          .container_image = o->container_image};
    char err[512];
    int rc = suite_launch_plan(process_getenv, &in, plan, err, sizeof err);
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
    suite_preflight_in in = {gpuaccept, work, c->o->preflight_s, plan_hostfile(plan) ? hosts : NULL};
    size_t passed = 0;
    if (suite_preflight_run(plan, &in, &c->preflight, &passed, err, sizeof err) != 0) {
        fprintf(stderr, "gpuaccept run: %s\n", err);
        json_decref(c->preflight);
        return GA_EXIT_ENV;
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

/* The selected steps after step i, " a b", for the progress line. */
static void remaining_steps(const run_opts *o, size_t i, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t j = i + 1; j < suite_n_programs; j++)
        if (o->selected[j])
            snprintf(buf + strlen(buf), len - strlen(buf), " %s", suite_programs[j].name);
}

/* Whether path is a whole report of run run_id; else why not. */
static bool step_report_ok(const char *path, const char *run_id, char *err, size_t errlen)
{
    char why[512];
    json_t *r = suite_load_json(path, why, sizeof why);
    if (!r) {
        snprintf(err, errlen, "%s", why);
        return false;
    }
    /* Named after its program, of this gpuaccept's schema (merge.h), and of this run. */
    bool ok = suite_report_file_check(path, r, err, errlen) == 0;
    if (ok && !(ok = ga_streq(sj_str(r, "run_id", ""), run_id)))
        snprintf(err, errlen, "%s: of run %s, not this run %s", path, sj_str(r, "run_id", ""), run_id);
    json_decref(r);
    return ok;
}

/* This run's reports: each step's, checked when the step ended. */
static json_t *load_step_reports(const run_ctx *c, const json_t *steps)
{
    json_t *reports = json_array();
    size_t i;
    json_t *st;
    json_array_foreach(steps, i, st) {
        char path[4200], err[600];
        snprintf(path, sizeof path, "%s/%s.json", c->o->report_dir, sj_str(st, "program", "?"));
        if (access(path, F_OK) != 0)
            continue;
        if (!step_report_ok(path, c->run_id, err, sizeof err)) {
            /* Changed since its step ended: the step has no report it can stand on. */
            fprintf(stderr, "[SUITE] %s\n", err);
            json_object_set_new(st, "status", json_string("bad_report"));
            continue;
        }
        json_array_append_new(reports, suite_load_json(path, err, sizeof err));
    }
    return reports;
}

/* Runs the program (if it is there) and records how it ended in step. */
static void execute_step(const run_ctx *c, const char *prog, size_t k, const char *path, char **sargv,
                         json_t *step)
{
    char report[4200], err[512];
    bool found = access(path, X_OK) == 0;
    suite_step_result res;
    memset(&res, 0, sizeof res);
    res.exit_code = -1;
    snprintf(report, sizeof report, "%s/%s.json", c->o->report_dir, prog);
    unlink(report); /* a report left by an earlier run must not stand for this one */
    if (found) {
        char label[96];
        snprintf(label, sizeof label, "step %zu/%zu %s", k, c->n_sel, prog);
        double limit = c->o->step_timeout_s;
        suite_step_spec spec = {sargv, limit, limit < 10 ? 1 : 5, 60, label, NULL, NULL};
        if (c->plan->kind == SUITE_LAUNCH_SLURM) {
            spec.slurm_job = getenv("SLURM_JOB_ID");
            const char *base = strrchr(path, '/');
            spec.slurm_step_name = base ? base + 1 : path;
        }
        if (suite_step_run(&spec, &res, err, sizeof err) != 0) {
            fprintf(stderr, "[SUITE] step %s could not start: %s\n", prog, err);
            res.signal = 0;
        }
    } else {
        printf("[SUITE] step %zu/%zu %s: no program at %s\n", k, c->n_sel, prog, path);
    }
    /* Only a whole report of this run counts: one cut short, corrupt or left by another run is no report,
     * and is moved aside so that no later merge reads it. */
    char rerr[600] = "";
    struct stat st;
    bool exists = found && lstat(report, &st) == 0;
    bool valid = exists && step_report_ok(report, c->run_id, rerr, sizeof rerr);
    suite_step_end end = suite_step_end_of(&res);
    const char *status = suite_step_status(&end, found, valid);
    if (exists && !valid) {
        char aside[4300];
        snprintf(aside, sizeof aside, "%s.invalid", report);
        fprintf(stderr, "[SUITE] step %s: %s; moved to %s\n", prog, rerr, aside);
        if (rename(report, aside) != 0)
            unlink(report);
        if (ga_streq(status, "crashed") &&
            (res.exit_code == GA_EXIT_PASS || res.exit_code == GA_EXIT_CHECK_FAILED))
            status = "bad_report";
        json_object_set_new(step, "report_error", json_string(rerr));
    }
    json_object_set_new(step, "status", json_string(status));
    json_object_set_new(step, "exit_code",
                        found && res.exit_code >= 0 ? json_integer(res.exit_code) : json_null());
    json_object_set_new(step, "signal", json_integer(res.signal));
    json_object_set_new(step, "duration_s", json_real(res.duration_s));
    json_object_set_new(step, "result_line", json_string(res.result_line));
    suite_attribution blame;
    bool named = suite_attr_pick(&res.attr, status, &blame);
    if (suite_attr_wanted(status))
        json_object_set_new(step, "node", suite_attr_to_json(&blame));
    char clock[32];
    fmt_clock(ga_now() - c->t0, clock, sizeof clock);
    printf("[SUITE] step %zu/%zu %s: %s", k, c->n_sel, prog, status);
    if (res.exit_code >= 0 && found)
        printf(" (exit %d)", res.exit_code);
    if (res.signal)
        printf(" (signal %d)", res.signal);
    printf(" in %.1f s, %s elapsed%s%s\n", res.duration_s, clock, res.result_line[0] ? "; " : "",
           res.result_line);
    if (suite_attr_wanted(status) && named)
        printf("[SUITE] step %zu/%zu %s: host %s rank %d (from %s)\n", k, c->n_sel, prog, blame.host,
               blame.rank, blame.source);
    else if (suite_attr_wanted(status) && ga_streq(blame.source, "job"))
        printf(
            "[SUITE] step %zu/%zu %s: no node named: every rank was at the same wait (the step needed more "
            "time than its limit)\n",
            k, c->n_sel, prog);
    else if (suite_attr_wanted(status))
        printf("[SUITE] step %zu/%zu %s: node unknown (no rank or launcher named one)\n", k, c->n_sel, prog);
    if (res.survivors)
        printf("[SUITE] step %zu/%zu %s: %d of its processes could not be killed\n", k, c->n_sel, prog,
               res.survivors);
}

/* One word of a dry run's command, quoted as a shell would need it, so that the line is what would run. */
static void print_shell_word(const char *w, const char *before)
{
    fputs(before, stdout);
    static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+-@%";
    if (*w && strspn(w, plain) == strlen(w)) {
        fputs(w, stdout);
        return;
    }
    putchar('\'');
    for (const char *c = w; *c; c++)
        fputs(*c == '\'' ? "'\\''" : (char[]){*c, 0}, stdout);
    putchar('\'');
}

/* --dry-run: step i's estimate (estimate.h), added to the total. */
static void print_estimate(const run_ctx *c, size_t i)
{
    suite_est_step e;
    char prefix[96];
    if (!c->est)
        return;
    snprintf(prefix, sizeof prefix, "[SUITE] %s ", suite_programs[i].name);
    /* the words node_health's report fills at the step's start are left out of the estimate (no fabric facts
     * here: the options they fill are dropped, as a run drops them when the report has none) */
    json_t *args = json_incref(c->step_args[i]), *ignored = json_array();
    if (suite_profile_args_deferred(args)) {
        suite_fabric_facts none;
        memset(&none, 0, sizeof none);
        suite_profile_env env = *c->env;
        env.fabric = &none;
        json_decref(args);
        args = suite_profile_fill_deferred(c->step_args[i], &env, suite_programs[i].name, ignored);
    }
    int rc = suite_estimate_step(suite_programs[i].name, args, c->est, &e);
    json_decref(args);
    json_decref(ignored);
    if (rc != 0) {
        printf("%sestimate: none (%s)\n", prefix, e.model);
        return;
    }
    suite_estimate_print(stdout, prefix, &e);
    for (int k = 0; k < SUITE_EST_CASES; k++)
        c->est_total[k] += e.s[k];
}

/* A step's arguments, those that wait for node_health's report filled from it now (a new reference); what
 * cannot be filled is said, and goes to the summary's not-covered list. */
static json_t *late_args(const run_ctx *c, const char *prog, json_t *args)
{
    if (c->o->dry_run || !suite_profile_args_deferred(args))
        return json_incref(args);
    suite_fabric_facts facts;
    suite_fabric_facts_read(c->o->report_dir, c->run_id, &facts);
    suite_profile_env env = *c->env;
    env.fabric = &facts;
    size_t before = json_array_size(c->not_covered);
    json_t *filled = suite_profile_fill_deferred(args, &env, prog, c->not_covered);
    for (size_t k = before; k < json_array_size(c->not_covered); k++)
        printf("[SUITE] not covered: %s\n", json_string_value(json_array_get(c->not_covered, k)));
    return filled;
}

/* Step i, the k-th selected: its command, the progress line, then (unless --dry-run) the run itself. */
static void run_step(const run_ctx *c, size_t i, size_t k, json_t *step)
{
    const char *prog = suite_programs[i].name;
    char path[4200], words[1][64];
    snprintf(path, sizeof path, "%s/%s", c->bin_dir, prog);
    json_t *args = late_args(c, prog, c->step_args[i]);
    char **sargv = calloc(SUITE_LAUNCH_MAX_WORDS + 16 + json_array_size(args) + 1, sizeof *sargv);
    if (!sargv) {
        json_decref(args);
        json_object_set_new(step, "status", json_string("not_run"));
        return;
    }
    step_argv(c->plan, path, c->o, c->run_id, args, words, sargv);
    json_object_set_new(step, "command", argv_json(sargv));
    char remaining[256], clock[32];
    remaining_steps(c->o, i, remaining, sizeof remaining);
    fmt_clock(ga_now() - c->t0, clock, sizeof clock);
    printf("[SUITE] step %zu/%zu %s: starting at %s elapsed; after it:%s\n", k, c->n_sel, prog, clock,
           remaining[0] ? remaining : " nothing");
    if (c->o->dry_run) {
        for (char **p = sargv; *p; p++)
            print_shell_word(*p, p == sargv ? "[SUITE]   " : " ");
        printf("\n");
        print_estimate(c, i);
        if (suite_profile_args_deferred(args))
            printf("[SUITE]   (the {...} words are filled from node_health's report when the step starts)\n");
    } else {
        execute_step(c, prog, k, path, sargv, step);
    }
    free(sargv);
    json_decref(args);
}

/* Every program in table order: skipped, run, or not run after a stop request. Returns the steps. */
static json_t *run_steps(const run_ctx *c)
{
    json_t *steps = json_array();
    size_t k = 0;
    bool stopped = false;
    for (size_t i = 0; i < suite_n_programs; i++) {
        json_t *step = json_pack("{s:s}", "program", suite_programs[i].name);
        json_array_append_new(steps, step);
        if (!c->o->selected[i]) {
            json_object_set_new(step, "status", json_string("skipped"));
            continue;
        }
        k++;
        if (stopped || c->no_node) {
            json_object_set_new(step, "status", json_string("not_run"));
            json_object_set_new(step, "reason", json_string(stopped ? "the run was interrupted" : "no node"));
            continue;
        }
        run_step(c, i, k, step);
        stopped = suite_stop_requested();
    }
    return steps;
}

/* suite_run.json: the launcher, the options and how each step ended. Returns the record (steps stolen). */
static json_t *write_run_record(const run_ctx *c, json_t *steps)
{
    const run_opts *o = c->o;
    char launcher_cmd[1024] = "", now[32], path[4200], err[512];
    for (int i = 0; i < c->plan->argc; i++)
        snprintf(launcher_cmd + strlen(launcher_cmd), sizeof launcher_cmd - strlen(launcher_cmd), "%s%s",
                 i ? " " : "", c->plan->argv[i]);
    ga_utc_timestamp(now, sizeof now);
    json_t *opts = json_pack(
        "{s:b, s:s, s:I, s:s?, s:f, s:s, s:s}", "quick", ga_streq(sj_str(o->profile, "name", ""), "quick"),
        "profile", sj_str(o->profile, "name", "?"), "np", (json_int_t)c->plan->np, "hostfile", o->hostfile,
        "step_timeout_s", o->step_timeout_s, "baseline", o->baseline, "bin_dir", c->bin_dir);
    json_t *run =
        json_pack("{s:s, s:i, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:o, s:o}", "schema", SUITE_RUN_SCHEMA,
                  "schema_version", SUITE_RUN_SCHEMA_VERSION, "run_id", c->run_id, "gpuaccept_version",
                  ga_version(), "created_utc", now, "launcher", "kind", suite_launch_kind_name(c->plan->kind),
                  "detail", c->plan->detail, "command", launcher_cmd, "options", opts, "steps", steps);
    if (c->preflight)
        json_object_set(run, "preflight", c->preflight);
    if (suite_stop_signal_name())
        json_object_set_new(run, "interrupted", json_string(suite_stop_signal_name()));
    json_object_set_new(run, "profile",
                        json_pack("{s:s, s:s, s:O, s:O}", "name", sj_str(o->profile, "name", "?"), "source",
                                  o->profile_source, "content", o->profile, "not_covered", c->not_covered));
    snprintf(path, sizeof path, "%s/suite_run.json", o->report_dir);
    if (suite_write_json_atomic(path, run, err, sizeof err) != 0)
        fprintf(stderr, "[SUITE] %s\n", err);
    return run;
}

/* A stopped run: which signal, when, the step it cut short and the steps it left unrun. */
static void print_interrupted(const json_t *steps, const char *clock)
{
    printf("[SUITE] interrupted by %s at %s elapsed", suite_stop_signal_name(), clock);
    size_t i;
    json_t *st;
    json_array_foreach(steps, i, st)
        if (ga_streq(sj_str(st, "status", ""), "interrupted"))
            printf("; %s cut short", sj_str(st, "program", "?"));
    printf("; not run:");
    int none = 1;
    json_array_foreach(steps, i, st)
        if (ga_streq(sj_str(st, "status", ""), "not_run")) {
            printf(" %s", sj_str(st, "program", "?"));
            none = 0;
        }
    printf("%s\n", none ? " none" : "");
}

/* The merge, the baseline, summary.{json,md,html} and the verdict. Returns the run's exit code. */
static int finish_run(const run_ctx *c, json_t *steps)
{
    char err[512];
    json_t *reports = load_step_reports(c, steps);
    json_t *run = write_run_record(c, steps);
    json_t *summary = suite_merge(reports, run, c->o->report_dir);
    json_decref(reports);
    json_decref(run);
    int exit_code;
    if (suite_apply_baseline_option(summary, c->o->baseline, c->o->tolerance_pct, err, sizeof err) != 0) {
        fprintf(stderr, "gpuaccept run: --baseline: %s\n", err);
        exit_code = GA_EXIT_USAGE;
    } else if (suite_outputs_write(summary, c->o->report_dir, err, sizeof err) != 0 ||
               suite_handoff_act(summary, c->o->report_dir, c->o->drain, c->o->apply_k8s, err, sizeof err)) {
        fprintf(stderr, "gpuaccept run: %s\n", err);
        exit_code = suite_print_failure(GA_EXIT_ENV, err);
    } else {
        char clock[32];
        fmt_clock(ga_now() - c->t0, clock, sizeof clock);
        if (suite_stop_signal_name())
            print_interrupted(json_object_get(summary, "steps"), clock);
        else
            printf("[SUITE] all steps done in %s\n", clock);
        suite_print_verdict(summary, c->o->report_dir);
        exit_code = (int)sj_int(json_object_get(summary, "verdict"), "exit_code", GA_EXIT_INTERNAL);
    }
    json_decref(summary);
    return exit_code;
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
        (int)plan->kind, plan->np,         hosts,    suite_local_gpu_count(process_getenv),
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
    if (o->expect_gpus > 0 && takes_gpus && !has) {
        char n[32];
        snprintf(n, sizeof n, "%d", env->expect_gpus);
        json_array_append_new(args, json_string("--expect-gpus"));
        json_array_append_new(args, json_string(n));
    }
    if (o->allow_sockets && strcmp(name, "allreduce_bw") == 0)
        json_array_append_new(args, json_string("--allow-sockets"));
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
    *envp = env;
    *baselinep = baseline; /* the late placeholders need it when allreduce_bw starts */
    return 0;
}

static int run_main(run_opts *o, json_t **step_args, json_t *not_covered);

/* --dry-run: the cluster the estimates are for, from the facts the profile is filled from (Slurm: its node
 * count); NULL when its size is unknown here. */
static const suite_est_cluster *dry_run_cluster(const run_opts *o, const suite_launch *plan,
                                                const suite_hostlist *hosts, suite_est_cluster *out)
{
    suite_profile_run_facts facts = run_facts(o, plan, hosts);
    suite_profile_env env;
    json_t *baseline;
    char err[512];
    if (suite_profile_env_make(&facts, &env, &baseline, err, sizeof err) != 0)
        return NULL;
    const char *slurm = getenv("SLURM_JOB_NUM_NODES");
    int rc = suite_estimate_cluster(&env, baseline, slurm ? atoi(slurm) : 0, o->step_timeout_s,
                                    program_timeout(o->step_timeout_s), out);
    json_decref(baseline);
    if (rc != 0)
        printf("[SUITE] estimate: none: the cluster's size is unknown (no hostfile here, no Slurm nodes)\n");
    return rc == 0 ? out : NULL;
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

static int run_main(run_opts *op, json_t **step_args, json_t *not_covered)
{
    run_opts o = *op;
    int rc;
    char bin_dir[4096];
    resolve_bin_dir(bin_dir, sizeof bin_dir);
    static suite_launch plan;
    if ((rc = make_plan(&o, &plan)) != 0)
        return rc;
    size_t n_sel = 0;
    for (size_t i = 0; i < suite_n_programs; i++)
        n_sel += o.selected[i];
    if (n_sel == 0)
        return suite_usage_error("run", "no step left to run after --only/--skip");
    if ((rc = check_baseline_file(o.baseline)) != 0)
        return rc;
    char err[512];
    static suite_hostlist hosts;
    if ((rc = check_hostfile(&plan, &o, &hosts)) != 0)
        return rc;
    static suite_profile_env env;
    static json_t *baseline; /* the late placeholders need it when allreduce_bw starts */
    if ((rc = build_step_args(&o, &plan, &hosts, step_args, not_covered, &env, &baseline)) != 0)
        return rc;
    if (!o.dry_run && ga_report_dir_prepare(o.report_dir, err, sizeof err) != 0) {
        fprintf(stderr, "gpuaccept run: %s\n", err);
        return GA_EXIT_USAGE;
    }
    printf("[SUITE] gpuaccept run %s: %zu steps under %s; reports in %s\n", ga_version(), n_sel, plan.detail,
           o.report_dir);
    suite_step_install_signal_handlers();

    /* One id for every step of this run, unique enough that no earlier run's report can pass for it. */
    char run_id[GA_RUN_ID_MAX];
    const char *given = getenv("GPUACCEPT_RUN_ID");
    if (given && ga_cli_valid_run_id(given)) {
        snprintf(run_id, sizeof run_id, "%s", given);
    } else {
        char stamp[32];
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&ts.tv_sec));
        snprintf(run_id, sizeof run_id, "run-%s-%ld-%06ld", stamp, (long)getpid(), ts.tv_nsec / 1000);
    }
    static suite_est_cluster est;
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
                 .env = &env};
    printf("[SUITE] run id %s\n", run_id);
    printf("[SUITE] profile %s (%s)\n", sj_str(o.profile, "name", "?"), o.profile_source);
    size_t i;
    json_t *v;
    json_array_foreach(not_covered, i, v)
        printf("[SUITE] not covered: %s\n", json_string_value(v));
    if (!o.dry_run && (rc = preflight(&c, &plan, &hosts)) != 0)
        return rc;
    if (o.dry_run)
        c.est = dry_run_cluster(&o, &plan, &hosts, &est);
    json_t *steps = run_steps(&c);
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
    rc = finish_run(&c, steps);
    json_decref(c.preflight);
    return rc;
}
