#include "mb_p2p.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_outlier.h"
#include "ga_text.h"

static int rank_of(const mb_record *all, int n, int node, int local)
{
    for (int i = 0; i < n; i++)
        if (all[i].hdr.node_index == node && all[i].hdr.local_rank == local)
            return all[i].hdr.world_rank;
    return -1;
}

int mb_p2p_pairs(const mb_record *all, int n, mb_p2p_pair **out)
{
    *out = calloc((size_t)(n > 0 ? n : 1) * MB_P2P_MAX, sizeof **out);
    if (!*out)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const mb_record *r = &all[i];
        for (int d = 0; r->p2p_peers > 0 && d < r->p2p_peers && d < MB_P2P_MAX; d++) {
            int state = r->p2p_state[d];
            if (d == r->hdr.local_rank || (!(r->p2p_GBps[d] > 0) && state == MB_P2P_COPIED))
                continue;
            mb_p2p_pair *p = &(*out)[k++];
            p->node = r->hdr.node_index;
            snprintf(p->host, sizeof p->host, "%s", r->hdr.host);
            p->src = r->hdr.local_rank, p->dst = d;
            p->src_rank = r->hdr.world_rank, p->dst_rank = rank_of(all, n, p->node, d);
            p->GBps = state == MB_P2P_COPIED ? r->p2p_GBps[d] : 0;
            p->state = state;
            snprintf(p->note, sizeof p->note, "%s", state == MB_P2P_COPIED ? "" : r->p2p_note);
        }
    }
    return k;
}

/* The copied pairs of one node (idx[0..m-1]) against each other and the floor. */
static int judge_node(mb_p2p_pair *pairs, const int *idx, int m, double tolerance, double floor)
{
    double *v = calloc((size_t)m, sizeof *v);
    ga_outlier_verdict *ov = calloc((size_t)m, sizeof *ov);
    ga_outlier_rule rule = {tolerance, GA_HIGHER_IS_BETTER, 0};
    for (int i = 0; v && i < m; i++)
        v[i] = pairs[idx[i]].GBps;
    int rc = v && ov ? ga_outlier_judge(v, m, &rule, ov) : -1;
    for (int i = 0; rc >= 0 && i < m; i++) {
        mb_p2p_pair *p = &pairs[idx[i]];
        bool low = floor > 0 && p->GBps < floor;
        p->slow = ov[i].call == GA_OUTLIER_WORSE || low;
        p->bound = low ? floor : ov[i].call == GA_OUTLIER_WORSE ? ov[i].bound : 0;
    }
    free(v);
    free(ov);
    return rc < 0 ? -1 : 0;
}

static const char *state_name(int state)
{
    return state == MB_P2P_COPIED           ? "copied"
           : state == MB_P2P_NO_PEER_ACCESS ? "no peer access"
                                            : "copy failed";
}

static json_t *pair_json(const mb_p2p_pair *p)
{
    json_t *j =
        json_pack("{s:i, s:o, s:i, s:i, s:i, s:i, s:f, s:b, s:s}", "node", p->node, "host",
                  ga_json_text(p->host), "src", p->src, "dst", p->dst, "src_rank", p->src_rank, "dst_rank",
                  p->dst_rank, "GBps", p->GBps, "slow", p->slow, "state", state_name(p->state));
    if (j && p->state != MB_P2P_COPIED)
        json_object_set_new(j, "note", ga_json_text(p->note));
    return j;
}

/* A pair not copied: its own finding, a failure when the SKU has a link figure (--min-p2p: its GPUs are
 * meant to reach each other), else a warning (a PCIe machine may have no peer access by design). */
/* A fail only where CUDA itself said the two GPUs cannot reach each other and the SKU says they should
 * (--min-p2p). An IPC open or a copy that failed is a warning: with one GPU visible per rank (Slurm's
 * --gpus-per-task, a per-rank CUDA_VISIBLE_DEVICES) CUDA may refuse a peer's handle on a healthy node, and a
 * broken link shows in node_health's NVLink state and in the collectives. */
static void add_unavailable(ga_findings *f, const mb_p2p_pair *p, double floor)
{
    ga_where w = {p->host, p->node, p->src_rank, p->src, NULL};
    bool refused = p->state == MB_P2P_NO_PEER_ACCESS && floor > 0;
    ga_findings_add(f, refused ? GA_SEV_FAIL : GA_SEV_WARN, "MEM_P2P_UNAVAILABLE", w,
                    "%s GPU%d->GPU%d: not copied, %s (%s)", p->host, p->src, p->dst,
                    p->state == MB_P2P_NO_PEER_ACCESS ? "no peer access between the two GPUs"
                                                      : "the copy failed",
                    p->note[0] ? p->note : "no reason given");
}

int mb_p2p_judge(mb_p2p_pair *pairs, int n, double tolerance, double floor, ga_findings *f, json_t **part)
{
    int *idx = calloc((size_t)(n > 0 ? n : 1), sizeof *idx), named = 0;
    if (!idx)
        return -1;
    for (int i = 0; i < n; i++) { /* each node once, at its first pair */
        int m = 0, first = 1;
        for (int j = 0; j < i && first; j++)
            first = pairs[j].node != pairs[i].node;
        for (int j = i; first && j < n; j++)
            if (pairs[j].node == pairs[i].node && pairs[j].state == MB_P2P_COPIED)
                idx[m++] = j;
        if (first && m > 0 && judge_node(pairs, idx, m, tolerance, floor) != 0) {
            free(idx);
            return -1;
        }
    }
    free(idx);
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        const mb_p2p_pair *p = &pairs[i];
        json_array_append_new(arr, pair_json(p));
        if (f && p->state != MB_P2P_COPIED) {
            add_unavailable(f, p, floor);
            named++;
        }
        if (!p->slow || !f)
            continue;
        ga_where w = {p->host, p->node, p->src_rank, p->src, NULL};
        ga_findings_add(f, GA_SEV_FAIL, "MEM_P2P_SLOW", w,
                        "%s GPU%d->GPU%d: %.3g GB/s, below %.3g GB/s (%s; tolerance %.0f%%)", p->host, p->src,
                        p->dst, p->GBps, p->bound,
                        floor > 0 && p->GBps < floor ? "--min-p2p" : "an outlier among the node's own pairs",
                        tolerance * 100);
        ga_findings_set_part(f, "GPU%d->GPU%d", p->src, p->dst); /* the pair, shown under its node */
        named++;
    }
    if (part)
        *part = json_pack("{s:i, s:f, s:o}", "pairs_named", named, "min_p2p_GBps", floor > 0 ? floor : 0,
                          "pairs", arr);
    else
        json_decref(arr);
    return named;
}
