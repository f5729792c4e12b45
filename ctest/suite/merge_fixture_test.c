/* Data-driven merge test (after jansson's test suites): a case directory holds reports/ (the programs'
 * reports, and suite_run.json when the case is about how steps ended), an optional baseline.json, and
 * expected.json: a subset of the summary that must hold (objects: each expected key must match; arrays:
 * the same length, element by element). Usage: merge_fixture_test CASE_DIR... */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "merge.h"
#include "suite_util.h"

static int mismatches;

static void fail_at(const char *path, const char *what, const json_t *want, const json_t *got)
{
    char *w = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY),
         *g = got ? json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    fprintf(stderr, "  %s: %s: expected %s, got %s\n", path, what, w ? w : "?", g ? g : "(absent)");
    free(w);
    free(g);
    mismatches++;
}

static void check(const char *path, const json_t *want, const json_t *got)
{
    char sub[512];
    if (json_is_object(want)) {
        if (!json_is_object(got)) {
            fail_at(path, "not an object", want, got);
            return;
        }
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)want, key, v)
        {
            snprintf(sub, sizeof sub, "%s.%s", path, key);
            check(sub, v, json_object_get(got, key));
        }
    } else if (json_is_array(want)) {
        if (!json_is_array(got) || json_array_size(got) != json_array_size(want)) {
            fail_at(path, "array differs in length", want, got);
            return;
        }
        for (size_t i = 0; i < json_array_size(want); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            check(sub, json_array_get(want, i), json_array_get(got, i));
        }
    } else if (json_is_number(want) && json_is_number(got)) {
        if (fabs(json_number_value(want) - json_number_value(got)) > 1e-9)
            fail_at(path, "value", want, got);
    } else if (!got || !json_equal((json_t *)want, (json_t *)got)) {
        fail_at(path, "value", want, got);
    }
}

static int run_case(const char *dir)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/reports", dir);
    json_t *reports = suite_load_reports(path, err, sizeof err);
    if (!reports) {
        fprintf(stderr, "%s: %s\n", dir, err);
        return 1;
    }
    snprintf(path, sizeof path, "%s/reports/suite_run.json", dir);
    FILE *probe = fopen(path, "r");
    json_t *run = probe ? suite_load_json(path, err, sizeof err) : NULL;
    if (probe)
        fclose(probe);
    json_t *summary = suite_merge(reports, run, dir);
    snprintf(path, sizeof path, "%s/baseline.json", dir);
    probe = fopen(path, "r");
    if (probe) {
        fclose(probe);
        json_t *b = suite_load_json(path, err, sizeof err);
        suite_baseline_apply(summary, b, path, -1);
        suite_summary_finalize(summary);
        json_decref(b);
    }
    snprintf(path, sizeof path, "%s/expected.json", dir);
    json_t *expected = suite_load_json(path, err, sizeof err);
    int before = mismatches;
    if (!expected) {
        fprintf(stderr, "%s\n", err);
        mismatches++;
    } else {
        check("summary", expected, summary);
    }
    printf("%s: %s\n", dir, mismatches == before ? "ok" : "MISMATCH");
    json_decref(expected);
    json_decref(summary);
    json_decref(run);
    json_decref(reports);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: merge_fixture_test CASE_DIR...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (run_case(argv[i]))
            return 1;
    return mismatches ? 1 : 0;
}
