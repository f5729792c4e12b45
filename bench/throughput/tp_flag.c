#include "tp_flag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_stats.h"

static bool same_group(const tp_sample *a, const tp_sample *b)
{
    return strcmp(a->group ? a->group : "", b->group ? b->group : "") == 0;
}

double tp_flag(const tp_sample *s, int n, const tp_policy *p, tp_verdict *out)
{
    double *vals = malloc((size_t)(n > 0 ? n : 1) * sizeof *vals);
    int *done = calloc((size_t)(n > 0 ? n : 1), sizeof *done);
    if (!vals || !done) {
        free(vals);
        free(done);
        return -2;
    }
    /* Groups in order of first appearance: one pass per group, which is few (one model per cluster, usually).
     */
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        int m = 0;
        for (int j = i; j < n; j++)
            if (!done[j] && same_group(&s[i], &s[j]) && s[j].value >= 0)
                vals[m++] = s[j].value;
        double med = m ? ga_median(vals, (size_t)m) : -1;
        for (int j = i; j < n; j++) {
            if (done[j] || !same_group(&s[i], &s[j]))
                continue;
            done[j] = 1;
            tp_verdict *v = &out[j];
            v->group_median = med;
            bool measured = s[j].value >= 0;
            v->efficiency = measured && s[j].peak > 0 ? s[j].value / s[j].peak : -1;
            v->below_median = measured && med > 0 && s[j].value < (1.0 - p->tolerance) * med;
            v->below_peak = v->efficiency >= 0 && p->min_efficiency > 0 && v->efficiency < p->min_efficiency;
        }
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (s[i].value >= 0)
            vals[m++] = s[i].value;
    double all = m ? ga_median(vals, (size_t)m) : -1;
    free(vals);
    free(done);
    return all;
}

int tp_add_findings(ga_findings *f, const tp_labels *l, const tp_sample *s, const tp_verdict *v, int n,
                    const tp_policy *p)
{
    int flagged = 0;
    for (int i = 0; i < n; i++) {
        ga_where w = {s[i].host, s[i].node_index, s[i].rank, s[i].gpu};
        char who[160];
        if (s[i].gpu >= 0)
            snprintf(who, sizeof who, "node %d (%s) rank %d GPU %d", s[i].node_index, s[i].host, s[i].rank,
                     s[i].gpu);
        else
            snprintf(who, sizeof who, "node %d (%s) rank %d", s[i].node_index, s[i].host, s[i].rank);
        if (v[i].below_median)
            ga_findings_add(
                f, GA_SEV_FAIL, l->code_median, w,
                "%s: %s %.4g %s is %.1f%% below the median %.4g of its model (%s); tolerance %.0f%%", who,
                l->metric, s[i].value, l->unit, 100.0 * (1.0 - s[i].value / v[i].group_median),
                v[i].group_median, s[i].group ? s[i].group : "?", 100.0 * p->tolerance);
        if (v[i].below_peak)
            ga_findings_add(f, GA_SEV_FAIL, l->code_peak, w,
                            "%s: %s %.4g %s is %.1f%% of the %s peak %.4g; minimum %.0f%%", who, l->metric,
                            s[i].value, l->unit, 100.0 * v[i].efficiency, s[i].group ? s[i].group : "?",
                            s[i].peak, 100.0 * p->min_efficiency);
        flagged += v[i].below_median || v[i].below_peak;
    }
    return flagged;
}

static const tp_sample *order_base;

static int cmp_device(const void *a, const void *b)
{
    const tp_sample *x = &order_base[*(const int *)a], *y = &order_base[*(const int *)b];
    if (x->node_index != y->node_index)
        return x->node_index < y->node_index ? -1 : 1;
    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

void tp_device_order(const tp_sample *s, int n, int *idx)
{
    for (int i = 0; i < n; i++)
        idx[i] = i;
    order_base = s; /* qsort has no context argument in C17; analysis runs on one thread */
    qsort(idx, (size_t)n, sizeof *idx, cmp_device);
    order_base = NULL;
}

json_t *tp_gpus_json(const tp_sample *s, const tp_verdict *v, int n, const char *value_key)
{
    json_t *arr = json_array();
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    if (!idx)
        return arr;
    tp_device_order(s, n, idx);
    for (int k = 0; k < n; k++) {
        int i = idx[k];
        if (s[i].value < 0)
            continue;
        json_t *o = json_pack("{s:s, s:i, s:i, s:o, s:s, s:f, s:o, s:b}", "host", s[i].host, "node_index",
                              s[i].node_index, "rank", s[i].rank, "gpu",
                              s[i].gpu >= 0 ? json_integer(s[i].gpu) : json_null(), "model",
                              s[i].group ? s[i].group : "", value_key, s[i].value, "efficiency",
                              v[i].efficiency >= 0 ? json_real(v[i].efficiency) : json_null(), "flagged",
                              v[i].below_median || v[i].below_peak);
        json_array_append_new(arr, o);
    }
    free(idx);
    return arr;
}
