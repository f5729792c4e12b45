/* allreduce_bw's model of its own run time for `gpuaccept run --dry-run`: the registry's entry
 * (allreduce_bw_estimate, ga_estimate.h) in ar_estimate.c, its plan phase by phase on a virtual clock in
 * ar_estimate_plan.c. Here for the two files and the estimate's unit test; the front-end never includes it.
 */
#ifndef AR_ESTIMATE_H
#define AR_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "ga_estimate.h"

/* The time of one allreduce-family operation of size_bytes (nccl-tests' counting) on a communicator of ranks
 * ranks over nodes nodes (1: within a node), slow: it crosses the slow node's links. The alpha-beta model:
 * alpha(nodes) + bus_factor(ranks) * bytes / busbw. coll and type: an ar_coll_id and an ar_dtype. */
double est_op_s(const ga_est_figures *f, int coll, int type, size_t size_bytes, int ranks, int nodes,
                bool slow);

/* The most ranks the estimate plans: a report's own bound on world_size. */
#define AR_EST_MAX_RANKS (1 << 24)

/* allreduce_bw's plan on a virtual clock. */
typedef struct {
    double total_s;                            /* the program's run, launch excluded */
    double screen_s, world_s, node_s, pairs_s; /* its phases */
    int rounds_asked, rounds_run, members;
    double pairs_share_s, round_s; /* the pairs' time when they start (0: no limit), the slowest round */
    long long pairs_tested, pairs_total; /* members * (members - 1) / 2 outgrows an int (issue 45, item 6) */
    long long ring_tested;               /* of them ring neighbours (ga_pairs.h), of members (1 for 2) */
    bool by_rank;
    char cut[512];    /* what the plan cut, as the program's not_covered says it ("; " between) */
    int n_sizes;      /* the sweep's sizes */
    double timeout_s; /* the --timeout it ran under (the profile's words may give their own), 0 none */
} est_ar_plan;

/* Models allreduce_bw run with argv (argc words, argv[0] the program) on nodes x ranks_per_node, with
 * timeout_s its --timeout (0: none, the whole plan) and slow: one node slow. rounds_override > 0 replaces
 * --rounds. 0, or -1 with a message (the program would refuse the arguments). */
int est_allreduce_bw(const ga_est_figures *f, int argc, char **argv, int nodes, int ranks_per_node,
                     double timeout_s, bool slow, int rounds_override, est_ar_plan *out, char *err,
                     size_t errlen);

#endif
