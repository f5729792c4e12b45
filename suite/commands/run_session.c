/* The steps of one `gpuaccept run` and its end: run_session.h. */
#include "run_session.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attribution.h"
#include "estimate.h"
#include "fabric.h"
#include "ga_cli.h"
#include "ga_exit.h"
#include "ga_str.h"
#include "ga_text.h"
#include "ga_time.h"
#include "ga_version.h"
#include "handoff.h"
#include "launch_plan.h"
#include "merge.h"
#include "proc_tree.h"
#include "profile.h"
#include "programs.h"
#include "report_check.h"
#include "step_runner.h"
#include "suite.h"
#include "suite_util.h"
#include "train_cut.h"

double run_program_timeout(double step_timeout_s)
{
    return step_timeout_s > 50 ? step_timeout_s - 20 : step_timeout_s * 0.6;
}

static void fmt_clock(double s, char *buf, size_t len)
{
    snprintf(buf, len, "%d:%02d", (int)(s / 60), (int)s % 60);
}

/* argv of one step: the launcher prefix, the program, its options (--timeout timeout_s), then the profile's
 * and --args' words (args). words holds the strings; argv has room for SUITE_LAUNCH_MAX_WORDS + 16 + the size
 * of args. */
static size_t step_argv(const suite_launch *plan, const char *path, const run_opts *o, double timeout_s,
                        const char *run_id, const json_t *args, char words[][64], char **argv)
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
    snprintf(words[0], 64, "%.0f", timeout_s < 1 ? 1 : timeout_s);
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
        json_array_append_new(a, ga_json_text(*p));
    return a;
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
/* The step's launch, bounded (suite_step_run), into res; a program that is not there is said. */
static void launch_step(const run_ctx *c, const char *prog, size_t k, const char *path, char **sargv,
                        bool found, suite_step_result *res)
{
    char err[512];
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    if (!found) {
        printf("[SUITE] step %zu/%zu %s: no program at %s\n", k, c->n_sel, prog, path);
        return;
    }
    char label[96];
    snprintf(label, sizeof label, "step %zu/%zu %s", k, c->n_sel, prog);
    double limit = c->o->step_timeout_s;
    suite_step_spec spec = {sargv, limit, limit < 10 ? 1 : 5, 60, label, NULL, NULL};
    if (c->plan->kind == SUITE_LAUNCH_SLURM) {
        spec.slurm_job = getenv("SLURM_JOB_ID");
        const char *base = strrchr(path, '/');
        spec.slurm_step_name = base ? base + 1 : path;
    }
    if (suite_step_run(&spec, res, err, sizeof err) != 0) {
        fprintf(stderr, "[SUITE] step %s could not start: %s\n", prog, err);
        res->signal = 0;
    }
}

/* How the step ended, from its exit and its report. Only a whole report of this run counts: one cut short,
 * corrupt or left by another run is no report, and is moved aside so that no later merge reads it. */
static const char *settle_report(const run_ctx *c, const char *prog, const char *report, bool found,
                                 const suite_step_result *res, json_t *step)
{
    char rerr[600] = "";
    struct stat st;
    bool exists = found && lstat(report, &st) == 0;
    bool valid = exists && step_report_ok(report, c->run_id, rerr, sizeof rerr);
    suite_step_end end = suite_step_end_of(res);
    const char *status = suite_step_status(&end, found, valid);
    if (exists && !valid) {
        char aside[4300];
        snprintf(aside, sizeof aside, "%s.invalid", report);
        fprintf(stderr, "[SUITE] step %s: %s; moved to %s\n", prog, rerr, aside);
        if (rename(report, aside) != 0)
            unlink(report);
        if (ga_streq(status, "crashed") &&
            (res->exit_code == GA_EXIT_PASS || res->exit_code == GA_EXIT_CHECK_FAILED))
            status = "bad_report";
        json_object_set_new(step, "report_error", ga_json_text(rerr));
    }
    return status;
}

/* The step's end line, and the node it names when it failed as a whole (timeout, crash). */
static void print_step_end(const run_ctx *c, const char *prog, size_t k, bool found, const char *status,
                           const suite_step_result *res, const suite_attribution *blame, bool named)
{
    char clock[32];
    fmt_clock(ga_now() - c->t0, clock, sizeof clock);
    printf("[SUITE] step %zu/%zu %s: %s", k, c->n_sel, prog, status);
    if (res->exit_code >= 0 && found)
        printf(" (exit %d)", res->exit_code);
    if (res->signal)
        printf(" (signal %d)", res->signal);
    printf(" in %.1f s, %s elapsed%s%s\n", res->duration_s, clock, res->result_line[0] ? "; " : "",
           res->result_line);
    if (suite_attr_wanted(status) && named)
        printf("[SUITE] step %zu/%zu %s: host %s rank %d (from %s)\n", k, c->n_sel, prog, blame->host,
               blame->rank, blame->source);
    else if (suite_attr_wanted(status) && ga_streq(blame->source, "job"))
        printf(
            "[SUITE] step %zu/%zu %s: no node named: every rank was at the same wait (the step needed more "
            "time than its limit)\n",
            k, c->n_sel, prog);
    else if (suite_attr_wanted(status))
        printf("[SUITE] step %zu/%zu %s: node unknown (no rank or launcher named one)\n", k, c->n_sel, prog);
    if (res->survivors)
        printf("[SUITE] step %zu/%zu %s: %d of its processes could not be killed\n", k, c->n_sel, prog,
               res->survivors);
}

/* The first slow fabric a step's report names (a report that stood: settle_report moved a bad one aside). */
static void note_slow_fabric(const run_ctx *c, const char *prog, const char *report)
{
    char why[256], err[600];
    if (!c->train_cut_cause || c->train_cut_cause[0] || access(report, F_OK) != 0)
        return;
    json_t *r = suite_load_json(report, err, sizeof err);
    if (r && suite_train_cut_cause(r, why, sizeof why))
        snprintf(c->train_cut_cause, RUN_CUT_CAUSE_LEN, "%s: %s", prog, why);
    json_decref(r);
}

static void execute_step(const run_ctx *c, const char *prog, size_t k, const char *path, char **sargv,
                         json_t *step)
{
    char report[4200];
    bool found = access(path, X_OK) == 0;
    snprintf(report, sizeof report, "%s/%s.json", c->o->report_dir, prog);
    unlink(report); /* a report left by an earlier run must not stand for this one */
    suite_step_result res;
    launch_step(c, prog, k, path, sargv, found, &res);
    const char *status = settle_report(c, prog, report, found, &res, step);
    json_object_set_new(step, "status", json_string(status));
    json_object_set_new(step, "exit_code",
                        found && res.exit_code >= 0 ? json_integer(res.exit_code) : json_null());
    json_object_set_new(step, "signal", json_integer(res.signal));
    json_object_set_new(step, "duration_s", json_real(res.duration_s));
    json_object_set_new(step, "result_line", ga_json_text(res.result_line)); /* the program's output */
    suite_attribution blame;
    bool named = suite_attr_pick(&res.attr, status, &blame);
    if (suite_attr_wanted(status))
        json_object_set_new(step, "node", suite_attr_to_json(&blame));
    print_step_end(c, prog, k, found, status, &res, &blame, named);
    note_slow_fabric(c, prog, report);
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

/* Step i's arguments with the words node_health's report fills at the step's start left out (no fabric facts
 * here: the options they fill are dropped, as a run drops them when the report has none). A new reference. */
static json_t *args_without_late(const run_ctx *c, size_t i)
{
    if (!suite_profile_args_deferred(c->step_args[i]))
        return json_incref(c->step_args[i]);
    suite_fabric_facts none;
    memset(&none, 0, sizeof none);
    suite_profile_env env = *c->env;
    env.fabric = &none;
    json_t *ignored = json_array();
    json_t *args = suite_profile_fill_deferred(c->step_args[i], &env, suite_programs[i].name, ignored);
    json_decref(ignored);
    return args;
}

static double step_estimate_on(const run_ctx *c, const suite_est_cluster *cluster, size_t i)
{
    suite_est_step e;
    if (!cluster)
        return -1;
    json_t *args = args_without_late(c, i);
    int rc = suite_estimate_step(suite_programs[i].name, args, cluster, &e);
    json_decref(args);
    return rc == 0 ? e.s[SUITE_EST_FAULT_FREE] : -1;
}

double run_session_step_estimate(const run_ctx *c, size_t i)
{
    return step_estimate_on(c, c->est, i);
}

/* Step i's --timeout: its share of the step's limit, or, for a training step once a step named a slow
 * fabric, the cut (train_cut.h), said on a line and under not covered. */
static double step_timeout(const run_ctx *c, size_t i)
{
    double normal = run_program_timeout(c->o->step_timeout_s);
    if (c->o->dry_run || !suite_programs[i].trains || !c->train_cut_cause || !c->train_cut_cause[0])
        return normal;
    double est = step_estimate_on(c, c->cut_est, i);
    double cut = suite_train_cut_timeout(normal, est);
    if (cut >= normal)
        return normal;
    char line[768], est_text[64] = "no estimate";
    if (est > 0)
        snprintf(est_text, sizeof est_text, "%.0f s fault-free estimate", est);
    snprintf(
        line, sizeof line,
        "%s: its time cut to %.0f s (from %.0f s; %s) after %s: training through a slow fabric would time "
        "that fault again; the steps that do not fit are said in its report",
        suite_programs[i].name, cut, normal, est_text, c->train_cut_cause);
    printf("[SUITE] not covered: %s\n", line);
    json_array_append_new(c->not_covered, ga_json_text(line));
    return cut;
}

/* --dry-run: step i's estimate (estimate.h), added to the total. */
static void print_estimate(const run_ctx *c, size_t i)
{
    suite_est_step e;
    char prefix[96];
    if (!c->est)
        return;
    snprintf(prefix, sizeof prefix, "[SUITE] %s ", suite_programs[i].name);
    json_t *args = args_without_late(c, i);
    int rc = suite_estimate_step(suite_programs[i].name, args, c->est, &e);
    json_decref(args);
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
    step_argv(c->plan, path, c->o, step_timeout(c, i), c->run_id, args, words, sargv);
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

/* One program's verdict on its final arguments (GA_CHECK_ARGS_ENV, ga_program.h): its exit code, -1 when it
 * could not be asked (not run, killed at the bound); its first line on stderr in msg. */
static int ask_program(char **argv, char *msg, size_t len)
{
    int fds[2];
    msg[0] = '\0';
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    suite_proc_become_subreaper(); /* what the program leaves behind comes back here, to be killed */
    pid_t pid = fork();
    if (pid == 0) {
        setsid(); /* its own session: whatever it starts is found and killed with it (proc_tree.h) */
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        setenv(GA_CHECK_ARGS_ENV, "1", 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    /* a parse takes milliseconds; a program that ignores the flag must not start a run here */
    double deadline = ga_now() + 10;
    char buf[2048];
    size_t got = 0;
    int st = 0;
    bool ended = false;
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    while (!ended && ga_now() < deadline) {
        ssize_t r = read(fds[0], buf + got, sizeof buf - 1 - got);
        if (r > 0)
            got += (size_t)r;
        ended = waitpid(pid, &st, WNOHANG) == pid;
        if (!ended && r <= 0)
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    /* a program that ignored the flag (a wrapper that runs something else) leaves nothing running */
    suite_proc_kill_step(pid, pid, 2.0);
    if (!ended)
        waitpid(pid, &st, 0);
    ssize_t r;
    while (got < sizeof buf - 1 && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)r;
    close(fds[0]);
    buf[got] = '\0';
    snprintf(msg, len, "%.*s", (int)strcspn(buf, "\n"), buf);
    return ended && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int run_session_check_args(const run_ctx *c)
{
    static const suite_launch local; /* the program alone, on this machine: no launcher */
    for (size_t i = 0; i < suite_n_programs; i++) {
        if (!c->o->selected[i])
            continue;
        const char *prog = suite_programs[i].name;
        char path[4200], words[1][64], msg[600];
        snprintf(path, sizeof path, "%s/%s", c->bin_dir, prog);
        if (access(path, X_OK) != 0)
            continue; /* not here (a container image, a dry run away from the build): the step says so */
        json_t *args = args_without_late(c, i);
        char **argv = calloc(16 + json_array_size(args) + 1, sizeof *argv);
        if (!argv) {
            json_decref(args);
            continue;
        }
        size_t n = step_argv(&local, path, c->o, run_program_timeout(c->o->step_timeout_s), c->run_id, args,
                             words, argv);
        argv[n] = NULL;
        int rc = ask_program(argv, msg, sizeof msg);
        free(argv);
        json_decref(args);
        if (rc == GA_EXIT_USAGE) {
            fprintf(stderr, "gpuaccept run: %s's arguments: %s\n", prog, msg[0] ? msg : "refused (exit 2)");
            return GA_EXIT_USAGE;
        }
        if (rc != GA_EXIT_PASS)
            printf("[SUITE] %s: its arguments could not be checked here (%s %d); the step will tell\n", prog,
                   rc < 0 ? "no answer," : "exit", rc);
    }
    return 0;
}

/* Every program in table order: skipped, run, or not run after a stop request. Returns the steps. */
json_t *run_session_steps(const run_ctx *c)
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
    json_t *opts = json_pack("{s:b, s:s, s:I, s:o, s:f, s:o, s:o}", "quick",
                             ga_streq(sj_str(o->profile, "name", ""), "quick"), "profile",
                             sj_str(o->profile, "name", "?"), "np", (json_int_t)c->plan->np, "hostfile",
                             ga_json_text(o->hostfile), "step_timeout_s", o->step_timeout_s, "baseline",
                             ga_json_text(o->baseline), "bin_dir", ga_json_text(c->bin_dir));
    json_t *run = json_pack("{s:s, s:i, s:s, s:s, s:s, s:{s:s, s:o, s:o}, s:o, s:o}", "schema",
                            SUITE_RUN_SCHEMA, "schema_version", SUITE_RUN_SCHEMA_VERSION, "run_id", c->run_id,
                            "gpuaccept_version", ga_version(), "created_utc", now, "launcher", "kind",
                            suite_launch_kind_name(c->plan->kind), "detail", ga_json_text(c->plan->detail),
                            "command", ga_json_text(launcher_cmd), "options", opts, "steps", steps);
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
int run_session_finish(const run_ctx *c, json_t *steps)
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
        if (ga_streq(sj_str(c->o->profile, "name", ""), "quick"))
            printf("[SUITE] quick profile: a smoke test, not an acceptance: the standard profile accepts a "
                   "cluster\n");
        suite_print_verdict(summary, c->o->report_dir);
        exit_code = (int)sj_int(json_object_get(summary, "verdict"), "exit_code", GA_EXIT_INTERNAL);
    }
    json_decref(summary);
    return exit_code;
}
