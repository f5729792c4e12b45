#include "ar_nodes.h"

#include <stdlib.h>

#include "ga_stats.h"

void ar_nodes_add_measurement(ar_node_fig *n, double busbw)
{
    if (n->measured == 0 || busbw > n->busbw)
        n->busbw = busbw;
    n->measured++;
}

int ar_nodes_analyse(ar_node_fig *nodes, int n, double min_busbw, double tolerance, ar_nodes_verdict *out)
{
    out->median_busbw = 0;
    out->flagged = 0;
    double *bw = calloc((size_t)(n > 0 ? n : 1), sizeof *bw);
    if (!bw)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (nodes[i].ranks >= 2)
            bw[k++] = nodes[i].busbw;
    out->median_busbw = k ? ga_median(bw, (size_t)k) : 0;
    free(bw);
    for (int i = 0; i < n; i++) {
        ar_node_fig *nd = &nodes[i];
        nd->below_min = nd->below_median = false;
        if (nd->ranks < 2)
            continue; /* one rank: nothing crosses the node's links */
        nd->below_min = min_busbw > 0 && nd->busbw < min_busbw;
        /* one node has no peers: only the absolute floor applies to it */
        nd->below_median = k >= 2 && nd->busbw < out->median_busbw * (1.0 - tolerance);
        out->flagged += nd->below_min || nd->below_median;
    }
    return 0;
}

void ar_nodes_findings(const ar_node_fig *nodes, int n, const ar_nodes_verdict *v, double min_busbw,
                       double tolerance, ga_findings *f)
{
    for (int i = 0; i < n; i++) {
        const ar_node_fig *nd = &nodes[i];
        if (!nd->below_min && !nd->below_median)
            continue;
        ga_where w = {nd->host, nd->node, -1, -1};
        if (nd->below_min && nd->below_median)
            ga_findings_add(f, GA_SEV_FAIL, "COMM_NODE_BUSBW_LOW", w,
                            "%s node %d: intra-node busbw %.2f GB/s (best of %d) is below --min-node-busbw %.2f "
                            "GB/s and more than %.0f%% below the median node %.2f GB/s",
                            nd->host, nd->node, nd->busbw, nd->measured, min_busbw, tolerance * 100,
                            v->median_busbw);
        else if (nd->below_min)
            ga_findings_add(f, GA_SEV_FAIL, "COMM_NODE_BUSBW_LOW", w,
                            "%s node %d: intra-node busbw %.2f GB/s (best of %d) is below --min-node-busbw %.2f "
                            "GB/s",
                            nd->host, nd->node, nd->busbw, nd->measured, min_busbw);
        else
            ga_findings_add(f, GA_SEV_FAIL, "COMM_NODE_BUSBW_LOW", w,
                            "%s node %d: intra-node busbw %.2f GB/s (best of %d) is more than %.0f%% below the "
                            "median node %.2f GB/s",
                            nd->host, nd->node, nd->busbw, nd->measured, tolerance * 100, v->median_busbw);
    }
}
