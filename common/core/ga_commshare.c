/* Communication's share of a training step (ga_commshare.h). */
#include "ga_commshare.h"

#include <stdlib.h>

#include "ga_stats.h"

/* The median of the n-1 largest values of v (n >= 2, sorted ascending). */
static double median_without_lowest(double *v, int n)
{
    return ga_median(v + 1, (size_t)(n - 1));
}

/* The index of the rank whose wait is below GA_COMM_WAITED_FOR of the others' median, when exactly one is;
 * else -1. */
static int waited_for(const double *wait, const double *step, int n, double *tmp)
{
    int found = -1;
    for (int i = 0; i < n; i++) {
        if (step[i] <= 0)
            continue;
        int k = 0;
        for (int j = 0; j < n; j++)
            if (j != i && step[j] > 0)
                tmp[k++] = wait[j];
        if (k == 0 || !(wait[i] < GA_COMM_WAITED_FOR * ga_median(tmp, (size_t)k)))
            continue;
        if (found >= 0)
            return -1; /* two ranks stand out: not one to name */
        found = i;
    }
    return found;
}

void ga_comm_judge(const double *wait, const double *step, int n, ga_comm_verdict *v)
{
    *v = (ga_comm_verdict){.waited_for = -1};
    double *share = malloc((size_t)(n > 0 ? n : 1) * sizeof *share);
    double *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    double *steps = malloc((size_t)(n > 0 ? n : 1) * sizeof *steps);
    int m = 0;
    for (int i = 0; share && i < n; i++)
        if (step[i] > 0)
            share[m++] = wait[i] / step[i];
    if (m >= 2 && tmp && steps) {
        qsort(share, (size_t)m, sizeof *share, ga_cmp_double);
        v->share = median_without_lowest(share, m);
        v->dominates = v->share > GA_COMM_SHARE_MAX;
        v->waited_for = waited_for(wait, step, n, tmp);
        int k = 0;
        for (int i = 0; i < n; i++)
            if (i != v->waited_for && step[i] > 0) {
                tmp[k] = wait[i];
                steps[k++] = step[i];
            }
        v->others_wait = ga_median(tmp, (size_t)k);
        v->step = ga_median(steps, (size_t)k);
    }
    free(share);
    free(tmp);
    free(steps);
}

void ga_comm_add_finding(ga_findings *f, const char *code, const ga_comm_verdict *v, ga_where where, int rank,
                         const char *host, double rank_wait_ms)
{
    if (!v->dominates)
        return;
    /* within the findings' 320 characters, with a long host name */
    if (v->waited_for >= 0)
        ga_findings_add(
            f, GA_SEV_WARN, code, where,
            "gradient communication is %.0f%% of the step (above %.0f%%) while every rank computes "
            "at its peers' pace: the others waited for rank %d on %s, %.3f ms per step of %.3f; "
            "it waited %.3f ms: its node or its link to the others",
            100.0 * v->share, 100.0 * GA_COMM_SHARE_MAX, rank, host, v->others_wait, v->step, rank_wait_ms);
    else
        ga_findings_add(f, GA_SEV_WARN, code, GA_WHERE_CLUSTER,
                        "gradient communication is %.0f%% of the step (above %.0f%%) on every rank alike, "
                        "%.3f ms per step of %.3f, while every rank computes at its peers' pace and none was "
                        "waited for: the fabric between the ranks is slow (allreduce_bw measures it)",
                        100.0 * v->share, 100.0 * GA_COMM_SHARE_MAX, v->others_wait, v->step);
}
