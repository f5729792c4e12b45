#include "merge.h"

#include "fabric.h"
#include "handoff.h"

#include <dirent.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_cli.h"
#include "ga_exit.h"
#include "ga_report.h"
#include "ga_str.h"
#include "ga_time.h"
#include "attribution.h"
#include "handoff.h"
#include "node_name.h"
#include "preflight.h"
#include "render_common.h"
#include "step_runner.h"
#include "suite_util.h"

#ifndef GA_VERSION
#define GA_VERSION "unknown"
#endif

/* How a step that did not end with a report of its checks becomes a finding. */
static const struct {
    const char *status, *code;
    int exit_class;
    const char *what;
} step_faults[] = {
    {"crashed", "STEP_CRASHED", GA_EXIT_INTERNAL, "crashed"},
    {"timeout", "STEP_TIMEOUT", GA_EXIT_TIMEOUT, "timed out"},
    {"env_error", "STEP_ENV_ERROR", GA_EXIT_ENV, "could not measure: environment error"},
    {"usage_error", "STEP_USAGE_ERROR", GA_EXIT_USAGE, "rejected its command line"},
    {"internal_error", "STEP_INTERNAL_ERROR", GA_EXIT_INTERNAL, "failed with an internal error"},
    {"missing", "STEP_MISSING", GA_EXIT_ENV, "is not installed beside gpuaccept"},
    /* a step cut short by a stop request is no fault of a node, nor a timeout; the run's exit is 130 or 143
     */
    {"interrupted", "STEP_INTERRUPTED", GA_EXIT_ENV, "was interrupted (the run was stopped)"},
    {"fail", "STEP_FAILED", GA_EXIT_CHECK_FAILED, "failed without naming a fault"},
    {"bad_report", "STEP_BAD_REPORT", GA_EXIT_INTERNAL, "left no report that can be trusted"},
};

/* Every status suite_run.json may give a step: the faults above, and the ones that are no fault. */
static bool known_status(const char *status)
{
    if (ga_streq(status, "pass") || ga_streq(status, "skipped") || ga_streq(status, "not_run"))
        return true;
    for (size_t i = 0; i < sizeof step_faults / sizeof step_faults[0]; i++)
        if (ga_streq(step_faults[i].status, status))
            return true;
    return false;
}

/* An integer member within [lo, hi]; a real, a string or an absent member is not one. */
static bool int_in(const json_t *obj, const char *key, long long lo, long long hi)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

/* A host an entry names, when it names one, is a node name (node_name.h): it reaches file names, command
 * lines and pages. */
static bool host_ok(const json_t *e, bool required)
{
    json_t *h = json_object_get(e, "host");
    if (!h || json_is_null(h))
        return !required;
    return json_is_string(h) && suite_node_name_ok(json_string_value(h));
}

/* The entries the merge reads: a node without its host, a finding without its severity or a metric
 * without its direction would be dropped or misread silently. */
static int entries_check(const json_t *r, const char *program, char *err, size_t errlen)
{
    size_t i;
    json_t *e;
    json_array_foreach(sj_arr(r, "nodes"), i, e)
        if (!host_ok(e, true) || !sj_arr(e, "ranks")) {
            snprintf(err, errlen, "%s report node %zu has no host that is a node name, or no ranks", program,
                     i);
            return -1;
        }
    json_array_foreach(sj_arr(r, "findings"), i, e) {
        const char *sev = sj_str(e, "severity", "");
        if (!(ga_streq(sev, "info") || ga_streq(sev, "warn") || ga_streq(sev, "fail")) ||
            !sj_str(e, "code", NULL)) {
            snprintf(err, errlen, "%s report finding %zu has no severity (info|warn|fail) or code", program,
                     i);
            return -1;
        }
        if (!host_ok(e, false)) {
            snprintf(err, errlen, "%s report finding %zu names a host that is not a node name", program, i);
            return -1;
        }
    }
    json_array_foreach(sj_arr(r, "metrics"), i, e) {
        json_t *v = json_object_get(e, "value");
        if (!sj_str(e, "name", NULL) || !(json_is_number(v) || json_is_null(v)) ||
            !json_is_boolean(json_object_get(e, "higher_is_better")) || !host_ok(e, false)) {
            snprintf(
                err, errlen,
                "%s report metric %zu needs a name, a value (or null), higher_is_better and no host but a "
                "node name",
                program, i);
            return -1;
        }
    }
    return 0;
}

int suite_report_check(const json_t *r, char *err, size_t errlen)
{
    const char *schema = sj_str(r, "schema", NULL), *program = sj_str(r, "program", NULL);
    json_t *verdict = json_object_get(r, "verdict");
    if (!ga_streq(schema, SUITE_REPORT_SCHEMA))
        snprintf(err, errlen, "not a gpuaccept report (schema %s)", schema ? schema : "missing");
    else if (!int_in(r, "schema_version", GA_REPORT_SCHEMA_VERSION, GA_REPORT_SCHEMA_VERSION))
        snprintf(err, errlen, "report schema_version is not %d, the version this gpuaccept reads",
                 GA_REPORT_SCHEMA_VERSION);
    else if (!program || !*program || strlen(program) > 64 || strchr(program, '/'))
        snprintf(err, errlen, "report has no usable \"program\"");
    else if (!ga_cli_valid_run_id(sj_str(r, "run_id", NULL)))
        snprintf(err, errlen, "%s report has no run_id (from an older gpuaccept, or not written by one)",
                 program);
    else if (!int_in(r, "world_size", 1, 1 << 24) || !int_in(r, "node_count", 1, 1 << 24))
        snprintf(err, errlen, "%s report has no usable world_size and node_count", program);
    else if (!sj_arr(r, "nodes") || !sj_arr(r, "findings") ||
             (json_object_get(r, "metrics") && !sj_arr(r, "metrics")))
        snprintf(err, errlen, "%s report lacks its nodes or findings", program);
    else if (!json_is_object(verdict) || !int_in(verdict, "exit_code", 0, 5) ||
             !ga_streq(sj_str(verdict, "result", NULL),
                       sj_int(verdict, "exit_code", -1) == 0 ? "pass" : "fail"))
        snprintf(err, errlen, "%s report has no usable verdict", program);
    else
        return entries_check(r, program, err, errlen);
    return -1;
}

int suite_run_check(const json_t *run, char *err, size_t errlen)
{
    if (!ga_streq(sj_str(run, "schema", NULL), SUITE_RUN_SCHEMA)) {
        snprintf(err, errlen, "not a %s record", SUITE_RUN_SCHEMA);
        return -1;
    }
    if (!int_in(run, "schema_version", SUITE_RUN_SCHEMA_VERSION, SUITE_RUN_SCHEMA_VERSION) ||
        !ga_cli_valid_run_id(sj_str(run, "run_id", NULL))) {
        snprintf(err, errlen, "run record is not version %d with a run_id (from an older gpuaccept?)",
                 SUITE_RUN_SCHEMA_VERSION);
        return -1;
    }
    json_t *steps = sj_arr(run, "steps");
    if (!steps || json_array_size(steps) == 0) {
        snprintf(err, errlen, "run record has no steps");
        return -1;
    }
    size_t i;
    json_t *st;
    json_array_foreach(steps, i, st) {
        json_t *code = json_object_get(st, "exit_code"), *dur = json_object_get(st, "duration_s");
        if (!sj_str(st, "program", NULL) || !known_status(sj_str(st, "status", "")) ||
            (code && !json_is_null(code) && !int_in(st, "exit_code", 0, 255)) ||
            (json_object_get(st, "signal") && !int_in(st, "signal", 0, 128)) ||
            (dur && !json_is_null(dur) &&
             !(json_is_number(dur) && json_number_value(dur) >= 0 && json_number_value(dur) < 1e9))) {
            snprintf(err, errlen,
                     "run record step %zu is not a program with a known status, exit code and "
                     "duration",
                     i);
            return -1;
        }
        if (json_is_object(json_object_get(st, "node")) && !host_ok(json_object_get(st, "node"), false)) {
            snprintf(err, errlen, "run record step %zu blames a host that is not a node name", i);
            return -1;
        }
    }
    json_array_foreach(sj_arr(json_object_get(run, "preflight"), "nodes"), i, st)
        if (!host_ok(st, true)) {
            snprintf(err, errlen, "run record preflight node %zu has no host that is a node name", i);
            return -1;
        }
    return 0;
}

int suite_fault_exit_class(const char *code)
{
    if (strcmp(code, SUITE_HANDOFF_FAILED) == 0)
        return GA_EXIT_ENV;
    for (size_t i = 0; i < sizeof step_faults / sizeof step_faults[0]; i++)
        if (strcmp(step_faults[i].code, code) == 0)
            return step_faults[i].exit_class;
    return GA_EXIT_CHECK_FAILED;
}

static const json_t *find_report(const json_t *reports, const char *program)
{
    size_t i;
    json_t *r;
    json_array_foreach(reports, i, r)
        if (ga_streq(sj_str(r, "program", NULL), program))
            return r;
    return NULL;
}

static const json_t *find_run_step(const json_t *run, const char *program)
{
    size_t i;
    json_t *s;
    json_array_foreach(sj_arr(run, "steps"), i, s)
        if (ga_streq(sj_str(s, "program", NULL), program))
            return s;
    return NULL;
}

/* Status from a report's own verdict, when no run record says how the step ended: the rules of a step that
 * ran and left this report. */
static const char *status_from_report(const json_t *report)
{
    suite_step_result r = {.started = true,
                           .exit_code = (int)sj_int(json_object_get(report, "verdict"), "exit_code", -1)};
    return suite_step_classify(&r, true, true);
}

/* The programs to list: the suite's in run order, then any other report's, in the order given. */
static json_t *program_list(const json_t *reports, const json_t *run)
{
    json_t *list = json_array();
    for (size_t i = 0; i < suite_n_programs; i++)
        json_array_append_new(list, json_string(suite_programs[i].name));
    const json_t *sources[2] = {sj_arr(run, "steps"), reports};
    for (int s = 0; s < 2; s++) {
        size_t i;
        json_t *r;
        json_array_foreach(sources[s], i, r) {
            const char *p = sj_str(r, "program", NULL);
            if (!p || suite_program_index(p) >= 0)
                continue;
            bool seen = false;
            size_t j;
            json_t *q;
            json_array_foreach(list, j, q)
                seen |= ga_streq(json_string_value(q), p);
            if (!seen)
                json_array_append_new(list, json_string(p));
        }
    }
    return list;
}

static json_t *null_or_int(long long v)
{
    return v < 0 ? json_null() : json_integer(v);
}

static json_t *make_step(const char *program, const json_t *report, const json_t *run_step, json_t *findings)
{
    const char *status = run_step ? sj_str(run_step, "status", "not_run")
                         : report ? status_from_report(report)
                                  : "not_run";
    /* The run record says the step ended with its report, and there is none of this run: not a pass. */
    if (!report && (ga_streq(status, "pass") || ga_streq(status, "fail")))
        status = "bad_report";
    json_t *step = json_object();
    json_object_set_new(step, "program", json_string(program));
    json_object_set_new(step, "status", json_string(status));
    long long exit_code = run_step ? sj_int(run_step, "exit_code", -1)
                                   : sj_int(json_object_get(report, "verdict"), "exit_code", -1);
    json_object_set_new(step, "exit_code", null_or_int(exit_code));
    json_object_set_new(step, "exit_name",
                        exit_code >= 0 ? json_string(ga_exit_code_name((int)exit_code)) : json_null());
    if (run_step && sj_int(run_step, "signal", 0) > 0)
        json_object_set_new(step, "signal", json_integer(sj_int(run_step, "signal", 0)));
    double dur = run_step ? sj_num(run_step, "duration_s", -1) : sj_num(report, "duration_s", -1);
    json_object_set_new(step, "duration_s", dur >= 0 ? json_real(dur) : json_null());
    char name[300];
    snprintf(name, sizeof name, "%s.json", program);
    json_object_set_new(step, "report", report ? json_string(name) : json_null());
    const char *result = run_step ? sj_str(run_step, "result_line", NULL) : NULL;
    json_object_set_new(step, "result_line", result && *result ? json_string(result) : json_null());
    json_object_set_new(step, "world_size",
                        report ? null_or_int(sj_int(report, "world_size", -1)) : json_null());
    json_object_set_new(step, "node_count",
                        report ? null_or_int(sj_int(report, "node_count", -1)) : json_null());
    /* What the program's figures depend on (problem size, backend): what compare and baselines check. */
    if (report && json_is_object(json_object_get(report, "conditions")))
        json_object_set(step, "conditions", json_object_get(report, "conditions"));
    if (run_step && json_object_get(run_step, "command"))
        json_object_set(step, "command", json_object_get(run_step, "command"));
    if (run_step && json_object_get(run_step, "node"))
        json_object_set(step, "node", json_object_get(run_step, "node"));

    /* A step that could not measure is itself a failure of the run. */
    bool report_failed = false;
    size_t i;
    json_t *f;
    json_array_foreach(sj_arr(report, "findings"), i, f)
        report_failed |= ga_streq(sj_str(f, "severity", ""), "fail");
    for (size_t k = 0; k < sizeof step_faults / sizeof step_faults[0]; k++) {
        if (!ga_streq(step_faults[k].status, status) || (ga_streq(status, "fail") && report_failed))
            continue;
        char msg[512];
        int n = snprintf(msg, sizeof msg, "%s %s", program, step_faults[k].what);
        if (exit_code > 0 && !ga_streq(status, "missing"))
            n += snprintf(msg + n, sizeof msg - (size_t)n, " (exit %lld)", exit_code);
        if (sj_int(run_step, "signal", 0) > 0)
            n += snprintf(msg + n, sizeof msg - (size_t)n, " (signal %lld)", sj_int(run_step, "signal", 0));
        if (dur >= 0 && ga_streq(status, "timeout"))
            n += snprintf(msg + n, sizeof msg - (size_t)n, " after %.0f s", dur);
        if (!report && !ga_streq(status, "missing") && !ga_streq(status, "not_run"))
            snprintf(msg + n, sizeof msg - (size_t)n, "; no report");
        json_t *finding =
            json_pack("{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:s}", "program", program, "severity", "fail",
                      "code", step_faults[k].code, "host", "node_index", "rank", "gpu", "message", msg);
        suite_attr_annotate_finding(finding, run_step); /* the node that took the step down, if named */
        json_array_append_new(findings, finding);
    }
    return step;
}

/* The host of a rank, from a report's nodes: for findings and metrics that name a rank but not its host. */
static const char *host_of_rank(const json_t *report, long long rank)
{
    size_t i, j;
    json_t *node, *r;
    json_array_foreach(sj_arr(report, "nodes"), i, node)
        json_array_foreach(sj_arr(node, "ranks"), j, r)
            if (sj_int(r, "rank", -2) == rank)
                return sj_str(node, "host", NULL);
    return NULL;
}

/* Copies a report's finding or metric, with its program first and its host filled in from its rank. */
static json_t *tag_entry(const json_t *entry, const char *program, const json_t *report)
{
    json_t *out = json_object();
    json_object_set_new(out, "program", json_string(program));
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)entry, key, v)
        json_object_set(out, key, v);
    if (!json_is_string(json_object_get(out, "host")) && sj_int(out, "rank", -1) >= 0) {
        const char *host = host_of_rank(report, sj_int(out, "rank", -1));
        if (host)
            json_object_set_new(out, "host", json_string(host));
    }
    return out;
}

static json_t *get_node(json_t *nodes, json_t *index, const char *host, long long node_index)
{
    json_t *node = json_object_get(index, host);
    if (node)
        return node;
    node = json_object();
    json_object_set_new(node, "host", json_string(host));
    json_object_set_new(node, "node_index", null_or_int(node_index));
    json_object_set_new(node, "verdict", json_string("pass"));
    json_object_set_new(node, "fault_codes", json_array());
    json_object_set_new(node, "checks", json_object());
    json_object_set_new(node, "in_reports", json_array());
    json_object_set_new(node, "ranks", json_integer(0));
    json_object_set_new(node, "gpus", json_array());
    json_array_append_new(nodes, node);
    json_object_set(index, host, node);
    return node;
}

static json_t *get_gpu(json_t *node, long long gpu)
{
    size_t i;
    json_t *g;
    json_array_foreach(sj_arr(node, "gpus"), i, g)
        if (sj_int(g, "gpu", -1) == gpu)
            return g;
    g = json_pack("{s:I, s:n, s:n, s:n, s:n, s:s, s:[]}", "gpu", (json_int_t)gpu, "rank", "model", "uuid",
                  "pci_bus_id", "verdict", "pass", "fault_codes");
    json_array_append_new(json_object_get(node, "gpus"), g);
    return g;
}

static void set_if_null(json_t *obj, const char *key, json_t *value)
{
    json_t *cur = json_object_get(obj, key);
    if ((!cur || json_is_null(cur)) && value && !json_is_null(value))
        json_object_set(obj, key, value);
}

static void merge_nodes(const json_t *report, const char *program, json_t *nodes, json_t *index)
{
    size_t i, j;
    json_t *n, *r;
    json_array_foreach(sj_arr(report, "nodes"), i, n) {
        const char *host = sj_str(n, "host", NULL);
        if (!host)
            continue;
        json_t *node = get_node(nodes, index, host, sj_int(n, "node_index", -1));
        json_array_append_new(json_object_get(node, "in_reports"), json_string(program));
        if (json_is_string(json_object_get(n, "slurm_node")))
            set_if_null(node, "slurm_node", json_object_get(n, "slurm_node"));
        long long ranks = json_array_size(sj_arr(n, "ranks"));
        if (ranks > sj_int(node, "ranks", 0))
            json_object_set_new(node, "ranks", json_integer(ranks));
        json_array_foreach(sj_arr(n, "ranks"), j, r) {
            json_t *dev = json_object_get(r, "device");
            if (!json_is_object(dev) || !sj_is_num(dev, "index"))
                continue;
            json_t *gpu = get_gpu(node, sj_int(dev, "index", -1));
            set_if_null(gpu, "rank", json_object_get(r, "rank"));
            set_if_null(gpu, "model", json_object_get(dev, "name"));
            set_if_null(gpu, "uuid", json_object_get(dev, "uuid"));
            set_if_null(gpu, "pci_bus_id", json_object_get(dev, "pci_bus_id"));
        }
    }
}

/* The GPU model most ranks report, or NULL. */
static const char *majority_model(const json_t *nodes)
{
    const char *best = NULL;
    size_t best_n = 0, i, j, k, l;
    json_t *n, *g, *n2, *g2;
    json_array_foreach(nodes, i, n)
        json_array_foreach(sj_arr(n, "gpus"), j, g) {
            const char *m = sj_str(g, "model", NULL);
            if (!m || (best && strcmp(m, best) == 0))
                continue;
            size_t count = 0;
            json_array_foreach(nodes, k, n2)
                json_array_foreach(sj_arr(n2, "gpus"), l, g2)
                    count += ga_streq(sj_str(g2, "model", NULL), m);
            if (count > best_n) {
                best = m;
                best_n = count;
            }
        }
    return best;
}

static int cmp_nodes(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    long long ix = sj_int(x, "node_index", 1LL << 40), iy = sj_int(y, "node_index", 1LL << 40);
    if (ix != iy)
        return ix < iy ? -1 : 1;
    return strcmp(sj_str(x, "host", ""), sj_str(y, "host", ""));
}

static int cmp_gpus(const void *a, const void *b)
{
    long long x = sj_int(*(json_t *const *)a, "gpu", 0), y = sj_int(*(json_t *const *)b, "gpu", 0);
    return (x > y) - (x < y);
}

/* Sorts a JSON array of objects in place with cmp. */
static void sort_array(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    if (n < 2)
        return;
    json_t **items = malloc(n * sizeof *items);
    if (!items)
        return;
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(arr, i));
    qsort(items, n, sizeof *items, cmp);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, items[i]);
    free(items);
}

/* What each program's plan cut (its report's "not_covered": sizes, rounds, checks it had no time for, or
 * whose answer was known) joins what the profile does not cover, "program: line". */
static void merge_not_covered(json_t *s, const json_t *reports)
{
    size_t i, j;
    json_t *r, *line;
    json_array_foreach(reports, i, r)
        json_array_foreach(sj_arr(r, "not_covered"), j, line) {
            if (!json_is_string(line))
                continue;
            json_t *profile = json_object_get(s, "profile");
            if (!json_is_object(profile)) {
                profile = json_pack("{s:s, s:s, s:[]}", "name", "?", "source", "the reports", "not_covered");
                json_object_set_new(s, "profile", profile);
            }
            json_t *nc = json_object_get(profile, "not_covered");
            if (!json_is_array(nc)) {
                nc = json_array();
                json_object_set_new(profile, "not_covered", nc);
            }
            char buf[700];
            snprintf(buf, sizeof buf, "%s: %s", sj_str(r, "program", "?"), json_string_value(line));
            json_array_append_new(nc, json_string(buf));
        }
}

json_t *suite_merge(const json_t *reports, const json_t *run, const char *report_dir)
{
    char now[32];
    ga_utc_timestamp(now, sizeof now);
    json_t *s = json_object();
    json_object_set_new(s, "schema", json_string(SUITE_SUMMARY_SCHEMA));
    json_object_set_new(s, "schema_version", json_integer(SUITE_SUMMARY_SCHEMA_VERSION));
    json_object_set_new(s, "gpuaccept_version", json_string(GA_VERSION));
    /* The run the reports are of (the loader accepts one run only): what monitoring tells runs apart by. */
    const char *run_id = sj_str(run, "run_id", NULL);
    for (size_t k = 0; !run_id && k < json_array_size(reports); k++)
        run_id = sj_str(json_array_get(reports, k), "run_id", NULL);
    json_object_set_new(s, "run_id", run_id ? json_string(run_id) : json_null());
    json_object_set_new(s, "created_utc", json_string(now));
    json_object_set_new(s, "report_dir", report_dir ? json_string(report_dir) : json_null());
    json_t *launcher = json_object_get(run, "launcher");
    if (!launcher) {
        /* Without a run record, the launcher the first report names. */
        size_t i;
        json_t *r;
        json_array_foreach(reports, i, r)
            if (!launcher)
                launcher = json_object_get(r, "launcher");
    }
    json_object_set_new(s, "launcher", launcher ? json_deep_copy(launcher) : json_null());
    json_object_set_new(s, "options",
                        json_object_get(run, "options") ? json_deep_copy(json_object_get(run, "options"))
                                                        : json_null());
    /* Which profile ran and what it did not cover: a pass means only what was checked. */
    json_t *profile = json_object_get(run, "profile");
    json_object_set_new(s, "profile", json_is_object(profile) ? json_deep_copy(profile) : json_null());
    json_object_set_new(s, "verdict", json_object());
    json_object_set_new(s, "gpu_model", json_null());
    json_object_set_new(s, "node_count", json_integer(0));
    json_object_set_new(s, "gpu_count", json_integer(0));
    json_object_set_new(s, "abnormal_nodes", json_array());

    json_t *steps = json_array(), *findings = json_array(), *metrics = json_array(), *nodes = json_array();
    json_t *figures = json_object(), *index = json_object(), *headlines = json_array(),
           *charts = json_array();
    json_t *programs = program_list(reports, run);
    size_t i;
    json_t *p;
    json_array_foreach(programs, i, p) {
        const char *program = json_string_value(p);
        const json_t *report = find_report(reports, program);
        const json_t *run_step = find_run_step(run, program);
        json_array_append_new(steps, make_step(program, report, run_step, findings));
        json_object_set_new(figures, program,
                            report && json_object_get(report, "summary")
                                ? json_deep_copy(json_object_get(report, "summary"))
                                : json_null());
        if (!report)
            continue;
        merge_nodes(report, program, nodes, index);
        size_t j;
        json_t *e;
        json_array_foreach(sj_arr(report, "findings"), j, e)
            json_array_append_new(findings, tag_entry(e, program, report));
        json_array_foreach(sj_arr(report, "metrics"), j, e)
            json_array_append_new(metrics, tag_entry(e, program, report));
        json_array_foreach(sj_arr(report, "headlines"), j, e)
            json_array_append_new(headlines, tag_entry(e, program, report));
        json_array_foreach(sj_arr(report, "charts"), j, e)
            json_array_append_new(charts, tag_entry(e, program, report));
    }
    json_decref(programs);
    json_decref(index);
    merge_not_covered(s, reports);
    /* A run stopped by SIGINT or SIGTERM: its verdict says so (suite_summary_finalize), never a timeout. */
    const char *stopped = sj_str(run, "interrupted", NULL);
    json_object_set_new(s, "interrupted", stopped ? json_string(stopped) : json_null());
    /* Nodes the preflight kept out of the steps are failures of their own, with why. */
    json_object_set_new(s, "excluded_nodes", suite_preflight_findings(run, findings));

    /* A finding on a GPU no report listed (a GPU that vanished mid-run) still gets its row. */
    json_t *idx2 = json_object(), *n;
    json_array_foreach(nodes, i, n)
        json_object_set(idx2, sj_str(n, "host", ""), n);
    json_t *f;
    json_array_foreach(findings, i, f) {
        const char *host = sj_str(f, "host", NULL);
        if (!host)
            continue;
        json_t *node = get_node(nodes, idx2, host, sj_int(f, "node_index", -1));
        if (sj_int(f, "gpu", -1) >= 0)
            get_gpu(node, sj_int(f, "gpu", -1));
    }
    json_decref(idx2);
    sort_array(nodes, cmp_nodes);
    size_t gpu_count = 0;
    json_array_foreach(nodes, i, n) {
        sort_array(json_object_get(n, "gpus"), cmp_gpus);
        gpu_count += json_array_size(sj_arr(n, "gpus"));
    }
    const char *model = majority_model(nodes);
    json_object_set_new(s, "gpu_model", model ? json_string(model) : json_null());
    json_object_set_new(s, "node_count", json_integer((json_int_t)json_array_size(nodes)));
    json_object_set_new(s, "gpu_count", json_integer((json_int_t)gpu_count));
    json_object_set_new(s, "baseline", json_null());
    json_object_set_new(s, "steps", steps);
    json_object_set_new(s, "nodes", nodes);
    json_object_set_new(s, "findings", findings);
    json_object_set_new(s, "metrics", metrics);
    json_object_set_new(s, "figures", figures);
    json_object_set_new(s, "headlines", headlines);
    json_object_set_new(s, "charts", charts);
    suite_fabric_merge(s, reports); /* the transport per node; "InfiniBand not exercised" (issue 25) */
    suite_summary_finalize(s);
    return s;
}

static int sev_rank(const char *sev)
{
    return ga_streq(sev, "fail") ? 2 : ga_streq(sev, "warn") ? 1 : 0;
}

static const char *verdict_name(int rank)
{
    return rank == 2 ? "fail" : rank == 1 ? "warn" : "pass";
}

static void add_code(json_t *codes, const char *code)
{
    size_t i;
    json_t *c;
    json_array_foreach(codes, i, c)
        if (ga_streq(json_string_value(c), code))
            return;
    json_array_append_new(codes, json_string(code));
}

static bool in_list(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
        if (ga_streq(json_string_value(v), s))
            return true;
    return false;
}

/* Worst severity of the findings of program (NULL: any) on host (and gpu, when >= 0); fault codes of
 * warnings and failures go to codes. */
static int worst_on(const json_t *findings, const char *program, const char *host, long long gpu,
                    json_t *codes)
{
    int worst = 0;
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        if (!ga_streq(sj_str(f, "host", NULL), host) ||
            (program && !ga_streq(sj_str(f, "program", NULL), program)))
            continue;
        if (gpu >= 0 && sj_int(f, "gpu", -1) != gpu)
            continue;
        int r = sev_rank(sj_str(f, "severity", ""));
        if (r > worst)
            worst = r;
        if (r > 0 && codes)
            add_code(codes, sj_str(f, "code", "?"));
    }
    return worst;
}

/* The findings of each host, in their order: the verdicts below then read a node's own findings, not all of
 * them for every GPU (1,024 nodes x 8 GPUs with a baseline that flags most: 73 s before, see
 * launch/bench-merge.py). */
json_t *suite_findings_by_host(const json_t *findings)
{
    json_t *index = json_object();
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        const char *host = sj_str(f, "host", NULL);
        if (!host)
            continue;
        json_t *list = json_object_get(index, host);
        if (!list) {
            list = json_array();
            json_object_set_new(index, host, list);
        }
        json_array_append(list, f);
    }
    return index;
}

void suite_summary_finalize(json_t *s)
{
    json_t *all_findings = sj_arr(s, "findings"), *steps = sj_arr(s, "steps");
    json_t *by_host = suite_findings_by_host(all_findings);
    size_t i, j;
    json_t *n, *g, *st, *f;
    json_t *abnormal = json_array();
    json_array_foreach(sj_arr(s, "nodes"), i, n) {
        const char *host = sj_str(n, "host", "");
        const json_t *findings = json_object_get(by_host, host); /* NULL: none, worst_on reads no entry */
        json_array_foreach(sj_arr(n, "gpus"), j, g) {
            json_t *codes = json_array();
            json_object_set_new(
                g, "verdict",
                json_string(verdict_name(worst_on(findings, NULL, host, sj_int(g, "gpu", -1), codes))));
            json_object_set_new(g, "fault_codes", codes);
        }
        json_t *codes = json_array();
        int worst = worst_on(findings, NULL, host, -1, codes);
        json_object_set_new(n, "verdict", json_string(verdict_name(worst)));
        json_object_set_new(n, "fault_codes", codes);
        json_t *checks = json_object();
        json_array_foreach(steps, j, st) {
            const char *program = sj_str(st, "program", "?");
            const char *status = sj_str(st, "status", "not_run");
            const char *check;
            if (in_list(sj_arr(n, "in_reports"), program))
                check = verdict_name(worst_on(findings, program, host, -1, NULL));
            else if (json_is_string(json_object_get(st, "report")))
                check = "absent"; /* the step ran and reported, without this node */
            else
                check = status; /* not_run, skipped, crashed, timeout, ... */
            json_object_set_new(checks, program, json_string(check));
        }
        /* Findings of the suite itself on this node (a baseline regression) have no step of their own. */
        json_array_foreach(findings, j, f) {
            const char *program = sj_str(f, "program", "?");
            if (ga_streq(sj_str(f, "host", NULL), host) && !json_object_get(checks, program))
                json_object_set_new(checks, program,
                                    json_string(verdict_name(worst_on(findings, program, host, -1, NULL))));
        }
        json_object_set_new(n, "checks", checks);
        if (worst == 2)
            json_array_append_new(abnormal,
                                  json_pack("{s:s, s:O, s:O}", "host", host, "node_index",
                                            json_object_get(n, "node_index"), "fault_codes", codes));
    }
    json_object_set_new(s, "abnormal_nodes", abnormal);
    json_decref(by_host);
    const json_t *findings = all_findings;

    json_t *reasons = json_array(), *codes = json_array();
    int exit_code = GA_EXIT_PASS, failures = 0, warnings = 0;
    bool check_failed = false;
    json_array_foreach(findings, i, f) {
        const char *sev = sj_str(f, "severity", "");
        if (ga_streq(sev, "warn"))
            warnings++;
        if (!ga_streq(sev, "fail"))
            continue;
        failures++;
        const char *code = sj_str(f, "code", "?");
        add_code(codes, code);
        int cls = suite_fault_exit_class(code);
        check_failed |= cls == GA_EXIT_CHECK_FAILED;
        if (cls > exit_code)
            exit_code = cls;
        char reason[900], text[800];
        if (sj_str(f, "host", NULL))
            render_finding_text(f, text, sizeof text); /* the place once, even when the message names it */
        else
            snprintf(text, sizeof text, "%s", sj_str(f, "message", code));
        snprintf(reason, sizeof reason, "%s: %s", sj_str(f, "program", "?"), text);
        json_array_append_new(reasons, json_string(reason));
    }
    /* A fault found is the verdict that matters most: the cluster is not fit. Otherwise the worst reason a
     * step could not measure. */
    if (check_failed)
        exit_code = GA_EXIT_CHECK_FAILED;
    json_t *v = json_object_get(s, "verdict");
    const char *stopped = sj_str(s, "interrupted", NULL);
    if (stopped) {
        /* the shell's convention for a process ended by a signal: 128 + SIGINT (2) or SIGTERM (15) */
        json_object_set_new(v, "result", json_string("interrupted"));
        json_object_set_new(v, "exit_code", json_integer(ga_streq(stopped, "SIGTERM") ? 143 : 130));
        json_object_set_new(v, "exit_name", json_string("interrupted"));
    } else {
        json_object_set_new(v, "result", json_string(exit_code == GA_EXIT_PASS ? "pass" : "fail"));
        json_object_set_new(v, "exit_code", json_integer(exit_code));
        json_object_set_new(v, "exit_name", json_string(ga_exit_code_name(exit_code)));
    }
    json_object_set_new(v, "failures", json_integer(failures));
    json_object_set_new(v, "warnings", json_integer(warnings));
    json_object_set_new(v, "abnormal_node_count", json_integer((json_int_t)json_array_size(abnormal)));
    json_object_set_new(v, "fault_codes", codes);
    json_object_set_new(v, "reasons", reasons);
}

const json_t *suite_summary_step(const json_t *summary, const char *program)
{
    size_t i;
    json_t *st;
    json_array_foreach(sj_arr(summary, "steps"), i, st)
        if (ga_streq(sj_str(st, "program", NULL), program))
            return st;
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The base name of path. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int suite_report_file_check(const char *path, const json_t *j, char *err, size_t errlen)
{
    char why[400];
    if (suite_report_check(j, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    const char *name = base_name(path), *program = sj_str(j, "program", "");
    size_t pl = strlen(program);
    if (strncmp(name, program, pl) != 0 || strcmp(name + pl, ".json") != 0) {
        snprintf(err, errlen, "%s holds a report of %s: a report is named after its program (%s.json)", path,
                 program, program);
        return -1;
    }
    return 0;
}

/* The front-end's own files, by name: each must be what its name says, or the directory is refused (a report
 * renamed summary.json, or a summary renamed gemm_flops.json, must not drop out of the merge). 1 when name is
 * one of them and holds what it should, 0 when name is none of them, -1 with a message. */
static int front_end_file(const char *dir, const char *name, char *err, size_t errlen)
{
    char path[4096], why[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    bool summary = strcmp(name, "summary.json") == 0, run = strcmp(name, "suite_run.json") == 0;
    bool k8s = strcmp(name, SUITE_HANDOFF_K8S_JSON) == 0;
    if (!summary && !run && !k8s)
        return 0;
    json_t *j = k8s ? suite_load_json_array(path, why, sizeof why) : suite_load_json(path, why, sizeof why);
    int rc = j ? 1 : -1;
    if (summary && j &&
        (!ga_streq(sj_str(j, "schema", NULL), SUITE_SUMMARY_SCHEMA) ||
         !json_is_integer(json_object_get(j, "schema_version")) ||
         sj_int(j, "schema_version", 0) != SUITE_SUMMARY_SCHEMA_VERSION)) {
        snprintf(why, sizeof why, "%s: not a version %d %s", path, SUITE_SUMMARY_SCHEMA_VERSION,
                 SUITE_SUMMARY_SCHEMA);
        rc = -1;
    } else if (run && j) {
        char rwhy[400];
        if (suite_run_check(j, rwhy, sizeof rwhy) != 0) {
            snprintf(why, sizeof why, "%s: %s", path, rwhy);
            rc = -1;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "%s", why);
    json_decref(j);
    return rc;
}

/* The checks across the reports of one run: one report per program, one cluster. */
static int check_set(const json_t *reports, const json_t *names, char *err, size_t errlen)
{
    size_t i, j;
    json_t *a, *b;
    json_array_foreach(reports, i, a)
        for (j = 0; j < i; j++) {
            b = json_array_get(reports, j);
            const char *fa = json_string_value(json_array_get(names, i)),
                       *fb = json_string_value(json_array_get(names, j));
            if (ga_streq(sj_str(a, "program", ""), sj_str(b, "program", ""))) {
                snprintf(err, errlen, "%s and %s are both %s reports of run %s: remove the one that is not",
                         fb, fa, sj_str(a, "program", ""), sj_str(a, "run_id", ""));
                return -1;
            }
            if (sj_int(a, "node_count", 0) != sj_int(b, "node_count", 0)) {
                snprintf(err, errlen, "%s covers %lld nodes and %s %lld: reports of different clusters", fb,
                         sj_int(b, "node_count", 0), fa, sj_int(a, "node_count", 0));
                return -1;
            }
        }
    return 0;
}

json_t *suite_load_reports(const char *dir, const char *run_id, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot read report directory %s", dir);
        return NULL;
    }
    size_t n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    bool oom = false;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = cap <= 1 << 20 ? realloc(names, cap * sizeof *names) : NULL;
            if (!grown) {
                oom = true;
                break;
            }
            names = grown;
        }
        if (!(names[n] = strdup(e->d_name))) {
            oom = true;
            break;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof names[0], cmp_str);
    json_t *reports = json_array(), *files = json_array();
    if (oom) {
        snprintf(err, errlen, "out of memory listing %s", dir);
        json_decref(reports);
        reports = NULL;
    }
    /* Every *.json is, by its name and content together, one of the front-end's own files or the report of
     * the program it is named after; anything else stops the merge (docs/suite.md, "gpuaccept merge"). */
    for (size_t i = 0; i < n && reports; i++) {
        char path[4096], lerr[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int own = front_end_file(dir, names[i], lerr, sizeof lerr);
        if (own == 1)
            continue;
        json_t *j = own < 0 ? NULL : suite_load_json(path, lerr, sizeof lerr);
        char why[700];
        if (j && suite_report_file_check(path, j, why, sizeof why) != 0) {
            snprintf(lerr, sizeof lerr, "%s", why);
            json_decref(j);
            j = NULL;
        }
        if (!j) {
            snprintf(err, errlen, "cannot trust %s", lerr);
            json_decref(reports);
            reports = NULL;
            break;
        }
        const char *id = sj_str(j, "run_id", "");
        if (run_id && !ga_streq(id, run_id)) {
            fprintf(stderr, "[SUITE] ignoring %s: a report of run %s, not of this run %s\n", path, id,
                    run_id);
        } else if (!run_id && json_array_size(reports) > 0 &&
                   !ga_streq(id, sj_str(json_array_get(reports, 0), "run_id", ""))) {
            snprintf(err, errlen,
                     "%s/%s is of run %s and %s of run %s: the directory mixes runs; merge one run's reports "
                     "(move the others away)",
                     dir, json_string_value(json_array_get(files, 0)),
                     sj_str(json_array_get(reports, 0), "run_id", ""), path, id);
            json_decref(reports);
            reports = NULL;
        } else {
            json_array_append(reports, j);
            json_array_append_new(files, json_string(path));
        }
        json_decref(j);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (reports && check_set(reports, files, err, errlen) != 0) {
        json_decref(reports);
        reports = NULL;
    }
    json_decref(files);
    return reports;
}

int suite_load_run_dir(const char *dir, json_t **reports, json_t **run, char *err, size_t errlen)
{
    /* suite_run.json, when there is one, says how each step ended and which run this is: it must be read
     * in full, or the verdict of a step that crashed would silently become its report's. */
    char path[4096], lerr[512], why[400];
    snprintf(path, sizeof path, "%s/suite_run.json", dir);
    struct stat st;
    *reports = *run = NULL;
    if (lstat(path, &st) == 0) {
        *run = suite_load_json(path, lerr, sizeof lerr);
        if (*run && suite_run_check(*run, why, sizeof why) != 0) {
            snprintf(lerr, sizeof lerr, "%s: %s", path, why);
            json_decref(*run);
            *run = NULL;
        }
        if (!*run) {
            snprintf(err, errlen, "cannot trust %s", lerr);
            return -1;
        }
    }
    *reports = suite_load_reports(dir, *run ? sj_str(*run, "run_id", NULL) : NULL, err, errlen);
    if (!*reports) {
        json_decref(*run);
        *run = NULL;
        return -1;
    }
    return 0;
}
