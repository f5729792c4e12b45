/* mem_bw --p2p: the copy matrix between the GPUs of each node, every ordered pair (src -> dst) copied alone
 * and timed, as nvbandwidth's copy-engine test measures it; every node at once. Each pair is judged against
 * the node's own pairs by the outlier rule of every relative check (ga_outlier.h) and, where one is given, a
 * floor (--min-p2p: the SKU's link figure): MEM_P2P_SLOW node5 GPU2->GPU6. On the host path local ranks
 * stand for GPUs and copy through MPI shared memory (mb_p2p_host.c), so the analysis runs on real ranks.
 * Pure: records in, findings and the report's "p2p" out. */
#ifndef MB_P2P_H
#define MB_P2P_H

#include <jansson.h>
#include <stdbool.h>

#include "ga_findings.h"
#include "mb_record.h"

/* One ordered pair of one node. */
typedef struct {
    int node;
    char host[64];
    int src, dst;           /* local indexes (GPUs) */
    int src_rank, dst_rank; /* their world ranks (-1 unknown) */
    double GBps;            /* the best repetition (0: not copied, state says why) */
    int state;              /* enum mb_p2p_state */
    char note[96];          /* the source rank's reason, when not copied */
    bool slow;              /* set by mb_p2p_judge: an outlier among the node's pairs, or below the floor */
    double bound;           /* set by mb_p2p_judge: the figure it fell below (0: not judged) */
} mb_p2p_pair;

/* The pairs the records hold (each rank's row: its copies to the other local ranks), into *out (malloc'd,
 * free it); returns how many, -1 when memory runs out. */
int mb_p2p_pairs(const mb_record *all, int n, mb_p2p_pair **out);

/* Judges the copied pairs node by node (tolerance: a fraction; floor GB/s, <= 0: none); MEM_P2P_SLOW for
 * each slow pair, MEM_P2P_UNAVAILABLE for each pair not copied (f NULL: none, the verdict alone). *part (NULL
 * allowed): the report's "p2p". Returns the pairs named, -1 when memory runs out. */
int mb_p2p_judge(mb_p2p_pair *pairs, int n, double tolerance, double floor, ga_findings *f, json_t **part);

#endif
