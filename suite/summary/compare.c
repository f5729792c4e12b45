#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comparable.h"
#include "ga_str.h"
#include "merge.h"
#include "suite_util.h"
#include "report_check.h"

/* The metrics of a summary (already tagged with their program) or of one report (tagged here), as a new
 * array; the hosts it covers go to hosts. */
static json_t *metrics_of(const json_t *run, const char *which, json_t *hosts, char *err, size_t errlen)
{
    const char *schema = sj_str(run, "schema", "");
    bool summary = ga_streq(schema, SUITE_SUMMARY_SCHEMA);
    char why[400];
    if (!summary && !ga_streq(schema, SUITE_REPORT_SCHEMA)) {
        snprintf(err, errlen, "%s is neither a gpuaccept summary nor a report (schema \"%s\")", which,
                 schema);
        return NULL;
    }
    if (summary && (!json_is_integer(json_object_get(run, "schema_version")) ||
                    sj_int(run, "schema_version", 0) != SUITE_SUMMARY_SCHEMA_VERSION)) {
        snprintf(err, errlen, "%s is not a version %d summary", which, SUITE_SUMMARY_SCHEMA_VERSION);
        return NULL;
    }
    if (!summary && suite_report_check(run, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", which, why);
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    json_t *m, *n;
    json_array_foreach(sj_arr(run, "metrics"), i, m) {
        /* A metric compare cannot key, read or direct is refused, never skipped or given a default
         * direction: either could turn a regression into an improvement. */
        json_t *v = json_object_get(m, "value");
        if (!json_is_object(m) || !sj_str(m, "name", NULL) || (summary && !sj_str(m, "program", NULL)) ||
            !(json_is_number(v) || json_is_null(v)) ||
            !json_is_boolean(json_object_get(m, "higher_is_better"))) {
            snprintf(err, errlen, "%s metric %zu needs a name%s, a value (or null) and higher_is_better",
                     which, i, summary ? ", a program" : "");
            json_decref(out);
            return NULL;
        }
        json_t *c = json_deep_copy(m);
        if (!summary)
            json_object_set_new(c, "program", json_string(sj_str(run, "program", "?")));
        json_array_append_new(out, c);
    }
    json_array_foreach(sj_arr(run, "nodes"), i, n)
        if (sj_str(n, "host", NULL))
            json_object_set_new(hosts, sj_str(n, "host", NULL), json_true());
    if (json_array_size(out) == 0) {
        snprintf(err, errlen, "%s has no metric to compare", which);
        json_decref(out);
        return NULL;
    }
    return out;
}

static void metric_key(const json_t *m, char *key, size_t len)
{
    const char *host = sj_str(m, "host", "*");
    long long gpu = sj_int(m, "gpu", -1), rank = sj_int(m, "rank", -1);
    if (gpu >= 0)
        snprintf(key, len, "%s %s %s gpu %lld", sj_str(m, "program", "?"), sj_str(m, "name", "?"), host, gpu);
    else if (rank >= 0)
        snprintf(key, len, "%s %s %s rank %lld", sj_str(m, "program", "?"), sj_str(m, "name", "?"), host,
                 rank);
    else
        snprintf(key, len, "%s %s %s", sj_str(m, "program", "?"), sj_str(m, "name", "?"), host);
}

/* The metrics by key. A key twice in one run is refused: which of its values is the run's figure? Keeping
 * one would let the other hide a regression (issue 27). NULL with a message. */
static json_t *index_by_key(const json_t *metrics, const char *which, char *err, size_t errlen)
{
    json_t *idx = json_object();
    size_t i;
    json_t *m;
    char key[512];
    json_array_foreach(metrics, i, m) {
        metric_key(m, key, sizeof key);
        if (json_object_get(idx, key)) {
            snprintf(err, errlen, "%s has the metric \"%s\" twice: it cannot be compared", which, key);
            json_decref(idx);
            return NULL;
        }
        json_object_set(idx, key, m);
    }
    return idx;
}

/* Whether every metric of both runs is better the same way in each: one that turned around would make a
 * regression read as an improvement. */
static bool directions_agree(json_t *old_idx, json_t *new_idx, char *err, size_t errlen)
{
    const char *key;
    json_t *m;
    json_object_foreach(old_idx, key, m) {
        json_t *nm = json_object_get(new_idx, key);
        if (nm && sj_bool(nm, "higher_is_better", true) != sj_bool(m, "higher_is_better", true)) {
            snprintf(err, errlen, "OLD and NEW disagree on which way \"%s\" is better", key);
            return false;
        }
    }
    return true;
}

static json_t *hosts_only_in(const json_t *a, const json_t *b)
{
    json_t *out = json_array();
    const char *host;
    json_t *v;
    json_object_foreach((json_t *)a, host, v)
        if (!json_object_get(b, host))
            json_array_append_new(out, json_string(host));
    return out;
}

static void add_unique(json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
        if (ga_streq(json_string_value(v), s))
            return;
    json_array_append_new(arr, json_string(s));
}

/* Why a program's figures of the two runs cannot be compared, "" when they can: cached in whys. */
static const char *program_why(json_t *whys, const json_t *old_run, const json_t *new_run,
                               const char *program)
{
    json_t *w = json_object_get(whys, program);
    if (!w) {
        json_t *o = suite_measured_under(old_run, program), *n = suite_measured_under(new_run, program);
        char why[600];
        suite_comparable(o, n, NULL, why, sizeof why);
        w = json_string(why);
        json_object_set_new(whys, program, w);
        json_decref(o);
        json_decref(n);
    }
    return json_string_value(w);
}

/* "gemm_flops: world_size 2 -> 4; ..." for each program that is not comparable. */
static void whys_text(const json_t *whys, char *out, size_t len)
{
    sbuf b;
    sbuf_init(&b);
    const char *program;
    json_t *w;
    json_object_foreach((json_t *)whys, program, w)
        if (*json_string_value(w))
            sbuf_printf(&b, "%s%s: %s", b.len ? "; " : "", program, json_string_value(w));
    snprintf(out, len, "%s", sbuf_str(&b));
    sbuf_free(&b);
}

/* The reasons for a one-line refusal (the caller's error holds 512 bytes, cmd_compare.c): whole while they
 * fit, one cut between words with "...", the rest counted, so the line is never cut mid-word and its advice
 * (--force) is never lost (issue 41, observation 10). */
static void whys_short(const json_t *whys, char *out, size_t len)
{
    enum { MIN_CUT = 60 };
    size_t at = 0, shown = 0, total = 0;
    const char *program;
    json_t *w;
    out[0] = '\0';
    json_object_foreach((json_t *)whys, program, w)
        total += *json_string_value(w) ? 1 : 0;
    json_object_foreach((json_t *)whys, program, w) {
        if (!*json_string_value(w))
            continue;
        char one[1200], cut[400];
        snprintf(one, sizeof one, "%s: %s", program, json_string_value(w));
        size_t room = len > at + 48 ? len - at - 48 : 0; /* 48: "; and N more reasons" and the ellipsis */
        if (strlen(one) > room && room < MIN_CUT)
            break;
        ga_str_clip(cut, sizeof cut, one, room < sizeof cut - 4 ? room : sizeof cut - 4);
        int n = snprintf(out + at, len - at, "%s%s", shown ? "; " : "", cut);
        at += n > 0 && (size_t)n < len - at ? (size_t)n : 0;
        shown++;
        if (strcmp(cut, one) != 0)
            break;
    }
    if (total > shown)
        snprintf(out + at, len - at, "; and %zu more reason%s", total - shown, total - shown == 1 ? "" : "s");
}

/* One run's side of a comparison: its metrics, their index by key and its hosts. */
typedef struct {
    json_t *metrics, *idx, *hosts;
} compare_side;

static void side_free(compare_side *s)
{
    json_decref(s->metrics);
    json_decref(s->idx);
    json_decref(s->hosts);
}

/* Both sides, checked to be of one kind and to agree on every metric's direction; false with err otherwise.
 */
static bool load_sides(const json_t *old_run, const json_t *new_run, compare_side *old_s, compare_side *new_s,
                       char *err, size_t errlen)
{
    *old_s = (compare_side){NULL, NULL, json_object()};
    *new_s = (compare_side){NULL, NULL, json_object()};
    old_s->metrics = metrics_of(old_run, "OLD", old_s->hosts, err, errlen);
    new_s->metrics = old_s->metrics ? metrics_of(new_run, "NEW", new_s->hosts, err, errlen) : NULL;
    if (!old_s->metrics || !new_s->metrics)
        return false;
    /* Two summaries, or two reports of one program: anything else compares nothing with nothing. */
    if (!ga_streq(sj_str(old_run, "schema", ""), sj_str(new_run, "schema", "")) ||
        !ga_streq(sj_str(old_run, "program", ""), sj_str(new_run, "program", ""))) {
        snprintf(err, errlen, "OLD and NEW are not of one kind (%s %s, %s %s)", sj_str(old_run, "schema", ""),
                 sj_str(old_run, "program", ""), sj_str(new_run, "schema", ""),
                 sj_str(new_run, "program", ""));
        return false;
    }
    old_s->idx = index_by_key(old_s->metrics, "OLD", err, errlen);
    new_s->idx = old_s->idx ? index_by_key(new_s->metrics, "NEW", err, errlen) : NULL;
    return new_s->idx && directions_agree(old_s->idx, new_s->idx, err, errlen);
}

/* The rows and counts of a comparison as it is built. */
typedef struct {
    json_t *rows, *only_old, *only_new, *regressed, *whys;
    int regressions, improvements, not_comparable, comparable;
    size_t missing_old;
} compare_tally;

static void tally_free(compare_tally *t)
{
    json_decref(t->rows);
    json_decref(t->only_old);
    json_decref(t->only_new);
    json_decref(t->regressed);
    json_decref(t->whys);
}

/* The row of metric m of OLD against nm of NEW (why: "" when their program's figures are comparable), counted
 * into t. */
static json_t *compare_row(const json_t *m, const json_t *nm, const char *key, const char *why,
                           double tol_pct, bool force, compare_tally *t)
{
    double o = sj_num(m, "value", NAN), n = sj_num(nm, "value", NAN);
    bool hib = sj_bool(nm, "higher_is_better", true); /* the same in OLD: directions_agree */
    double change = (isfinite(o) && isfinite(n) && o != 0) ? (n - o) / fabs(o) * 100 : NAN;
    /* A change of the metric's good direction is an improvement, of its bad direction a regression. */
    double worse = hib ? -change : change;
    /* A figure OLD had and NEW lost (null, not finite) is a regression: nothing shows it held. */
    bool lost = isfinite(o) && !isfinite(n);
    /* Figures measured under other conditions are shown, never counted (unless --force). */
    bool counted = !*why || force;
    bool regression = counted && (lost || (isfinite(worse) && worse > tol_pct));
    bool improvement = counted && isfinite(worse) && -worse > tol_pct;
    t->not_comparable += *why != 0;
    t->comparable += counted;
    t->regressions += regression;
    t->improvements += improvement;
    if (regression && sj_str(nm, "host", NULL))
        add_unique(t->regressed, sj_str(nm, "host", NULL));
    json_t *row = json_object();
    json_object_set_new(row, "key", json_string(key));
    const char *fields[] = {"program", "name", "host", "gpu", "rank", "unit"};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        json_t *v = json_object_get(nm, fields[k]);
        json_object_set(row, fields[k], v ? v : json_null());
    }
    json_object_set_new(row, "higher_is_better", json_boolean(hib));
    json_object_set_new(row, "old", isfinite(o) ? json_real(o) : json_null());
    json_object_set_new(row, "new", isfinite(n) ? json_real(n) : json_null());
    json_object_set_new(row, "change_pct", isfinite(change) ? json_real(change) : json_null());
    json_object_set_new(row, "regression", json_boolean(regression));
    json_object_set_new(row, "improvement", json_boolean(improvement));
    json_object_set_new(row, "comparable", json_boolean(!*why));
    json_object_set_new(row, "not_comparable_why", *why ? json_string(why) : json_null());
    return row;
}

/* Every metric of OLD against NEW's, and the keys each side has alone. */
static void compare_metrics(const json_t *old_run, const json_t *new_run, const compare_side *old_s,
                            const compare_side *new_s, double tol_pct, bool force, compare_tally *t)
{
    size_t i;
    json_t *m;
    char key[512];
    json_array_foreach(old_s->metrics, i, m) {
        metric_key(m, key, sizeof key);
        json_t *nm = json_object_get(new_s->idx, key);
        const char *why = program_why(t->whys, old_run, new_run, sj_str(m, "program", "?"));
        if (!nm) {
            json_array_append_new(t->only_old, json_string(key));
            t->missing_old += !*why || force; /* a figure another sweep or profile does not have is no loss */
            continue;
        }
        json_array_append_new(t->rows, compare_row(m, nm, key, why, tol_pct, force, t));
    }
    json_array_foreach(new_s->metrics, i, m) {
        metric_key(m, key, sizeof key);
        if (!json_object_get(old_s->idx, key))
            json_array_append_new(t->only_new, json_string(key));
    }
}

json_t *suite_compare(const json_t *old_run, const json_t *new_run, double tol_pct, bool force, char *err,
                      size_t errlen)
{
    compare_side old_s, new_s;
    if (!load_sides(old_run, new_run, &old_s, &new_s, err, errlen)) {
        side_free(&old_s);
        side_free(&new_s);
        return NULL;
    }
    compare_tally t = {json_array(), json_array(), json_array(), json_array(), json_object(), 0, 0, 0, 0, 0};
    compare_metrics(old_run, new_run, &old_s, &new_s, tol_pct, force, &t);
    json_t *gone_nodes = hosts_only_in(old_s.hosts, new_s.hosts);
    /* Metrics or nodes of OLD that NEW does not have are checks NEW did not pass: they count against it. */
    size_t missing = t.missing_old + json_array_size(gone_nodes);
    char why_all[1200], why_short[400];
    whys_text(t.whys, why_all, sizeof why_all);
    whys_short(t.whys, why_short, sizeof why_short);
    json_t *cmp = NULL;
    if (json_array_size(t.rows) == 0)
        snprintf(err, errlen, "OLD and NEW have no metric in common");
    else if (t.comparable == 0)
        snprintf(err, errlen, "no metric of OLD and NEW is comparable (%s); --force compares them anyway",
                 why_short);
    else {
        cmp =
            json_pack("{s:s, s:i, s:f, s:i, s:i, s:i, s:i, s:i, s:b}", "schema", "gpuaccept-compare",
                      "schema_version", 1, "tolerance_pct", tol_pct, "compared", (int)json_array_size(t.rows),
                      "regressions", t.regressions, "improvements", t.improvements, "missing_in_new",
                      (int)missing, "not_comparable", t.not_comparable, "forced", force);
        json_object_set_new(cmp, "not_comparable_why", *why_all ? json_string(why_all) : json_null());
        json_object_set_new(cmp, "old_created_utc", json_string(sj_str(old_run, "created_utc", "?")));
        json_object_set_new(cmp, "new_created_utc", json_string(sj_str(new_run, "created_utc", "?")));
        json_object_set(cmp, "regressed_nodes", t.regressed);
        json_object_set(cmp, "nodes_only_old", gone_nodes);
        json_object_set_new(cmp, "nodes_only_new", hosts_only_in(new_s.hosts, old_s.hosts));
        json_object_set(cmp, "only_old", t.only_old);
        json_object_set(cmp, "only_new", t.only_new);
        json_object_set(cmp, "rows", t.rows);
    }
    json_decref(gone_nodes);
    tally_free(&t);
    side_free(&old_s);
    side_free(&new_s);
    return cmp;
}

static void print_list(FILE *out, const char *title, const json_t *arr)
{
    if (json_array_size(arr) == 0)
        return;
    fprintf(out, "%s (%zu):", title, json_array_size(arr));
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (i == 20) {
            fprintf(out, " ... and %zu more", json_array_size(arr) - 20);
            break;
        }
        fprintf(out, "%s %s", i ? "," : "", json_string_value(v));
    }
    fprintf(out, "\n");
}

void suite_compare_print(const json_t *cmp, FILE *out, bool all)
{
    double tol = sj_num(cmp, "tolerance_pct", 0);
    fprintf(out, "gpuaccept compare: %s -> %s, tolerance %.4g%%\n", sj_str(cmp, "old_created_utc", "?"),
            sj_str(cmp, "new_created_utc", "?"), tol);
    fprintf(out, "%-58s %12s %12s %-9s %9s  %s\n", "metric", "old", "new", "unit", "change", "");
    size_t i;
    json_t *r;
    json_array_foreach(sj_arr(cmp, "rows"), i, r) {
        bool reg = sj_bool(r, "regression", false), imp = sj_bool(r, "improvement", false);
        bool apart = !sj_bool(r, "comparable", true);
        if (!all && !reg && !imp && !apart)
            continue;
        char change[32] = "n/a";
        if (sj_is_num(r, "change_pct"))
            snprintf(change, sizeof change, "%+.1f%%", sj_num(r, "change_pct", 0));
        fprintf(out, "%-58s %12.5g %12.5g %-9s %9s  %s\n", sj_str(r, "key", "?"), sj_num(r, "old", NAN),
                sj_num(r, "new", NAN), sj_str(r, "unit", ""), change,
                reg     ? "REGRESSION"
                : imp   ? "improved"
                : apart ? "not comparable"
                        : "");
    }
    long long compared = sj_int(cmp, "compared", 0), regs = sj_int(cmp, "regressions", 0),
              imps = sj_int(cmp, "improvements", 0), apart_n = sj_int(cmp, "not_comparable", 0);
    fprintf(
        out,
        "%lld metric%s compared: %lld regression%s, %lld improvement%s beyond %.4g%%; %zu only in OLD, %zu "
        "only in NEW\n",
        compared, compared == 1 ? "" : "s", regs, regs == 1 ? "" : "s", imps, imps == 1 ? "" : "s", tol,
        json_array_size(sj_arr(cmp, "only_old")), json_array_size(sj_arr(cmp, "only_new")));
    if (apart_n > 0)
        fprintf(out, "%lld metric%s not comparable%s: %s\n", apart_n, apart_n == 1 ? "" : "s",
                sj_bool(cmp, "forced", false) ? " (compared anyway: --force)" : ", not counted",
                sj_str(cmp, "not_comparable_why", ""));
    if (sj_int(cmp, "missing_in_new", 0) > 0)
        fprintf(out, "NEW lacks %lld metrics or nodes that OLD has: not a pass\n",
                sj_int(cmp, "missing_in_new", 0));
    print_list(out, "regressed nodes", sj_arr(cmp, "regressed_nodes"));
    print_list(out, "nodes only in OLD", sj_arr(cmp, "nodes_only_old"));
    print_list(out, "nodes only in NEW", sj_arr(cmp, "nodes_only_new"));
    print_list(out, "metrics only in OLD", sj_arr(cmp, "only_old"));
    print_list(out, "metrics only in NEW", sj_arr(cmp, "only_new"));
}
