#include "report_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ga_report.h"
#include "ga_str.h"
#include "node_name.h"
#include "step_status.h"
#include "suite_util.h"

/* An integer member within [lo, hi]; a real, a string or an absent member is not one. */
static bool int_in(const json_t *obj, const char *key, long long lo, long long hi)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

/* A host an entry names, when it names one, is a node name (node_name.h): it reaches file names, command
 * lines and pages. */
static bool name_ok(const json_t *e, const char *key, bool required)
{
    json_t *h = json_object_get(e, key);
    if (!h || json_is_null(h))
        return !required;
    return json_is_string(h) && suite_node_name_ok(json_string_value(h));
}

static bool host_ok(const json_t *e, bool required)
{
    return name_ok(e, "host", required);
}

/* The entries the merge reads: a node without its host, a finding without its severity or a metric
 * without its direction would be dropped or misread silently. */
static int entries_check(const json_t *r, const char *program, char *err, size_t errlen)
{
    size_t i;
    json_t *e;
    json_array_foreach(sj_arr(r, "nodes"), i, e) {
        /* The pod's name beside the node's (issue 41) and the node's name to Slurm (drain.sh names it to
         * scontrol: "ALL" would drain every node, issue 45): the hand-offs carry them, so they are names too.
         */
        if (!host_ok(e, true) || !sj_arr(e, "ranks") || !name_ok(e, "pod", false) ||
            !name_ok(e, "slurm_node", false)) {
            snprintf(
                err, errlen,
                "%s report node %zu has no host that is a node name, no ranks, or a pod or slurm_node that "
                "is not a node name",
                program, i);
            return -1;
        }
    }
    json_array_foreach(sj_arr(r, "findings"), i, e) {
        const char *sev = sj_str(e, "severity", "");
        if (!(ga_streq(sev, "info") || ga_streq(sev, "warn") || ga_streq(sev, "fail")) ||
            !sj_str(e, "code", NULL)) {
            snprintf(err, errlen, "%s report finding %zu has no severity (info|warn|fail) or code", program,
                     i);
            return -1;
        }
        json_t *part = json_object_get(e, "part");
        if (!host_ok(e, false) || !name_ok(e, "peer_host", false) ||
            (part && !json_is_string(part) && !json_is_null(part))) {
            snprintf(err, errlen,
                     "%s report finding %zu names a host that is not a node name (host, peer_host) "
                     "or a part that is not text",
                     program, i);
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

/* Whether every string of v (values and keys, at any depth) is at most max bytes: a finding code or a host
 * of 100,000 characters went on into every hand-off (issue 45, item 2). */
static bool strings_bounded(const json_t *v, size_t max, int depth)
{
    if (depth > 64)
        return false;
    if (json_is_string(v))
        return json_string_length(v) <= max;
    size_t i;
    const char *key;
    json_t *e;
    if (json_is_array(v))
        json_array_foreach(v, i, e)
            if (!strings_bounded(e, max, depth + 1))
                return false;
    if (json_is_object(v))
        json_object_foreach((json_t *)v, key, e)
            if (strlen(key) > max || !strings_bounded(e, max, depth + 1))
                return false;
    return true;
}

/* Findings' codes and metrics' names and units: names in the hand-offs (labels, series names, Reasons). */
static bool names_bounded(const json_t *r)
{
    size_t i;
    json_t *e;
    json_array_foreach(sj_arr(r, "findings"), i, e)
        if (strlen(sj_str(e, "code", "")) > SUITE_REPORT_NAME_MAX)
            return false;
    json_array_foreach(sj_arr(r, "metrics"), i, e)
        if (strlen(sj_str(e, "name", "")) > SUITE_REPORT_NAME_MAX ||
            strlen(sj_str(e, "unit", "")) > SUITE_REPORT_NAME_MAX)
            return false;
    return true;
}

int suite_report_check(const json_t *r, char *err, size_t errlen)
{
    if (!strings_bounded(r, SUITE_REPORT_STRING_MAX, 0) || !names_bounded(r)) {
        snprintf(
            err, errlen,
            "report has a string over %d bytes, or a code, metric name or unit over %d (a gpuaccept report "
            "writes none)",
            SUITE_REPORT_STRING_MAX, SUITE_REPORT_NAME_MAX);
        return -1;
    }
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
        if (!sj_str(st, "program", NULL) || !suite_step_status_known(sj_str(st, "status", "")) ||
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
