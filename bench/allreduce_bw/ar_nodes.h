/* Per-node collectives (--pattern node): every node runs its own sweep at once on a communicator of its own
 * ranks, and each node's busbw at the largest size is held to an absolute floor (--min-node-busbw, the SKU's
 * intra-node figure) and, with three nodes or more, to the other nodes by the one outlier rule of every
 * relative check (common/core/ga_outlier.h: below the median by more than the tolerance and the noise of the
 * nodes' figures). A node below either is named. Two nodes never blame one: when they differ by more than the
 * tolerance a warning names both. Pure, so that fixtures describe clusters of any size; the findings are
 * the report's (ar_report.h). */
#ifndef AR_NODES_H
#define AR_NODES_H

#include <stdbool.h>

#define AR_NODES_HOST_MAX 64

typedef struct {
    int node;                     /* node index */
    char host[AR_NODES_HOST_MAX]; /* its host */
    int rank;                     /* its first world rank */
    int ranks;                    /* ranks on it (a node of one rank has no intra-node figure) */
    double busbw;                 /* GB/s at the largest size, out-of-place: the best of its measurements */
    int measured;
    bool below_min, below_median; /* set by ar_nodes_analyse: below_median is the outlier rule's call */
    bool differs;                 /* set by ar_nodes_analyse: one of two nodes whose figures differ */
    double bound;                 /* set by ar_nodes_analyse: the figure below which it is an outlier (0: not
                                   * judged against the others) */
} ar_node_fig;

typedef struct {
    double median_busbw; /* of the nodes with a figure */
    int flagged;         /* nodes below either bound (the two-node warning flags neither) */
    int differ[2];       /* two nodes with a figure that differ: their indices; else -1, -1 */
} ar_nodes_verdict;

/* The best of the node's measurements (why the best: ga_pairs_add_measurement). */
void ar_nodes_add_measurement(ar_node_fig *n, double busbw);

/* min_busbw <= 0: no absolute floor. Sets below_min/below_median/differs/bound and fills out. 0, or -1 when
 * memory runs out. */
int ar_nodes_analyse(ar_node_fig *nodes, int n, double min_busbw, double tolerance, ar_nodes_verdict *out);

#endif
