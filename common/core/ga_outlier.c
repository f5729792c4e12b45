#include "ga_outlier.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "ga_stats.h"

/* Logarithms of figures that may be 0 (a link that moved nothing): a floor keeps them finite. */
#define LOG_FLOOR 1e-12

bool ga_outlier_measured(double v)
{
    return isfinite(v) && v >= 0;
}

bool ga_outlier_worse_than(double value, double bound, ga_direction d)
{
    return d == GA_LOWER_IS_BETTER ? value > bound : value < bound;
}

double ga_outlier_better(double a, double b, ga_direction d)
{
    if (!ga_outlier_measured(a))
        return b;
    if (!ga_outlier_measured(b))
        return a;
    return ga_outlier_worse_than(a, b, d) ? b : a;
}

/* Median and scaled MAD of the logarithms of x[0..k-1] (overwritten). */
static double log_spread(double *x, int k, double *median)
{
    *median = ga_median(x, (size_t)k);
    for (int i = 0; i < k; i++)
        x[i] = log(x[i] > LOG_FLOOR ? x[i] : LOG_FLOOR);
    double log_median = ga_median(x, (size_t)k);
    for (int i = 0; i < k; i++)
        x[i] = fabs(x[i] - log_median);
    return GA_OUTLIER_MAD_SCALE * ga_median(x, (size_t)k);
}

/* The bound from a median and a spread: the tolerance or GA_OUTLIER_MAD_K spreads, whichever is wider. The
 * spread is the group's, or the measurements' own noise when that is larger. */
static double bound_of(double median, double spread, const ga_outlier_rule *r, bool *capped)
{
    double noise = exp(GA_OUTLIER_MAD_K * (spread > r->noise ? spread : r->noise));
    double by_tol = r->direction == GA_LOWER_IS_BETTER ? 1.0 + r->tolerance : 1.0 / (1.0 - r->tolerance);
    double factor = by_tol > noise ? by_tol : noise; /* how far from the median, as a factor >= 1 */
    /* noise may widen the bound only up to the far cap, far times the tolerance's own factor */
    bool cap = r->far > 1.0 && factor > r->far * by_tol;
    if (capped)
        *capped = cap;
    if (cap)
        factor = r->far * by_tol;
    return r->direction == GA_LOWER_IS_BETTER ? median * factor : median / factor;
}

/* The set of the measured figures of v other than v[skip], with x as scratch of n entries. */
static void set_of(const double *v, int n, int skip, const ga_outlier_rule *r, double *x, ga_outlier_set *out)
{
    *out = (ga_outlier_set){0};
    for (int i = 0; i < n; i++)
        if (i != skip && ga_outlier_measured(v[i]))
            x[out->members++] = v[i];
    if (!out->members)
        return;
    out->spread = log_spread(x, out->members, &out->median);
    out->bound = bound_of(out->median, out->spread, r, &out->noisy);
}

int ga_outlier_bound(const double *v, int n, int skip, const ga_outlier_rule *r, ga_outlier_set *out)
{
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (!x) {
        *out = (ga_outlier_set){0};
        return -1;
    }
    set_of(v, n, skip, r, x, out);
    free(x);
    return 0;
}

/* Two members: neither is named; they differ when one is worse than the other's bound (the tolerance, or the
 * measurements' own noise when known). */
static void judge_two(const double *v, int a, int b, const ga_outlier_rule *r, ga_outlier_verdict *out)
{
    int pair[2] = {a, b};
    bool differ = false;
    for (int s = 0; s < 2; s++)
        differ =
            differ || ga_outlier_worse_than(v[pair[s]], bound_of(v[pair[1 - s]], 0, r, NULL), r->direction);
    for (int s = 0; s < 2; s++) {
        ga_outlier_verdict *o = &out[pair[s]];
        int other = pair[1 - s];
        o->other = other;
        o->ref_median = v[other];
        o->spread = r->noise;
        o->bound = bound_of(v[other], 0, r, NULL);
        o->call = differ ? GA_OUTLIER_PAIR_DIFFERS : GA_OUTLIER_NONE;
    }
}

/* The passes every member was measured in together, when they were: every listed member has the same count
 * (each pass measures every member once), at least two members and two passes; else 0. */
static int common_passes(const double *const *lists, const int *counts, int n)
{
    int passes = 0, members = 0;
    for (int i = 0; i < n; i++) {
        if (!lists[i])
            continue;
        if (members++ && counts[i] != passes)
            return 0;
        passes = counts[i];
    }
    return members >= 2 && passes >= 2 && passes <= GA_REMEASURE_MAX + 1 ? passes : 0;
}

/* log x[i][pass] less that pass's common shift. The shift of a pass is the median over the members of how far
 * each member's log in it lies from that member's own median log: every member's level is taken out first, so
 * a slow member is no outlier here, and a member that jumps in one pass moves the median little. */
static void relative_logs(const double *const *lists, int n, int passes, double *out, double *scratch)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; lists[i] && k < passes; k++)
            out[(size_t)i * (size_t)passes + (size_t)k] =
                log(lists[i][k] > LOG_FLOOR ? lists[i][k] : LOG_FLOOR);
    for (int i = 0; i < n; i++) { /* each member's own median log, kept in scratch[i] */
        if (!lists[i])
            continue;
        double own[GA_REMEASURE_MAX + 1];
        memcpy(own, out + (size_t)i * (size_t)passes, (size_t)passes * sizeof *own);
        scratch[i] = ga_median(own, (size_t)passes);
    }
    double *dev = scratch + n;
    for (int k = 0; k < passes; k++) {
        size_t m = 0;
        for (int i = 0; i < n; i++)
            if (lists[i])
                dev[m++] = out[(size_t)i * (size_t)passes + (size_t)k] - scratch[i];
        double shift = ga_median(dev, m);
        for (int i = 0; i < n; i++)
            if (lists[i])
                out[(size_t)i * (size_t)passes + (size_t)k] -= shift;
    }
}

double ga_outlier_repeat_spread(const double *const *lists, const int *counts, int n)
{
    int passes = common_passes(lists, counts, n);
    double *rel = passes ? malloc((size_t)n * (size_t)passes * sizeof *rel) : NULL;
    double *scratch = passes ? malloc((size_t)(2 * n + 1) * sizeof *scratch) : NULL;
    if (rel && scratch)
        relative_logs(lists, n, passes, rel, scratch);
    else
        passes = 0;
    free(scratch);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        if (lists[i] && counts[i] > 1)
            total += (size_t)counts[i] * (size_t)(counts[i] - 1) / 2;
    double *diff = total ? malloc(total * sizeof *diff) : NULL;
    size_t k = 0;
    for (int i = 0; diff && i < n; i++)
        for (int a = 0; lists[i] && a < counts[i]; a++)
            for (int b = a + 1; b < counts[i]; b++) {
                double x = lists[i][a] > LOG_FLOOR ? lists[i][a] : LOG_FLOOR;
                double y = lists[i][b] > LOG_FLOOR ? lists[i][b] : LOG_FLOOR;
                diff[k++] = passes ? fabs(rel[(size_t)i * (size_t)passes + (size_t)a] -
                                          rel[(size_t)i * (size_t)passes + (size_t)b])
                                   : fabs(log(x) - log(y));
            }
    double spread = k ? GA_OUTLIER_MAD_SCALE * ga_median(diff, k) : 0;
    free(diff);
    free(rel);
    return spread;
}

int ga_outlier_judge(const double *v, int n, const ga_outlier_rule *r, ga_outlier_verdict *out)
{
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    if (!x)
        return -1;
    ga_outlier_set all;
    set_of(v, n, -1, r, x, &all);
    int first = -1, second = -1;
    for (int i = 0; i < n; i++) {
        bool m = ga_outlier_measured(v[i]);
        out[i] = (ga_outlier_verdict){
            GA_OUTLIER_NONE, m ? all.members : 0, all.median, all.median, 0, 0, -1, false};
        ga_outlier_rule by_tolerance = {r->tolerance, r->direction, 0, 0};
        out[i].screened =
            m && all.members > 1 &&
            ga_outlier_worse_than(v[i], bound_of(all.median, 0, &by_tolerance, NULL), r->direction);
        if (m) {
            second = first >= 0 && second < 0 ? i : second;
            first = first < 0 ? i : first;
        }
    }
    int worse = 0;
    ga_outlier_rule by_tol = {r->tolerance, r->direction, 0, 0};
    if (all.members == 2)
        judge_two(v, first, second, r, out);
    for (int i = 0; all.members > 2 && i < n; i++) {
        if (!ga_outlier_measured(v[i]))
            continue;
        ga_outlier_verdict *o = &out[i];
        ga_outlier_set ref = all;
        /* leave one out: a slow member would pull down the median and widen the spread it is held to */
        if (all.members < GA_OUTLIER_FEW)
            set_of(v, n, i, r, x, &ref);
        o->ref_median = ref.median;
        o->spread = ref.spread;
        o->bound = ref.bound;
        if (ga_outlier_worse_than(v[i], o->bound, r->direction)) {
            o->call = GA_OUTLIER_WORSE;
            worse++;
        }
        /* not judged: the noise hid a gap the tolerance alone would have called */
        o->noisy = o->call == GA_OUTLIER_NONE &&
                   ga_outlier_worse_than(v[i], bound_of(ref.median, 0, &by_tol, NULL), r->direction);
    }
    free(x);
    return worse;
}

void ga_series_drop_judge(const double *series, int n, int warmup, double max_drop_pct, ga_series_drop *out)
{
    *out = (ga_series_drop){0};
    int m = n - (warmup > 0 ? warmup : 0);
    out->used = m > 0 ? m : 0;
    if (m < 3)
        return;
    const double *x = series + (n - m);
    double *buf = malloc((size_t)m * sizeof *buf);
    if (!buf)
        return;
    int third = m / 3;
    for (int i = 0; i < third; i++)
        buf[i] = x[i];
    out->first = ga_median(buf, (size_t)third);
    for (int i = 0; i < third; i++)
        buf[i] = x[m - third + i];
    out->last = ga_median(buf, (size_t)third);
    for (int i = 0; i + 1 < m; i++)
        buf[i] = log(x[i + 1] > LOG_FLOOR ? x[i + 1] : LOG_FLOOR) - log(x[i] > LOG_FLOOR ? x[i] : LOG_FLOOR);
    double mid = ga_median(buf, (size_t)(m - 1));
    for (int i = 0; i + 1 < m; i++)
        buf[i] = fabs(buf[i] - mid);
    double sigma = GA_OUTLIER_MAD_SCALE * ga_median(buf, (size_t)(m - 1)) / sqrt(2.0);
    free(buf);
    out->noise_pct = 100.0 * (1.0 - exp(-sigma));
    double by_noise = 100.0 * (1.0 - exp(-GA_OUTLIER_MAD_K * sigma));
    out->bound_pct = max_drop_pct > by_noise ? max_drop_pct : by_noise;
    out->drop_pct = out->first > 0 ? 100.0 * (out->first - out->last) / out->first : 0;
    out->judged = out->first > 0;
    out->fell = out->judged && out->drop_pct > out->bound_pct;
}

ga_outlier_verdict *ga_outlier_judge_repeated(const double *best, const double *const *lists,
                                              const int *counts, int n, double tolerance,
                                              ga_direction direction)
{
    ga_outlier_verdict *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    ga_outlier_rule rule = {tolerance, direction, ga_outlier_repeat_spread(lists, counts, n), GA_OUTLIER_FAR};
    if (v && ga_outlier_judge(best, n, &rule, v) < 0) {
        free(v);
        v = NULL;
    }
    if (v)
        ga_outlier_confirm(v, best, lists, counts, n, &rule);
    return v;
}

/* 1.4826 times the median of |log x - log y| over every two of one member's measurements; 0 below two. */
static double own_noise(const double *x, int k)
{
    double d[(GA_REMEASURE_MAX + 1) * GA_REMEASURE_MAX / 2];
    size_t m = 0;
    for (int a = 0; x && a < k && a <= GA_REMEASURE_MAX; a++)
        for (int b = a + 1; b < k && b <= GA_REMEASURE_MAX; b++)
            d[m++] =
                fabs(log(x[a] > LOG_FLOOR ? x[a] : LOG_FLOOR) - log(x[b] > LOG_FLOOR ? x[b] : LOG_FLOOR));
    return m ? GA_OUTLIER_MAD_SCALE * ga_median(d, m) : 0;
}

void ga_outlier_confirm(ga_outlier_verdict *v, const double *best, const double *const *lists,
                        const int *counts, int n, const ga_outlier_rule *rule)
{
    for (int i = 0; v && lists && i < n; i++) {
        if (v[i].call != GA_OUTLIER_WORSE || !lists[i] || counts[i] < 2)
            continue;
        v[i].own_noise = own_noise(lists[i], counts[i]);
        double by_tol =
            rule->direction == GA_LOWER_IS_BETTER ? 1.0 + rule->tolerance : 1.0 / (1.0 - rule->tolerance);
        double far = rule->far > 1.0 ? rule->far * by_tol : INFINITY;
        double far_bound =
            rule->direction == GA_LOWER_IS_BETTER ? v[i].ref_median * far : v[i].ref_median / far;
        if (ga_outlier_worse_than(best[i], far_bound, rule->direction))
            continue; /* beyond the far cap: named, however its own figures scatter */
        double margin = exp(v[i].own_noise);
        double past = rule->direction == GA_LOWER_IS_BETTER ? v[i].bound * margin : v[i].bound / margin;
        if (!ga_outlier_worse_than(best[i], past, rule->direction)) {
            v[i].call = GA_OUTLIER_NONE;
            v[i].unconfirmed = true;
            v[i].screened = true;
        }
    }
}

int ga_outlier_suspects(const ga_outlier_verdict *v, int n, int *first)
{
    int suspects = 0;
    *first = -1;
    for (int i = 0; v && i < n; i++)
        if ((v[i].call != GA_OUTLIER_NONE || v[i].screened) && suspects++ == 0)
            *first = i;
    return suspects;
}
