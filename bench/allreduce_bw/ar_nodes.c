#include "ar_nodes.h"

#include <stdio.h>
#include <stdlib.h>

#include "ga_outlier.h"

void ar_nodes_add_measurement(ar_node_fig *n, double busbw)
{
    if (n->measured == 0 || busbw > n->busbw)
        n->busbw = busbw;
    n->measured++;
}

int ar_nodes_analyse(ar_node_fig *nodes, int n, double min_busbw, double tolerance, ar_nodes_verdict *out)
{
    *out = (ar_nodes_verdict){.differ = {-1, -1}};
    double *bw = calloc((size_t)(n > 0 ? n : 1), sizeof *bw);
    ga_outlier_verdict *ov = calloc((size_t)(n > 0 ? n : 1), sizeof *ov);
    /* one rank: nothing crosses the node's links, so it has no figure and takes no part */
    for (int i = 0; bw && i < n; i++)
        bw[i] = nodes[i].ranks >= 2 ? nodes[i].busbw : -1;
    ga_outlier_rule rule = {tolerance, GA_HIGHER_IS_BETTER, 0};
    if (!bw || !ov || ga_outlier_judge(bw, n, &rule, ov) < 0) {
        free(bw);
        free(ov);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        ar_node_fig *nd = &nodes[i];
        nd->below_min = nodes[i].ranks >= 2 && min_busbw > 0 && nd->busbw < min_busbw;
        nd->below_median = ov[i].call == GA_OUTLIER_WORSE;
        nd->differs = ov[i].call == GA_OUTLIER_PAIR_DIFFERS;
        nd->bound = ov[i].members > 1 ? ov[i].bound : 0;
        out->median_busbw = ov[i].members ? ov[i].median : out->median_busbw;
        out->flagged += nd->below_min || nd->below_median;
        if (nd->differs && out->differ[0] < 0)
            out->differ[0] = i, out->differ[1] = ov[i].other;
    }
    free(bw);
    free(ov);
    return 0;
}

void ar_nodes_findings(const ar_node_fig *nodes, int n, const ar_nodes_verdict *v, double min_busbw,
                       double tolerance, ga_findings *f)
{
    for (int i = 0; i < n; i++) {
        const ar_node_fig *nd = &nodes[i];
        if (!nd->below_min && !nd->below_median)
            continue;
        ga_where w = {nd->host, nd->node, -1, -1, NULL};
        char floor[96] = "", outlier[160] = "";
        if (nd->below_min)
            snprintf(floor, sizeof floor, "below --min-node-busbw %.2f GB/s", min_busbw);
        if (nd->below_median)
            snprintf(outlier, sizeof outlier,
                     "below %.2f GB/s, the other nodes' bound (more than %.0f%% and beyond their noise below "
                     "the median node %.2f GB/s)",
                     nd->bound, tolerance * 100, v->median_busbw);
        ga_findings_add(f, GA_SEV_FAIL, "COMM_NODE_BUSBW_LOW", w,
                        "%s node %d: intra-node busbw %.2f GB/s (best of %d) is %s%s%s", nd->host, nd->node,
                        nd->busbw, nd->measured, floor, floor[0] && outlier[0] ? " and " : "", outlier);
    }
    if (v->differ[0] >= 0) {
        const ar_node_fig *a = &nodes[v->differ[0]], *b = &nodes[v->differ[1]];
        const ar_node_fig *lo = a->busbw <= b->busbw ? a : b, *hi = lo == a ? b : a;
        ga_findings_add(
            f, GA_SEV_WARN, "COMM_NODE_PEERS_DIFFER", GA_WHERE_CLUSTER,
            "the two nodes differ: %s node %d %.2f GB/s (best of %d) is %.1f%% below %s node %d %.2f "
            "GB/s (best of %d), beyond the tolerance %.0f%%; two nodes cannot say which is slow "
            "(--pattern pairs with a third node, or --min-node-busbw, can)",
            lo->host, lo->node, lo->busbw, lo->measured, 100.0 * (1.0 - lo->busbw / hi->busbw), hi->host,
            hi->node, hi->busbw, hi->measured, tolerance * 100);
    }
}
