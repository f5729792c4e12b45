#include "ar_budget.h"

#include <math.h>
#include <stdlib.h>

#include "ga_stats.h"

double ar_budget_reserve(double time_left_s)
{
    /* the gathers, the analysis and an atomic report write: seconds, more on a large job's long run */
    double r = 2.0 + 0.05 * time_left_s;
    return r < time_left_s * 0.25 ? r : time_left_s * 0.25;
}

/* The weights of the patterns: the world sweep is the figure people compare, the pairs rounds are many
 * communicators in turn (and their remeasurement), the node sweeps run at once. */
static double weight(ar_pattern_id p)
{
    switch (p) {
    case AR_PATTERN_WORLD:
        return 0.35;
    case AR_PATTERN_NODE:
        return 0.15;
    case AR_PATTERN_PAIRS:
        return 0.50;
    case AR_PATTERN_RAILS: /* rounds of pairs too, every rail of a pair at once */
        return 0.40;
    default:
        return 0.0;
    }
}

double ar_budget_phase(const ar_pattern_id *patterns, int n_patterns, int i, double time_left_s)
{
    if (time_left_s <= 0 || i < 0 || i >= n_patterns)
        return 0;
    double rest = 0;
    for (int k = i; k < n_patterns; k++)
        rest += weight(patterns[k]);
    return rest > 0 ? time_left_s * weight(patterns[i]) / rest : time_left_s;
}

int ar_budget_iters(double first_s, double budget_s, int want)
{
    if (want < 1)
        return 1;
    if (budget_s <= 0 || first_s <= 0)
        return want;
    double fit = floor(budget_s / first_s);
    return fit >= want ? want : fit < 1 ? 1 : (int)fit;
}

int ar_budget_warmups(double first_s, double budget_s, int want)
{
    if (want <= 1)
        return 0;
    if (budget_s <= 0 || first_s <= 0)
        return want - 1;
    double fit = floor(0.2 * budget_s / first_s);
    return fit >= want - 1 ? want - 1 : fit < 0 ? 0 : (int)fit;
}

int ar_far_below_peers(const double *fig, int n, bool *far)
{
    double *others = malloc((size_t)(n > 0 ? n : 1) * sizeof *others);
    int count = 0;
    for (int i = 0; i < n; i++) {
        far[i] = false;
        if (!others || fig[i] <= 0)
            continue;
        int k = 0;
        for (int j = 0; j < n; j++)
            if (j != i && fig[j] > 0)
                others[k++] = fig[j];
        if (k == 0)
            continue;
        far[i] = fig[i] * AR_FAR_FACTOR < ga_median(others, (size_t)k);
        count += far[i];
    }
    free(others);
    return count;
}

bool ar_far_below_floor(double fig, double floor)
{
    return floor > 0 && fig >= 0 && fig * AR_FAR_FACTOR < floor;
}

bool ar_far_counts_at(uint64_t bytes)
{
    return bytes >= AR_FAR_MIN_BYTES;
}

bool ar_world_far_below_pairs(double world_busbw, double pairs_busbw, uint64_t bytes)
{
    return pairs_busbw > 0 && world_busbw >= 0 && ar_far_counts_at(bytes) &&
           world_busbw * AR_WORLD_FAR_FACTOR < pairs_busbw;
}

int ar_judge_size_index(const uint64_t *sizes, int n)
{
    for (int i = 0; i < n; i++)
        if (sizes[i] >= AR_JUDGE_BYTES)
            return i;
    return n > 0 ? n - 1 : 0;
}

int ar_isolation_sizes(const uint64_t *sizes, int n, int *first)
{
    *first = ar_judge_size_index(sizes, n);
    int k = *first;
    while (k < n && sizes[k] <= AR_ISOLATION_MAX_BYTES)
        k++;
    return k > *first ? k - *first : (n > 0 ? 1 : 0);
}
