#include "ar_nodes.h"

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
