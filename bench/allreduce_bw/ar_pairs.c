#include "ar_pairs.h"

#include <stdio.h>

void ar_pairs_findings(const ga_pair *pairs, int n, const ga_pairs_verdict *v, double tolerance, bool by_rank,
                       ga_findings *f)
{
    for (int i = 0; i < v->n_members; i++) {
        const ga_pair_member *m = &v->members[i];
        if (!m->suspect)
            continue;
        ga_where w = {m->host, by_rank ? -1 : m->member, by_rank ? m->member : -1, -1, NULL};
        ga_findings_add(f, GA_SEV_FAIL, "COMM_SLOW_NODE", w,
                        "%s%s%d is in %d slow pairs of %d (its %s %.2f GB/s, lowest %.2f GB/s; median "
                        "member %.2f GB/s, its bound %.2f GB/s; median of all pairs %.2f GB/s, "
                        "tolerance %.0f%%)",
                        m->host, by_rank ? " rank " : " node ", m->member, m->flagged_pairs, m->pairs,
                        v->cpus_shared ? "best" : "median", m->figure, m->min_figure, v->member_median,
                        m->bound, v->median, tolerance * 100);
    }
    for (int i = 0; i < n; i++) {
        const ga_pair *p = &pairs[i];
        if (!p->slow_link)
            continue;
        ga_where w = {p->host[0], by_rank ? -1 : p->member[0], by_rank ? p->member[0] : -1, -1, NULL};
        ga_findings_add(
            f, GA_SEV_FAIL, "COMM_SLOW_LINK", w,
            "pair %s%s%d <-> %s%s%d (round %d): %.2f GB/s (best of %d), below %.0f%% of the median "
            "%.2f GB/s and the other pairs' bound %.2f GB/s; neither end is slow with other "
            "partners: suspect the link or path between them",
            p->host[0], by_rank ? " rank " : " node ", p->member[0], p->host[1],
            by_rank ? " rank " : " node ", p->member[1], p->round, p->figure,
            p->measured > 0 ? p->measured : 1, (1.0 - tolerance) * 100, v->median, p->bound);
    }
}
