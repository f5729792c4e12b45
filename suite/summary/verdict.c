#include "verdict.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "finding_text.h"
#include "links.h"
#include "ga_str.h"
#include "suite_util.h"
#include "step_status.h"
#include "ga_exit.h"

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

/* Failing codes first, then warning codes not also failing: the list a person reads on an abnormal node
 * starts with why it failed (issue 41, observation 10). codes gets them in that order. */
static void codes_by_severity(json_t *codes, json_t *fail_codes, json_t *warn_codes)
{
    size_t i;
    json_t *c;
    json_array_foreach(fail_codes, i, c)
        add_code(codes, json_string_value(c));
    json_array_foreach(warn_codes, i, c)
        add_code(codes, json_string_value(c));
    json_decref(fail_codes);
    json_decref(warn_codes);
}

/* Worst severity of the findings of program (NULL: any) on host (and on the GPU of summary row gpu, when
 * not NULL: by bus id, suite_same_gpu); fault codes of failures, then of warnings, go to codes. */
static int worst_on(const json_t *findings, const char *program, const char *host, const json_t *gpu,
                    json_t *codes)
{
    int worst = 0;
    size_t i;
    json_t *f, *fail_codes = codes ? json_array() : NULL, *warn_codes = codes ? json_array() : NULL;
    json_array_foreach(findings, i, f) {
        if (!ga_streq(sj_str(f, "host", NULL), host) ||
            (program && !ga_streq(sj_str(f, "program", NULL), program)))
            continue;
        if (json_object_get(f, "link")) /* a link's, not the node's: in abnormal_links */
            continue;
        if (gpu && !suite_same_gpu(gpu, f))
            continue;
        int r = sev_rank(sj_str(f, "severity", ""));
        if (r > worst)
            worst = r;
        if (r > 0 && codes)
            add_code(r == 2 ? fail_codes : warn_codes, sj_str(f, "code", "?"));
    }
    if (codes)
        codes_by_severity(codes, fail_codes, warn_codes);
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

/* Each check's verdict on node n (host), by the steps that ran: its findings' worst where a report listed the
 * node, else "absent" or the step's status; and the suite's own findings on it (a baseline regression). */
static json_t *node_checks(const json_t *n, const char *host, const json_t *findings, const json_t *steps)
{
    json_t *checks = json_object(), *st, *f;
    size_t j;
    json_array_foreach(steps, j, st) {
        const char *program = sj_str(st, "program", "?");
        const char *status = sj_str(st, "status", "not_run");
        const char *check;
        if (in_list(sj_arr(n, "in_reports"), program))
            check = verdict_name(worst_on(findings, program, host, NULL, NULL));
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
                                json_string(verdict_name(worst_on(findings, program, host, NULL, NULL))));
    }
    return checks;
}

/* The parts its failures and warnings name on a node ({code: [part, ...]}, each once, in order; issue 46,
 * item 4), or NULL when none does. New reference. */
static json_t *node_parts(const json_t *findings)
{
    json_t *parts = json_object(), *f, *p;
    size_t i, k;
    json_array_foreach(findings, i, f) {
        const char *part = sj_str(f, "part", NULL), *code = sj_str(f, "code", "?");
        if (!part || !*part || sev_rank(sj_str(f, "severity", "")) == 0 || json_object_get(f, "link"))
            continue;
        json_t *list = json_object_get(parts, code);
        if (!list)
            json_object_set_new(parts, code, list = json_array());
        bool seen = false;
        json_array_foreach(list, k, p)
            seen |= ga_streq(json_string_value(p), part);
        if (!seen)
            json_array_append_new(list, json_string(part));
    }
    if (json_object_size(parts) == 0) {
        json_decref(parts);
        return NULL;
    }
    return parts;
}

/* Every node's and GPU's verdict, fault codes and checks; returns the abnormal nodes. */
static json_t *judge_nodes(json_t *s)
{
    json_t *by_host = suite_findings_by_host(sj_arr(s, "findings")), *steps = sj_arr(s, "steps");
    json_t *abnormal = json_array(), *n, *g;
    size_t i, j;
    json_array_foreach(sj_arr(s, "nodes"), i, n) {
        const char *host = sj_str(n, "host", "");
        const json_t *findings = json_object_get(by_host, host); /* NULL: none, worst_on reads no entry */
        json_array_foreach(sj_arr(n, "gpus"), j, g) {
            json_t *codes = json_array();
            json_object_set_new(g, "verdict",
                                json_string(verdict_name(worst_on(findings, NULL, host, g, codes))));
            json_object_set_new(g, "fault_codes", codes);
        }
        json_t *codes = json_array();
        int worst = worst_on(findings, NULL, host, NULL, codes);
        json_object_set_new(n, "verdict", json_string(verdict_name(worst)));
        json_object_set_new(n, "fault_codes", codes);
        json_object_set_new(n, "checks", node_checks(n, host, findings, steps));
        json_t *parts = node_parts(findings);
        if (parts)
            json_object_set_new(n, "parts", parts);
        else
            json_object_del(n, "parts"); /* finalize runs again after a baseline */
        json_t *a = worst == 2 ? json_pack("{s:s, s:O, s:O}", "host", host, "node_index",
                                           json_object_get(n, "node_index"), "fault_codes", codes)
                               : NULL;
        if (a && parts)
            json_object_set(a, "parts", parts);
        if (a)
            json_array_append_new(abnormal, a);
    }
    json_decref(by_host);
    return abnormal;
}

void suite_summary_finalize(json_t *s)
{
    json_t *abnormal = judge_nodes(s), *links = suite_abnormal_links(sj_arr(s, "findings"));
    json_object_set_new(s, "abnormal_nodes", abnormal);
    json_object_set_new(s, "abnormal_links", links);
    json_t *reasons = json_array(), *codes = json_array(), *f;
    int exit_code = GA_EXIT_PASS, failures = 0, warnings = 0;
    bool check_failed = false;
    size_t i;
    json_array_foreach(sj_arr(s, "findings"), i, f) {
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
            suite_finding_text(f, text, sizeof text); /* the place once, even when the message names it */
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
    json_object_set_new(v, "abnormal_link_count", json_integer((json_int_t)json_array_size(links)));
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
