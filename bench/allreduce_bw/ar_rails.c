#include "ar_rails.h"

#include <stdio.h>

#include "ga_text.h"

int ar_rail_member(int node, int local, int locals)
{
    return node * locals + local;
}

/* "node17 GPU 3 (mlx5_3)", or without the NIC where none is known. */
static void end_name(const ar_rail_end *e, char *out, size_t len)
{
    if (e->nic[0])
        snprintf(out, len, "%s GPU %d (%s)", e->host, e->gpu, e->nic);
    else
        snprintf(out, len, "%s GPU %d", e->host, e->gpu);
}

/* The finding's part (issue 46, item 4): the end's name inside its node, "GPU 3 (mlx5_3)". */
static void set_part(ga_findings *f, const ar_rail_end *e)
{
    if (e->nic[0])
        ga_findings_set_part(f, "GPU %d (%s)", e->gpu, e->nic);
    else
        ga_findings_set_part(f, "GPU %d", e->gpu);
}

static int suspect_findings(const ar_rails_outcome *r, const ga_pairs_verdict *v, double tolerance,
                            ga_findings *f)
{
    int added = 0;
    for (int i = 0; i < v->n_members; i++) {
        const ga_pair_member *m = &v->members[i];
        if (!m->suspect || m->member < 0 || m->member >= r->nodes * r->locals)
            continue;
        const ar_rail_end *e = &r->ends[m->member];
        char name[160];
        end_name(e, name, sizeof name);
        ga_where w = {e->host, e->node, e->rank, e->gpu, e->pci_bus_id};
        ga_findings_add(
            f, GA_SEV_FAIL, "COMM_SLOW_RAIL", w,
            "%s: its rail is slow with %d partners of %d (its %s %.3g GB/s, lowest %.3g GB/s; median "
            "rail %.3g GB/s, its bound %.3g GB/s; tolerance %.0f%%)",
            name, m->flagged_pairs, m->pairs, v->cpus_shared ? "best" : "median", m->figure, m->min_figure,
            v->member_median, m->bound, tolerance * 100);
        set_part(f, e);
        added++;
    }
    return added;
}

static int link_findings(const ar_rails_outcome *r, const ga_pairs_verdict *v, double tolerance,
                         ga_findings *f)
{
    int added = 0;
    for (int i = 0; i < r->n_pairs; i++) {
        const ga_pair *p = &r->pairs[i];
        if (!p->slow_link)
            continue;
        const ar_rail_end *a = &r->ends[p->member[0]], *b = &r->ends[p->member[1]];
        char na[160], nb[160];
        end_name(a, na, sizeof na);
        end_name(b, nb, sizeof nb);
        ga_where w = {a->host, a->node, a->rank, a->gpu, a->pci_bus_id};
        ga_findings_add(
            f, GA_SEV_FAIL, "COMM_SLOW_RAIL", w,
            "%s <-> %s (round %d): %.2f GB/s (best of %d), below %.0f%% of the median rail pair "
            "%.2f GB/s and the others' bound %.2f GB/s; neither end is slow with another partner: "
            "suspect the cable or path between them",
            na, nb, p->round, p->figure, p->measured > 0 ? p->measured : 1, (1.0 - tolerance) * 100,
            v->median, p->bound);
        set_part(f, a);
        ga_findings_set_peer(f, b->host); /* the cable's other end */
        added++;
    }
    return added;
}

static json_t *rails_json(const ar_rails_outcome *r, const ga_pairs_verdict *v)
{
    json_t *pairs = json_array(), *slow = json_array();
    for (int i = 0; i < r->n_pairs; i++) {
        const ga_pair *p = &r->pairs[i];
        const ar_rail_end *a = &r->ends[p->member[0]], *b = &r->ends[p->member[1]];
        json_array_append_new(pairs, json_pack("{s:i, s:i, s:[o,o], s:[i,i], s:[o,o], s:f, s:i, s:b, s:b}",
                                               "round", p->round, "rail", a->local, "hosts",
                                               ga_json_text(a->host), ga_json_text(b->host), "ranks", a->rank,
                                               b->rank, "nics", ga_json_text(a->nic), ga_json_text(b->nic),
                                               "busbw_GBps", p->figure, "measured", p->measured, "flagged",
                                               p->flagged, "slow_link", p->slow_link));
    }
    for (int i = 0; i < v->n_members; i++)
        if (v->members[i].suspect) {
            const ar_rail_end *e = &r->ends[v->members[i].member];
            json_array_append_new(slow,
                                  json_pack("{s:o, s:i, s:i, s:i, s:o, s:o, s:f}", "host",
                                            ga_json_text(e->host), "rail", e->local, "gpu", e->gpu, "rank",
                                            e->rank, "pci_bus_id", ga_json_text(e->pci_bus_id), "nic",
                                            ga_json_text(e->nic), "busbw_GBps", v->members[i].figure));
        }
    return json_pack("{s:i, s:i, s:i, s:f, s:i, s:b, s:o, s:o}", "nodes", r->nodes, "gpus_per_node",
                     r->locals, "rounds", r->rounds, "median_busbw_GBps", v->median, "flagged", v->flagged,
                     "links_judged", r->n_pairs >= AR_RAILS_LINK_MIN_PAIRS, "pairs", pairs, "slow_rails",
                     slow);
}

int ar_rails_judge(ar_rails_outcome *r, double tolerance, ga_findings *f, json_t **part)
{
    ga_pairs_verdict v;
    if (ga_pairs_analyse(r->pairs, r->n_pairs, tolerance, r->cpus_shared, &v) != 0)
        return -1;
    for (int i = 0; r->n_pairs < AR_RAILS_LINK_MIN_PAIRS && i < r->n_pairs; i++)
        r->pairs[i].slow_link = false;
    int added = suspect_findings(r, &v, tolerance, f) + link_findings(r, &v, tolerance, f);
    if (part)
        *part = rails_json(r, &v);
    ga_pairs_verdict_free(&v);
    return added;
}
