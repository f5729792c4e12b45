#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baseline.h"
#include "ga_cli.h"
#include "ga_exit.h"
#include "ga_findings.h"
#include "handoff.h"
#include "merge.h"
#include "render.h"
#include "suite.h"
#include "suite_util.h"

int suite_usage_error(const char *verb, const char *fmt, ...)
{
    fflush(stdout);
    /* A value echoed in the line stays on it: control characters are written escaped (ga_cli_escape). */
    char line[2048], shown[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ga_cli_escape(line, shown, sizeof shown);
    fprintf(stderr, "gpuaccept %s: %s", verb, shown);
    fprintf(stderr, " (see gpuaccept %s --help)\n", verb);
    return GA_EXIT_USAGE;
}

int suite_bad_option(const char *verb, int key, char **argv)
{
    if (key == ':')
        return suite_usage_error(verb, "option '%s' needs a value", argv[optind - 1]);
    const char *word = argv[optind - 1];
    bool long_word = strncmp(word, "--", 2) == 0;
    const char *eq = long_word ? strchr(word, '=') : NULL;
    /* A long option given a value it takes none of (--help=x): getopt's optopt is then its key. */
    if (long_word && eq && optopt)
        return suite_usage_error(verb, "option '%.*s' takes no value", (int)(eq - word), word);
    if (!long_word && optopt > 32 && optopt < 127)
        return suite_usage_error(verb, "unknown option '-%c'", optopt);
    return suite_usage_error(verb, "unknown option '%.*s'", eq ? (int)(eq - word) : (int)strlen(word), word);
}

int suite_parse_pct(const char *s, double *out, char *err, size_t errlen)
{
    return ga_cli_parse_pct(s, 0, 100, out, err, errlen);
}

int suite_apply_baseline_option(json_t *summary, const char *spec, double tolerance_pct, char *err,
                                size_t errlen)
{
    char path[4096];
    if (!spec || strcmp(spec, "none") == 0)
        return 0;
    if (strcmp(spec, "auto") == 0) {
        if (suite_baseline_find_shipped(sj_str(summary, "gpu_model", NULL), path, sizeof path) != 0)
            return 0; /* no GPU, or a model without a shipped baseline: nothing to hold it to */
    } else {
        snprintf(path, sizeof path, "%s", spec);
    }
    json_t *b = suite_load_json(path, err, errlen);
    if (!b)
        return -1;
    char verr[256];
    if (suite_baseline_validate(b, verr, sizeof verr) != 0) {
        snprintf(err, errlen, "%s: %s", path, verr);
        json_decref(b);
        return -1;
    }
    suite_baseline_apply(summary, b, path, tolerance_pct);
    suite_summary_finalize(summary);
    json_decref(b);
    return 0;
}

int suite_output_path_check(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!path || !*path) {
        snprintf(err, errlen, "'' is not a file name");
        return -1;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is a directory, not a file", path);
        return -1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: no directory %s to write it in", path, dir);
        return -1;
    }
    return 0;
}

void suite_print_verdict(const json_t *s, const char *dir)
{
    const json_t *v = json_object_get(s, "verdict");
    bool pass = strcmp(sj_str(v, "result", "fail"), "pass") == 0;
    const char *stopped = sj_str(s, "interrupted", NULL);
    long long fails = sj_int(v, "failures", 0), warns = sj_int(v, "warnings", 0),
              abn = sj_int(v, "abnormal_node_count", 0);
    printf(
        "[SUITE] verdict: %s, exit %lld (%s): %lld failure%s, %lld warning%s, %lld abnormal node%s of %lld\n",
        pass      ? "PASS"
        : stopped ? "INTERRUPTED"
                  : "FAIL",
        sj_int(v, "exit_code", -1), sj_str(v, "exit_name", "?"), fails, fails == 1 ? "" : "s", warns,
        warns == 1 ? "" : "s", abn, abn == 1 ? "" : "s", sj_int(s, "node_count", 0));
    size_t i, j;
    json_t *a, *c;
    json_array_foreach(sj_arr(s, "abnormal_nodes"), i, a) {
        if (i == 20) {
            printf("[SUITE]   ... and %zu more abnormal nodes\n",
                   json_array_size(sj_arr(s, "abnormal_nodes")) - 20);
            break;
        }
        printf("[SUITE]   abnormal node %s:", sj_str(a, "host", "?"));
        json_array_foreach(sj_arr(a, "fault_codes"), j, c)
            printf(" %s", json_string_value(c));
        printf("\n");
    }
    json_array_foreach(sj_arr(s, "abnormal_links"), i, a) { /* the link's, not either node's (issue 44) */
        const json_t *hosts = json_object_get(a, "hosts");
        printf("[SUITE]   abnormal link %s <-> %s:", json_string_value(json_array_get(hosts, 0)),
               json_string_value(json_array_get(hosts, 1)));
        json_array_foreach(sj_arr(a, "fault_codes"), j, c)
            printf(" %s", json_string_value(c));
        printf(" (left to the fabric team; neither end drained)\n");
    }
    printf("[SUITE] summary: %s/summary.html (also summary.md, summary.json)\n", dir);
    if (pass) {
        printf("[RESULT] SUCCESS\n");
    } else if (stopped) {
        printf("[RESULT] FAILURE: interrupted by %s; the steps not run are not judged\n", stopped);
    } else {
        /* whole codes while they fit in the bytes a program's FAILURE line gives its reasons, the rest
         * counted (issue 41, observation 10): the line stays one readable line at any number of codes */
        const json_t *all = sj_arr(v, "fault_codes");
        size_t used = 0;
        printf("[RESULT] FAILURE:");
        json_array_foreach(all, j, c) {
            const char *code = json_string_value(c);
            if (used + strlen(code) + 1 > GA_RESULT_REASONS_MAX) {
                size_t more = json_array_size(all) - j;
                printf(" and %zu more fault code%s (see summary.json)", more, more == 1 ? "" : "s");
                break;
            }
            printf(" %s", code);
            used += strlen(code) + 1;
        }
        printf("\n");
    }
    fflush(stdout);
}

int suite_print_failure(int exit_code, const char *why)
{
    printf("[RESULT] FAILURE: %s: %s\n", ga_exit_code_name(exit_code), why);
    fflush(stdout);
    return exit_code;
}

int suite_handoff_act(json_t *summary, const char *dir, bool drain, bool apply_k8s, char *err, size_t errlen)
{
    const char *scripts[2] = {drain ? "drain.sh" : NULL, apply_k8s ? "gpuaccept-k8s.sh" : NULL};
    const char *what[2] = {"failed nodes not drained", "nodes not labelled and tainted as the verdict says"};
    bool failed = false;
    for (int i = 0; i < 2; i++) {
        if (!scripts[i])
            continue;
        printf("[SUITE] running %s/%s\n", dir, scripts[i]);
        fflush(stdout);
        int rc = suite_handoff_exec(dir, scripts[i]);
        if (rc == 0)
            continue;
        char msg[600];
        if (rc < 0)
            snprintf(msg, sizeof msg, "%s/%s could not be run or was killed: %s", dir, scripts[i], what[i]);
        else
            snprintf(msg, sizeof msg, "%s/%s failed (exit %d): %s", dir, scripts[i], rc, what[i]);
        fprintf(stderr, "gpuaccept run: %s\n", msg);
        json_array_append_new(sj_arr(summary, "findings"),
                              json_pack("{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:s}", "program", "handoff",
                                        "severity", "fail", "code", SUITE_HANDOFF_FAILED, "host",
                                        "node_index", "rank", "gpu", "message", msg));
        failed = true;
    }
    if (!failed)
        return 0;
    suite_summary_finalize(summary);
    return suite_outputs_write(summary, dir, err, errlen);
}
