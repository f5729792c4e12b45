#include "baseline.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ga_stats.h"
#include "ga_str.h"
#include "ga_time.h"
#include "comparable.h"
#include "finding_text.h"
#include "merge.h"
#include "suite_util.h"

/* For json_pack's O, which refuses NULL: an absent field is null. */
#define OR_NULL(v) ((v) ? (v) : json_null())

const char *suite_metric_scope(const json_t *m)
{
    if (suite_is_gpu(m)) /* by index, or by bus id alone where the index is unknown */
        return "gpu";
    if (sj_int(m, "rank", -1) >= 0)
        return "rank";
    if (sj_str(m, "host", NULL))
        return "node";
    return "cluster";
}

/* The ids of the baseline's "sources" as a set (new reference): each figure's source is looked up once, in
 * constant time, not against every source (issue 45, item 4). */
static json_t *source_ids(const json_t *b)
{
    json_t *ids = json_object(), *src;
    size_t i;
    json_array_foreach(sj_arr(b, "sources"), i, src)
        if (sj_str(src, "id", NULL))
            json_object_set_new(ids, sj_str(src, "id", NULL), json_true());
    return ids;
}

/* Whether id names an entry of the baseline's "sources" (ids: source_ids). */
static bool source_known(const json_t *ids, const char *id)
{
    return id && json_object_get(ids, id) != NULL;
}

/* A figure says where it comes from: "source" and "peak_source" name an entry of "sources", "estimate" is
 * true or false, a "peak" (what --min-efficiency is a percentage of) is a positive number. */
static bool metric_sources_bad(const json_t *ids, const json_t *m, size_t i, char *err, size_t errlen)
{
    const char *keys[] = {"source", "peak_source"};
    for (size_t k = 0; k < 2; k++) {
        json_t *v = json_object_get(m, keys[k]);
        if (v && !(json_is_string(v) && source_known(ids, json_string_value(v)))) {
            snprintf(err, errlen, "baseline metric %zu: \"%s\" names no entry of \"sources\"", i, keys[k]);
            return true;
        }
    }
    json_t *est = json_object_get(m, "estimate"), *peak = json_object_get(m, "peak");
    json_t *tol = json_object_get(m, "tolerance_pct");
    if (tol && !(json_is_number(tol) && json_number_value(tol) >= 0 && json_number_value(tol) <= 100)) {
        snprintf(err, errlen,
                 "baseline metric %zu: \"tolerance_pct\" must be a number from 0 to 100 (percent)", i);
        return true;
    }
    json_t *cond = json_object_get(m, "conditions");
    if (cond && !json_is_object(cond)) {
        snprintf(err, errlen, "baseline metric %zu: \"conditions\" must be an object", i);
        return true;
    }
    if (est && !json_is_boolean(est)) {
        snprintf(err, errlen, "baseline metric %zu: \"estimate\" must be true or false", i);
        return true;
    }
    json_t *reg = json_object_get(m, "regression");
    if (reg && !(json_is_string(reg) &&
                 (ga_streq(json_string_value(reg), "fail") || ga_streq(json_string_value(reg), "warn")))) {
        snprintf(err, errlen, "baseline metric %zu: \"regression\" must be \"fail\" or \"warn\"", i);
        return true;
    }
    if (peak && !(json_is_number(peak) && json_number_value(peak) > 0)) {
        snprintf(err, errlen, "baseline metric %zu: \"peak\" must be a positive number", i);
        return true;
    }
    return false;
}

/* "fabric": the allreduce busbw across nodes per unit of the HCAs' line rate (a fraction above 0, at
 * most 1.5), with its source, as every figure. */
static bool fabric_bad(const json_t *b, const json_t *ids, char *err, size_t errlen)
{
    json_t *f = json_object_get(b, "fabric");
    if (!f)
        return false;
    double eff = sj_num(f, "busbw_per_line_rate", NAN);
    if (!json_is_object(f) || !sj_is_num(f, "busbw_per_line_rate") || !(eff > 0 && eff <= 1.5)) {
        snprintf(err, errlen,
                 "baseline \"fabric\" needs busbw_per_line_rate, a fraction above 0 and at most 1.5");
        return true;
    }
    json_t *src = json_object_get(f, "source"), *est = json_object_get(f, "estimate");
    if (!json_is_string(src) || !source_known(ids, json_string_value(src))) {
        snprintf(err, errlen, "baseline \"fabric\": \"source\" names no entry of \"sources\"");
        return true;
    }
    if (est && !json_is_boolean(est)) {
        snprintf(err, errlen, "baseline \"fabric\": \"estimate\" must be true or false");
        return true;
    }
    return false;
}

/* A figure given twice (same program, name, scope and job shape) is refused: which one holds? seen maps
 * each figure's identity, its fields present written as canonical JSON (an absent field differs from null
 * and 8 from 8.0, as json_equal has them), to its index: one look-up a figure, where comparing each with
 * every earlier one took an hour for 100,000 figures (issue 45, item 4). */
static bool metric_repeated(json_t *seen, const json_t *m, size_t i, char *err, size_t errlen)
{
    static const char *const same[] = {"program", "name", "scope", "world_size", "node_count"};
    json_t *id = json_object();
    for (size_t k = 0; k < sizeof same / sizeof *same; k++)
        if (json_object_get(m, same[k]))
            json_object_set(id, same[k], json_object_get(m, same[k]));
    char *key = json_dumps(id, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(id);
    if (!key) {
        snprintf(err, errlen, "out of memory checking baseline metric %zu", i);
        return true;
    }
    json_t *j = json_object_get(seen, key);
    if (j)
        snprintf(err, errlen, "baseline metrics %lld and %zu are the same figure (%s %s, scope %s)",
                 json_integer_value(j), i, sj_str(m, "program", "?"), sj_str(m, "name", "?"),
                 sj_str(m, "scope", "?"));
    else
        json_object_set_new(seen, key, json_integer((json_int_t)i));
    free(key);
    return j != NULL;
}

/* A figure's other fields, of their type where present: text, and the job's shape as a count. */
static bool metric_types_bad(const json_t *m, size_t i, char *err, size_t errlen)
{
    static const char *const texts[] = {"unit", "note"}, *const counts[] = {"world_size", "node_count"};
    for (size_t k = 0; k < 2; k++) {
        json_t *t = json_object_get(m, texts[k]), *c = json_object_get(m, counts[k]);
        if (t && !json_is_string(t)) {
            snprintf(err, errlen, "baseline metric %zu: \"%s\" must be a string", i, texts[k]);
            return true;
        }
        if (c && !(json_is_integer(c) && json_integer_value(c) >= 1)) {
            snprintf(err, errlen, "baseline metric %zu: \"%s\" must be a whole number from 1", i, counts[k]);
            return true;
        }
    }
    return false;
}

/* Fields of the whole baseline that are read where a figure is applied: of their type or absent, never
 * skipped for being of another (a "profile" that is a number held the figures to no profile at all). */
static bool top_fields_bad(const json_t *b, char *err, size_t errlen)
{
    static const char *const strings[] = {"profile", "model", "description"};
    for (size_t k = 0; k < sizeof strings / sizeof *strings; k++) {
        json_t *v = json_object_get(b, strings[k]);
        if (v && !json_is_string(v)) {
            snprintf(err, errlen, "baseline \"%s\" must be a string", strings[k]);
            return true;
        }
    }
    json_t *src = json_object_get(b, "sources"), *e;
    size_t i;
    if (src && !json_is_array(src)) {
        snprintf(err, errlen, "baseline \"sources\" must be an array");
        return true;
    }
    json_array_foreach(src, i, e)
        if (!json_is_object(e) || !json_is_string(json_object_get(e, "id"))) {
            snprintf(err, errlen, "baseline source %zu needs an \"id\" that is a string", i);
            return true;
        }
    return false;
}

static int metrics_check(const json_t *metrics, const json_t *ids, json_t *seen, char *err, size_t errlen);

int suite_baseline_validate(const json_t *b, char *err, size_t errlen)
{
    if (!json_is_object(b) || !ga_streq(sj_str(b, "schema", NULL), SUITE_BASELINE_SCHEMA)) {
        snprintf(err, errlen, "not a baseline: \"schema\" is not \"%s\"", SUITE_BASELINE_SCHEMA);
        return -1;
    }
    json_t *ver = json_object_get(b, "schema_version");
    if (!json_is_integer(ver) || json_integer_value(ver) != SUITE_BASELINE_SCHEMA_VERSION) {
        snprintf(err, errlen,
                 "baseline \"schema_version\" must be the integer %d (the version this gpuaccept reads)",
                 SUITE_BASELINE_SCHEMA_VERSION);
        return -1;
    }
    /* A tolerance is a percentage like every other (1e6 would pass anything, a string used to become the
     * default without a word). */
    json_t *tol = json_object_get(b, "tolerance_pct");
    if (tol && !(json_is_number(tol) && json_number_value(tol) >= 0 && json_number_value(tol) <= 100)) {
        snprintf(err, errlen, "baseline \"tolerance_pct\" must be a number from 0 to 100 (percent)");
        return -1;
    }
    if (top_fields_bad(b, err, errlen))
        return -1;
    json_t *metrics = sj_arr(b, "metrics");
    if (!metrics) {
        snprintf(err, errlen, "baseline has no \"metrics\" array");
        return -1;
    }
    json_t *ids = source_ids(b), *seen = json_object();
    int rc = fabric_bad(b, ids, err, errlen) ? -1 : metrics_check(metrics, ids, seen, err, errlen);
    json_decref(ids);
    json_decref(seen);
    return rc;
}

/* Each figure of the baseline: its fields, its sources, and given once. 0, or -1 with a message. */
static int metrics_check(const json_t *metrics, const json_t *ids, json_t *seen, char *err, size_t errlen)
{
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m) {
        const char *scope = sj_str(m, "scope", "");
        if (!sj_str(m, "program", NULL) || !sj_str(m, "name", NULL) || !sj_is_num(m, "value") ||
            !isfinite(sj_num(m, "value", NAN)) || !json_is_boolean(json_object_get(m, "higher_is_better")) ||
            !(ga_streq(scope, "gpu") || ga_streq(scope, "rank") || ga_streq(scope, "node") ||
              ga_streq(scope, "cluster"))) {
            snprintf(err, errlen,
                     "baseline metric %zu needs program, name, value, higher_is_better and scope "
                     "(gpu|rank|node|cluster)",
                     i);
            return -1;
        }
        if (metric_sources_bad(ids, m, i, err, errlen) || metric_types_bad(m, i, err, errlen) ||
            metric_repeated(seen, m, i, err, errlen))
            return -1;
    }
    return 0;
}

/* A baseline figure holds only for what it was measured under: a job of its shape (8 GPUs of one node over
 * NVLink, say), the same conditions (problem size, sweep, backend), the same profile. Only what the
 * baseline states is compared: the shipped files state the job's shape alone. true, or false and why. */
static bool baseline_holds(const json_t *baseline, const json_t *bm, const json_t *summary, char *why,
                           size_t len)
{
    json_t *want = json_object(), *have = suite_measured_under(summary, sj_str(bm, "program", ""));
    const char *keys[] = {"world_size", "node_count", "conditions"};
    for (size_t k = 0; k < 3; k++)
        if (json_object_get(bm, keys[k]))
            json_object_set(want, keys[k], json_object_get(bm, keys[k]));
    if (json_is_string(json_object_get(baseline, "profile")))
        json_object_set(want, "profile", json_object_get(baseline, "profile"));
    /* Compare only the facts the baseline states; a condition it does not name is not checked. */
    const char *const facts[] = {"profile", "world_size", "node_count", "conditions", NULL};
    json_t *have_c = json_object_get(have, "conditions"), *want_c = json_object_get(want, "conditions");
    if (json_is_object(want_c) && json_is_object(have_c)) {
        json_t *only = json_object();
        const char *key;
        json_t *v;
        json_object_foreach(want_c, key, v)
            if (json_object_get(have_c, key))
                json_object_set(only, key, json_object_get(have_c, key));
        json_object_set_new(have, "conditions", only);
    }
    for (const char *const *f = facts; *f; f++)
        if (!json_object_get(want, *f))
            json_object_del(have, *f);
    bool same = suite_comparable(want, have, NULL, why, len);
    json_decref(want);
    json_decref(have);
    return same;
}

/* Records once per program and metric that a baseline figure was not applied, and why. */
static void note_not_comparable(json_t *list, const json_t *bm, const char *why)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
        if (ga_streq(sj_str(e, "program", NULL), sj_str(bm, "program", NULL)) &&
            ga_streq(sj_str(e, "name", NULL), sj_str(bm, "name", NULL)))
            return;
    json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "program", sj_str(bm, "program", "?"), "name",
                                          sj_str(bm, "name", "?"), "why", why));
}

/* One warning per program whose baseline figures could not be applied: a baseline that checked nothing must
 * not read as a pass. */
static void warn_not_comparable(json_t *findings, const json_t *list)
{
    size_t i, j;
    json_t *e, *o;
    json_array_foreach(list, i, e) {
        bool seen = false;
        json_array_foreach(list, j, o)
            if (j < i && ga_streq(sj_str(o, "program", NULL), sj_str(e, "program", NULL)))
                seen = true;
        if (seen)
            continue;
        char msg[700];
        snprintf(msg, sizeof msg, "%s figures not held to the baseline: not comparable (%s)",
                 sj_str(e, "program", "?"), sj_str(e, "why", ""));
        json_array_append_new(findings,
                              json_pack("{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:s}", "program", "baseline",
                                        "severity", "warn", "code", "BASELINE_NOT_COMPARABLE", "host",
                                        "node_index", "rank", "gpu", "message", msg));
    }
}

/* The baseline's figures by "program<US>name" (new reference), in the file's order: each figure of a run
 * meets only the baseline figures of its own name, not all of them (issue 45, item 4). */
static json_t *baseline_by_name(const json_t *baseline)
{
    json_t *map = json_object(), *bm;
    size_t j;
    json_array_foreach(sj_arr(baseline, "metrics"), j, bm) {
        char key[512];
        snprintf(key, sizeof key, "%s\x1f%s", sj_str(bm, "program", ""), sj_str(bm, "name", ""));
        json_t *list = json_object_get(map, key);
        if (!list) {
            list = json_array(); /* a key cut short may end inside a character: jansson need not check it */
            json_object_set_new_nocheck(map, key, list);
        }
        json_array_append(list, bm);
    }
    return map;
}

/* The BASELINE_REGRESSION finding of metric m against the baseline's figure bm. */
static json_t *regression_finding(const json_t *m, const json_t *bm, double value, double base, bool hib,
                                  double tol_pct)
{
    char where[160] = "", msg[600], gpu[96];
    const char *host = sj_str(m, "host", NULL), *program = sj_str(m, "program", ""),
               *name = sj_str(m, "name", "");
    suite_gpu_name(m, gpu, sizeof gpu);
    if (host && gpu[0])
        snprintf(where, sizeof where, " on %s %s", host, gpu);
    else if (host && sj_int(m, "rank", -1) >= 0)
        snprintf(where, sizeof where, " on %s rank %lld", host, sj_int(m, "rank", -1));
    else if (host)
        snprintf(where, sizeof where, " on %s", host);
    const char *unit = sj_str(m, "unit", "");
    /* "regression": "warn": a figure its file says cannot fail a node (an estimate for a path never measured
     * on that SKU) */
    bool estimate = ga_streq(sj_str(bm, "regression", "fail"), "warn");
    snprintf(msg, sizeof msg, "%s %s %.4g %s%s is %s the baseline %.4g %s by %.1f%% (tolerance %.4g%%%s%s)%s",
             program, name, value, unit, where, hib ? "below" : "above", base, unit,
             base != 0 ? fabs(value - base) / fabs(base) * 100 : 0.0, tol_pct,
             sj_str(bm, "source", NULL) ? "; source " : "", sj_str(bm, "source", ""),
             estimate ? "; the baseline figure is an estimate, not measured: a warning" : "");
    json_t *f = json_pack(
        "{s:s, s:s, s:s, s:O, s:O, s:O, s:O, s:s}", "program", "baseline", "severity",
        estimate ? "warn" : "fail", "code", "BASELINE_REGRESSION", "host",
        OR_NULL(json_object_get(m, "host")), "node_index", OR_NULL(json_object_get(m, "node_index")), "rank",
        OR_NULL(json_object_get(m, "rank")), "gpu", OR_NULL(json_object_get(m, "gpu")), "message", msg);
    if (json_is_string(json_object_get(m, "pci_bus_id")))
        json_object_set(f, "pci_bus_id", json_object_get(m, "pci_bus_id"));
    return f;
}

int suite_baseline_apply(json_t *summary, const json_t *baseline, const char *source, double tolerance_pct)
{
    if (tolerance_pct < 0)
        tolerance_pct = sj_num(baseline, "tolerance_pct", SUITE_BASELINE_DEFAULT_TOLERANCE_PCT);
    json_t *findings = sj_arr(summary, "findings"), *apart = json_array();
    json_t *by_name = baseline_by_name(baseline);
    int checked = 0, regressions = 0;
    size_t i, j;
    json_t *m, *bm;
    json_array_foreach(sj_arr(summary, "metrics"), i, m) {
        const char *program = sj_str(m, "program", ""), *name = sj_str(m, "name", "");
        char key[512];
        snprintf(key, sizeof key, "%s\x1f%s", program, name);
        json_array_foreach(json_object_get(by_name, key), j, bm) {
            if (!ga_streq(sj_str(bm, "program", NULL), program) ||
                !ga_streq(sj_str(bm, "name", NULL), name) ||
                !ga_streq(sj_str(bm, "scope", NULL), suite_metric_scope(m)) || !sj_is_num(m, "value"))
                continue;
            char why[600];
            if (!baseline_holds(baseline, bm, summary, why, sizeof why)) {
                note_not_comparable(apart, bm, why);
                continue;
            }
            /* A figure's own tolerance (a noisy one gets a wider band) before the run's and the file's. */
            double tol_pct = sj_is_num(bm, "tolerance_pct") ? sj_num(bm, "tolerance_pct", 0) : tolerance_pct;
            double tol = tol_pct / 100.0;
            double value = sj_num(m, "value", 0), base = sj_num(bm, "value", 0);
            bool hib = sj_bool(bm, "higher_is_better", true);
            double limit = hib ? base * (1 - tol) : base * (1 + tol);
            checked++;
            if (hib ? value >= limit : value <= limit)
                continue;
            regressions++;
            json_array_append_new(findings, regression_finding(m, bm, value, base, hib, tol_pct));
        }
    }
    json_decref(by_name);
    warn_not_comparable(findings, apart);
    json_object_set_new(summary, "baseline",
                        json_pack("{s:s, s:s?, s:f, s:i, s:i, s:o}", "file", source ? source : "", "model",
                                  sj_str(baseline, "model", NULL), "tolerance_pct", tolerance_pct, "checked",
                                  checked, "regressions", regressions, "not_comparable", apart));
    return regressions;
}

/* Per (program, name, scope): the values of a summary's metrics, grouped. */
/* The summary's numeric metrics grouped by program, name and scope (groups by key, order: the keys in the
 * order first seen), each group with its values. */
static void group_metrics(const json_t *summary, json_t *groups, json_t *order)
{
    size_t i;
    json_t *m;
    json_array_foreach(sj_arr(summary, "metrics"), i, m) {
        if (!sj_is_num(m, "value"))
            continue;
        char key[400];
        snprintf(key, sizeof key, "%s\t%s\t%s", sj_str(m, "program", "?"), sj_str(m, "name", "?"),
                 suite_metric_scope(m));
        json_t *g = json_object_get(groups, key);
        if (!g) {
            g = json_pack("{s:O, s:O, s:s, s:O, s:O, s:[]}", "program",
                          OR_NULL(json_object_get(m, "program")), "name", OR_NULL(json_object_get(m, "name")),
                          "scope", suite_metric_scope(m), "unit", OR_NULL(json_object_get(m, "unit")),
                          "higher_is_better", json_boolean(sj_bool(m, "higher_is_better", true)), "values");
            if (!g)
                continue;
            json_object_set_new(groups, key, g);
            json_array_append_new(order, json_string(key));
        }
        json_array_append_new(json_object_get(g, "values"), json_real(sj_num(m, "value", 0)));
    }
}

/* The baseline metric of group g: the median of its values, with what it was measured under. */
static json_t *baseline_metric(const json_t *summary, const json_t *g)
{
    json_t *vals = json_object_get(g, "values");
    size_t n = json_array_size(vals);
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t k = 0; k < n; k++)
        v[k] = json_number_value(json_array_get(vals, k));
    double med = ga_median(v, n);
    free(v);
    json_t *bm =
        json_pack("{s:O, s:O, s:O, s:f, s:O, s:O, s:s, s:I}", "program", json_object_get(g, "program"),
                  "name", json_object_get(g, "name"), "scope", json_object_get(g, "scope"), "value", med,
                  "unit", json_object_get(g, "unit"), "higher_is_better",
                  json_object_get(g, "higher_is_better"), "source", "site-run", "samples", (json_int_t)n);
    const json_t *step = suite_summary_step(summary, json_string_value(json_object_get(g, "program")));
    /* Every figure depends on what it was measured under (problem size, backend). */
    if (json_is_object(json_object_get(step, "conditions")))
        json_object_set(bm, "conditions", json_object_get(step, "conditions"));
    /* A job-wide figure depends on the job's shape: it holds only for the same shape. */
    if (ga_streq(json_string_value(json_object_get(g, "scope")), "cluster")) {
        if (sj_int(step, "world_size", -1) > 0)
            json_object_set_new(bm, "world_size", json_integer(sj_int(step, "world_size", 0)));
        if (sj_int(step, "node_count", -1) > 0)
            json_object_set_new(bm, "node_count", json_integer(sj_int(step, "node_count", 0)));
    }
    return bm;
}

json_t *suite_baseline_from_summary(const json_t *summary, double tolerance_pct, int force, char *err,
                                    size_t errlen)
{
    if (!ga_streq(sj_str(summary, "schema", NULL), SUITE_SUMMARY_SCHEMA)) {
        snprintf(err, errlen, "not a gpuaccept summary (schema \"%s\", want \"%s\")",
                 sj_str(summary, "schema", "missing"), SUITE_SUMMARY_SCHEMA);
        return NULL;
    }
    const char *result = sj_str(json_object_get(summary, "verdict"), "result", "fail");
    if (!force && !ga_streq(result, "pass")) {
        snprintf(err, errlen,
                 "the run failed (verdict %s): a baseline comes from a healthy run (--force to "
                 "override)",
                 result);
        return NULL;
    }
    json_t *groups = json_object(), *order = json_array();
    group_metrics(summary, groups, order);
    size_t i;
    if (json_array_size(order) == 0) {
        json_decref(groups);
        json_decref(order);
        snprintf(err, errlen, "the summary has no metrics to make a baseline of");
        return NULL;
    }
    const char *model = sj_str(summary, "gpu_model", NULL);
    char created[32], note[200];
    ga_utc_timestamp(created, sizeof created);
    snprintf(note, sizeof note, "gpuaccept run of %s: medians over the run's nodes and GPUs",
             sj_str(summary, "created_utc", "?"));
    json_t *b = json_pack(
        "{s:s, s:i, s:s, s:s, s:s, s:f, s:[{s:s, s:s, s:s}], s:[]}", "schema", SUITE_BASELINE_SCHEMA,
        "schema_version", SUITE_BASELINE_SCHEMA_VERSION, "model", model ? model : "host (no GPU)",
        "created_utc", created, "description", note, "tolerance_pct",
        tolerance_pct >= 0 ? tolerance_pct : SUITE_BASELINE_DEFAULT_TOLERANCE_PCT, "sources", "id",
        "site-run", "title", "Acceptance run of this site", "note", note, "metrics");
    json_object_set_new(b, "match", model ? json_pack("[s]", model) : json_array());
    const char *profile = sj_str(json_object_get(summary, "profile"), "name", NULL);
    if (profile) /* a quick run's figures are no floor for a standard run's, nor the reverse */
        json_object_set_new(b, "profile", json_string(profile));
    json_t *key;
    json_array_foreach(order, i, key) {
        json_t *bm = baseline_metric(summary, json_object_get(groups, json_string_value(key)));
        if (!bm)
            continue;
        json_array_append_new(json_object_get(b, "metrics"), bm);
    }
    json_decref(groups);
    json_decref(order);
    return b;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int suite_baseline_find(const char *dir, const char *gpu_model, char *path, size_t len)
{
    if (!gpu_model || !*gpu_model)
        return -1;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < sizeof names / sizeof names[0]) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_name);
    int found = -1;
    for (size_t i = 0; i < n; i++) {
        char p[4096], err[256];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        json_t *b = found ? suite_load_json(p, err, sizeof err) : NULL;
        size_t k;
        json_t *pat;
        json_array_foreach(sj_arr(b, "match"), k, pat) {
            const char *s = json_string_value(pat);
            if (found && s && strcasecmp(gpu_model, s) == 0) {
                snprintf(path, len, "%s", p);
                found = 0;
            }
        }
        json_decref(b);
        free(names[i]);
    }
    return found;
}

/* Shipped baselines: $GPUACCEPT_BASELINE_DIR, the install tree beside the executable, the source tree. */
int suite_baseline_find_shipped(const char *model, char *path, size_t len)
{
    char dirs[3][4096];
    size_t n = 0;
    const char *env = getenv("GPUACCEPT_BASELINE_DIR");
    if (env && *env)
        snprintf(dirs[n++], sizeof dirs[0], "%s", env);
    char self[4096];
    if (suite_self_dir(self, sizeof self) == 0)
        snprintf(dirs[n++], sizeof dirs[0], "%s/../share/gpuaccept/baselines", self);
#ifdef GA_SOURCE_BASELINE_DIR
    snprintf(dirs[n++], sizeof dirs[0], "%s", GA_SOURCE_BASELINE_DIR);
#endif
    for (size_t i = 0; i < n; i++)
        if (suite_baseline_find(dirs[i], model, path, len) == 0)
            return 0;
    return -1;
}
