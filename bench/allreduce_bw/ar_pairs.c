#include "ar_pairs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_sweep.h"
#include "ga_stats.h"

int ar_pairs_max_rounds(int members)
{
    if (members < 2)
        return 0;
    return members % 2 ? members : members - 1;
}

int ar_pairs_schedule(int members, int round, int (*out)[2])
{
    if (members < 2)
        return 0;
    int m = members % 2 ? members + 1 : members; /* an odd count gets a bye: member m-1 sits out */
    int ring = m - 1;
    int r = round % ring, n = 0;
    int first[2] = {m - 1, r};
    if (first[0] < members)
        out[n][0] = first[1], out[n][1] = first[0], n++;
    for (int k = 1; k < m / 2; k++) {
        int a = (r + k) % ring, b = (r - k + ring) % ring;
        out[n][0] = a < b ? a : b;
        out[n][1] = a < b ? b : a;
        n++;
    }
    return n;
}

void ar_pairs_add_measurement(ar_pair *p, double busbw)
{
    if (p->measured == 0 || busbw > p->busbw)
        p->busbw = busbw;
    p->measured++;
}

int ar_pairs_untested(int members, const ar_pair *pairs, int n, int (*out)[2], int max_out)
{
    int count = 0;
    for (int a = 0; a < members; a++)
        for (int b = a + 1; b < members; b++) {
            bool seen = false;
            for (int i = 0; i < n && !seen; i++)
                seen = (pairs[i].member[0] == a && pairs[i].member[1] == b) ||
                       (pairs[i].member[0] == b && pairs[i].member[1] == a);
            if (seen)
                continue;
            if (count < max_out)
                out[count][0] = a, out[count][1] = b;
            count++;
        }
    return count;
}

int ar_pairs_remeasure_batches(const ar_pair *pairs, int n, int *batch_of)
{
    int batches = 0;
    for (int i = 0; i < n; i++) {
        batch_of[i] = -1;
        if (!pairs[i].flagged)
            continue;
        /* first batch where neither member is busy yet */
        for (int b = 0;; b++) {
            bool busy = false;
            for (int j = 0; j < i && !busy; j++)
                busy = batch_of[j] == b &&
                       (pairs[j].member[0] == pairs[i].member[0] || pairs[j].member[0] == pairs[i].member[1] ||
                        pairs[j].member[1] == pairs[i].member[0] || pairs[j].member[1] == pairs[i].member[1]);
            if (!busy) {
                batch_of[i] = b;
                batches = b + 1 > batches ? b + 1 : batches;
                break;
            }
        }
    }
    return batches;
}

static ar_member_stat *member_of(ar_pairs_verdict *v, int member)
{
    for (int i = 0; i < v->n_members; i++)
        if (v->members[i].member == member)
            return &v->members[i];
    return NULL;
}

static int cmp_member(const void *a, const void *b)
{
    return ((const ar_member_stat *)a)->member - ((const ar_member_stat *)b)->member;
}

int ar_pairs_analyse(ar_pair *pairs, int n, double tolerance, ar_pairs_verdict *out)
{
    memset(out, 0, sizeof *out);
    double *bw = calloc((size_t)(n > 0 ? n : 1), sizeof *bw);
    out->members = calloc((size_t)(2 * n > 0 ? 2 * n : 1), sizeof *out->members);
    if (!bw || !out->members) {
        free(bw);
        free(out->members);
        out->members = NULL;
        return -1;
    }
    for (int i = 0; i < n; i++)
        bw[i] = pairs[i].busbw;
    out->median_busbw = ga_median(bw, (size_t)n);
    free(bw);

    double threshold = out->median_busbw * (1.0 - tolerance);
    for (int i = 0; i < n; i++) {
        ar_pair *p = &pairs[i];
        p->flagged = p->busbw < threshold;
        out->flagged += p->flagged;
        for (int s = 0; s < 2; s++) {
            ar_member_stat *m = member_of(out, p->member[s]);
            if (!m) {
                m = &out->members[out->n_members++];
                m->member = p->member[s];
                snprintf(m->host, sizeof m->host, "%s", p->host[s]);
                m->rank = p->rank[s];
                m->min_busbw = p->busbw;
            }
            m->pairs++;
            m->flagged_pairs += p->flagged;
            if (p->busbw < m->min_busbw)
                m->min_busbw = p->busbw;
        }
    }
    qsort(out->members, (size_t)out->n_members, sizeof *out->members, cmp_member);
    /* Two flagged pairs sharing one member point at it; one flagged pair alone cannot say which end is slow.
     */
    for (int i = 0; i < out->n_members; i++) {
        ar_member_stat *m = &out->members[i];
        m->suspect = m->flagged_pairs >= 2 && 2 * m->flagged_pairs > m->pairs;
        out->n_suspects += m->suspect;
    }
    return 0;
}

void ar_pairs_verdict_free(ar_pairs_verdict *v)
{
    free(v->members);
    v->members = NULL;
    v->n_members = 0;
}

void ar_pairs_findings(const ar_pair *pairs, int n, const ar_pairs_verdict *v, double tolerance, bool by_rank,
                       ga_findings *f)
{
    for (int i = 0; i < v->n_members; i++) {
        const ar_member_stat *m = &v->members[i];
        if (!m->suspect)
            continue;
        ga_where w = {m->host, by_rank ? -1 : m->member, by_rank ? m->member : -1, -1};
        ga_findings_add(f, GA_SEV_FAIL, "COMM_SLOW_NODE", w,
                        "%s%s%d is in %d slow pairs of %d (lowest %.2f GB/s, median of all pairs %.2f GB/s, "
                        "tolerance %.0f%%)",
                        m->host, by_rank ? " rank " : " node ", m->member, m->flagged_pairs, m->pairs,
                        m->min_busbw, v->median_busbw, tolerance * 100);
    }
    for (int i = 0; i < n; i++) {
        const ar_pair *p = &pairs[i];
        if (!p->flagged)
            continue;
        bool explained = false;
        for (int j = 0; j < v->n_members; j++)
            if (v->members[j].suspect &&
                (v->members[j].member == p->member[0] || v->members[j].member == p->member[1]))
                explained = true;
        if (explained)
            continue;
        ga_where w = {p->host[0], by_rank ? -1 : p->member[0], by_rank ? p->member[0] : -1, -1};
        ga_findings_add(f, GA_SEV_FAIL, "COMM_SLOW_LINK", w,
                        "pair %s%s%d <-> %s%s%d (round %d): %.2f GB/s, below %.0f%% of the median %.2f GB/s; "
                        "neither end is slow with other partners: suspect the link or path between them",
                        p->host[0], by_rank ? " rank " : " node ", p->member[0], p->host[1],
                        by_rank ? " rank " : " node ", p->member[1], p->round, p->busbw,
                        (1.0 - tolerance) * 100, v->median_busbw);
    }
}
