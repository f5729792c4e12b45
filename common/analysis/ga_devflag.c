#include "ga_devflag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_outlier.h"
#include "ga_stats.h"
#include "ga_text.h"

static bool same_group(const ga_dev_sample *a, const ga_dev_sample *b)
{
    return strcmp(a->group ? a->group : "", b->group ? b->group : "") == 0;
}

/* Judges the samples of group g (those of the same model as s[g]) and marks them done. -1 when out of memory.
 */
static int flag_group(const ga_dev_sample *s, int n, int g, const ga_dev_policy *p, int *done, double *vals,
                      ga_outlier_verdict *ov, ga_dev_verdict *out)
{
    const double **lists = malloc((size_t)(n > 0 ? n : 1) * sizeof *lists);
    int *counts = malloc((size_t)(n > 0 ? n : 1) * sizeof *counts);
    if (!lists || !counts) {
        free(lists);
        free(counts);
        return -1;
    }
    for (int j = 0; j < n; j++) {
        bool member = !done[j] && same_group(&s[g], &s[j]) && s[j].value >= 0;
        vals[j] = member ? s[j].value : -1;
        lists[j] = member ? s[j].measurements : NULL;
        counts[j] = member ? s[j].measured : 0;
    }
    /* the group's repeated measurements say how much one GPU's figure moves between passes; noise widens the
     * bound only up to GA_OUTLIER_FAR, and a call needs more than the sample's own scatter past its bound */
    ga_outlier_rule rule = {p->tolerance, GA_HIGHER_IS_BETTER, ga_outlier_repeat_spread(lists, counts, n),
                            GA_OUTLIER_FAR};
    int rc = ga_outlier_judge(vals, n, &rule, ov) < 0 ? -1 : 0;
    if (rc == 0)
        ga_outlier_confirm(ov, vals, lists, counts, n, &rule);
    free(lists);
    free(counts);
    if (rc != 0)
        return -1;
    double med = -1;
    for (int j = 0; j < n; j++)
        if (vals[j] >= 0)
            med = ov[j].median;
    for (int j = 0; j < n; j++) {
        if (done[j] || !same_group(&s[g], &s[j]))
            continue;
        done[j] = 1;
        ga_dev_verdict *v = &out[j];
        bool measured = s[j].value >= 0;
        *v = (ga_dev_verdict){.group_median = med, .other = -1};
        v->efficiency = measured && s[j].peak > 0 ? s[j].value / s[j].peak : -1;
        v->below_median = measured && ov[j].call == GA_OUTLIER_WORSE;
        v->differs = measured && ov[j].call == GA_OUTLIER_PAIR_DIFFERS;
        v->screened = measured && ov[j].screened;
        v->other = v->differs ? ov[j].other : -1;
        v->bound = measured && ov[j].members > 2 ? ov[j].bound : 0;
        v->spread = ov[j].spread > rule.noise ? ov[j].spread : rule.noise;
        v->noisy = measured && ov[j].noisy;
        v->unconfirmed = measured && ov[j].unconfirmed;
        v->own_noise = ov[j].own_noise;
        v->below_peak = v->efficiency >= 0 && p->min_efficiency > 0 && v->efficiency < p->min_efficiency;
    }
    return 0;
}

double ga_dev_flag(const ga_dev_sample *s, int n, const ga_dev_policy *p, ga_dev_verdict *out)
{
    double *vals = malloc((size_t)(n > 0 ? n : 1) * sizeof *vals);
    int *done = calloc((size_t)(n > 0 ? n : 1), sizeof *done);
    ga_outlier_verdict *ov = malloc((size_t)(n > 0 ? n : 1) * sizeof *ov);
    double all = -2;
    /* Groups in order of first appearance: one pass per group, which is few (one model per cluster, usually).
     */
    for (int i = 0; vals && done && ov && i < n; i++)
        if (!done[i] && flag_group(s, n, i, p, done, vals, ov, out) != 0)
            goto out;
    if (vals && done && ov) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (s[i].value >= 0)
                vals[m++] = s[i].value;
        all = m ? ga_median(vals, (size_t)m) : -1;
    }
out:
    free(vals);
    free(done);
    free(ov);
    return all;
}

bool ga_dev_any_suspect(const ga_dev_verdict *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i].below_median || v[i].below_peak || v[i].differs || v[i].screened)
            return true;
    return false;
}

static void describe(const ga_dev_sample *x, char *who, size_t len)
{
    if (x->gpu >= 0)
        snprintf(who, len, "node %d (%s) rank %d GPU %d", x->node_index, x->host, x->rank, x->gpu);
    else
        snprintf(who, len, "node %d (%s) rank %d", x->node_index, x->host, x->rank);
}

/* " (best of 3)" when it was measured more than once. */
static const char *best_of(const ga_dev_sample *x, char *buf, size_t len)
{
    buf[0] = '\0';
    if (x->measured > 1)
        snprintf(buf, len, " (best of %d)", x->measured);
    return buf;
}

/* The warning naming both samples of a group of two that differ, i the lower one. */
static void add_differ(ga_findings *f, const ga_dev_labels *l, const ga_dev_sample *s,
                       const ga_dev_verdict *v, int i, const ga_dev_policy *p)
{
    const ga_dev_sample *lo = &s[i], *hi = &s[v[i].other];
    char a[160], b[160], ba[32], bb[32];
    describe(lo, a, sizeof a);
    describe(hi, b, sizeof b);
    bool same_host = strcmp(lo->host, hi->host) == 0;
    ga_where w = {same_host ? lo->host : NULL, same_host ? lo->node_index : -1, -1, -1, NULL};
    ga_findings_add(f, GA_SEV_WARN, l->code_differ, w,
                    "the two %s of model %s differ: %s has %s %.4g %s%s, %.1f%% below %s with %.4g %s%s "
                    "(tolerance %.0f%%); two cannot say which one is slow",
                    lo->gpu >= 0 ? "GPUs" : "ranks", lo->group ? lo->group : "?", a, l->metric, lo->value,
                    l->unit, best_of(lo, ba, sizeof ba), 100.0 * (1.0 - lo->value / hi->value), b, hi->value,
                    l->unit, best_of(hi, bb, sizeof bb), 100.0 * p->tolerance);
}

/* The warnings of a verdict the noise limited, so that it is never a silent pass: the sample's own figures
 * scatter across its bound (not named), or it is below the median by more than the tolerance and the noise
 * alone excused it (not judged: "not covered"). One warning per model for the latter, at its first sample so
 * marked, counting the others. */
static void add_unjudged(ga_findings *f, const ga_dev_labels *l, const ga_dev_sample *s,
                         const ga_dev_verdict *v, int n, int i, const ga_dev_policy *p)
{
    ga_where w = {s[i].host, s[i].node_index, s[i].rank, s[i].gpu, s[i].pci_bus_id};
    char who[160], best[32];
    describe(&s[i], who, sizeof who);
    if (v[i].unconfirmed)
        ga_findings_add(
            f, GA_SEV_WARN, l->code_noisy, w,
            "%s: %s %.4g %s%s is %.1f%% below the median %.4g, past its bound %.4g by less than its "
            "own measurements' noise %.1f%%: not named, and not shown healthy",
            who, l->metric, s[i].value, l->unit, best_of(&s[i], best, sizeof best),
            100.0 * (1.0 - s[i].value / v[i].group_median), v[i].group_median, v[i].bound,
            100.0 * v[i].own_noise);
    bool first = v[i].noisy;
    int more = 0;
    for (int j = 0; j < n; j++)
        if (j != i && v[j].noisy && strcmp(s[j].group ? s[j].group : "", s[i].group ? s[i].group : "") == 0) {
            first = first && j > i;
            more++;
        }
    if (first)
        ga_findings_add(
            f, GA_SEV_WARN, l->code_noisy, w,
            "%s: %s %.4g %s%s is %.1f%% below the median %.4g of its model (%s), beyond the "
            "tolerance %.0f%% but inside the noise (%.1f%%), which is too wide to judge it: not "
            "covered (%d more of the model likewise; %.0f%% below or more is named however noisy)",
            who, l->metric, s[i].value, l->unit, best_of(&s[i], best, sizeof best),
            100.0 * (1.0 - s[i].value / v[i].group_median), v[i].group_median, s[i].group ? s[i].group : "?",
            100.0 * p->tolerance, 100.0 * v[i].spread, more,
            100.0 * (1.0 - (1.0 - p->tolerance) / GA_OUTLIER_FAR));
}

int ga_dev_add_findings(ga_findings *f, const ga_dev_labels *l, const ga_dev_sample *s,
                        const ga_dev_verdict *v, int n, const ga_dev_policy *p)
{
    int flagged = 0;
    for (int i = 0; i < n; i++) {
        ga_where w = {s[i].host, s[i].node_index, s[i].rank, s[i].gpu, s[i].pci_bus_id};
        char who[160], best[32];
        describe(&s[i], who, sizeof who);
        if (v[i].below_median)
            ga_findings_add(f, p->relative_warn ? GA_SEV_WARN : GA_SEV_FAIL, l->code_median, w,
                            "%s: %s %.4g %s%s is %.1f%% below the median %.4g of its model (%s), below its "
                            "bound %.4g (tolerance %.0f%%, noise of the others %.1f%%)",
                            who, l->metric, s[i].value, l->unit, best_of(&s[i], best, sizeof best),
                            100.0 * (1.0 - s[i].value / v[i].group_median), v[i].group_median,
                            s[i].group ? s[i].group : "?", v[i].bound, 100.0 * p->tolerance,
                            100.0 * v[i].spread);
        add_unjudged(f, l, s, v, n, i, p);
        if (v[i].below_peak)
            ga_findings_add(f, GA_SEV_FAIL, l->code_peak, w,
                            "%s: %s %.4g %s%s is %.1f%% of the %s peak %.4g; minimum %.0f%%", who, l->metric,
                            s[i].value, l->unit, best_of(&s[i], best, sizeof best), 100.0 * v[i].efficiency,
                            s[i].group ? s[i].group : "?", s[i].peak, 100.0 * p->min_efficiency);
        if (v[i].differs &&
            (s[i].value < s[v[i].other].value || (s[i].value == s[v[i].other].value && i < v[i].other)))
            add_differ(f, l, s, v, i, p);
        flagged += v[i].below_median || v[i].below_peak;
    }
    return flagged;
}

static const ga_dev_sample *order_base;

static int cmp_device(const void *a, const void *b)
{
    const ga_dev_sample *x = &order_base[*(const int *)a], *y = &order_base[*(const int *)b];
    if (x->node_index != y->node_index)
        return x->node_index < y->node_index ? -1 : 1;
    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

void ga_dev_order(const ga_dev_sample *s, int n, int *idx)
{
    for (int i = 0; i < n; i++)
        idx[i] = i;
    order_base = s; /* qsort has no context argument in C17; analysis runs on one thread */
    qsort(idx, (size_t)n, sizeof *idx, cmp_device);
    order_base = NULL;
}

json_t *ga_dev_gpus_json(const ga_dev_sample *s, const ga_dev_verdict *v, int n, const char *value_key)
{
    json_t *arr = json_array();
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    if (!idx)
        return arr;
    ga_dev_order(s, n, idx);
    for (int k = 0; k < n; k++) {
        int i = idx[k];
        if (s[i].value < 0)
            continue;
        json_t *o = json_pack("{s:o, s:i, s:i, s:o, s:o, s:f, s:o, s:b}", "host", ga_json_text(s[i].host),
                              "node_index", s[i].node_index, "rank", s[i].rank, "gpu",
                              s[i].gpu >= 0 ? json_integer(s[i].gpu) : json_null(), "model",
                              ga_json_text(s[i].group ? s[i].group : ""), value_key, s[i].value, "efficiency",
                              v[i].efficiency >= 0 ? json_real(v[i].efficiency) : json_null(), "flagged",
                              v[i].below_median || v[i].below_peak);
        json_object_set_new(o, "bound", v[i].bound > 0 ? json_real(v[i].bound) : json_null());
        json_object_set_new(o, "differs", json_boolean(v[i].differs));
        json_t *ms = json_array();
        for (int m = 0; m < s[i].measured && s[i].measurements; m++)
            json_array_append_new(ms, json_real(s[i].measurements[m]));
        if (!s[i].measurements)
            json_array_append_new(ms, json_real(s[i].value));
        json_object_set_new(o, "measurements", ms);
        json_array_append_new(arr, o);
    }
    free(idx);
    return arr;
}
