/* Whether a data-parallel training step is dominated by its gradient communication, and by whom (ddp_smoke,
 * lm_train). Pure.
 *
 * The rule. Each rank's exposed share is the time it waited for gradients per step over its step. The
 * figure judged is the median of the ranks' shares with the lowest left out (the rank the others waited for
 * does not wait itself). Above GA_COMM_SHARE_MAX the step is dominated by communication: the waits are 19
 * times what the rest of the step takes, where a healthy step that overlaps its reduction with backward
 * leaves them well below (ddp_smoke's host path, 4 ranks on 2 cores at a load of 8-9, where waiting for a
 * descheduled peer counts as communication, reached 82 %; docs/ddp_smoke.md). The callers judge it only while
 * no rank computes slower than its peers (their straggler check), so the waits are not explained by compute.
 * Then a rank whose own wait is below GA_COMM_WAITED_FOR of the others' median is the rank the others waited
 * for, named alone when it is the only one; otherwise every rank waited alike, which points at the fabric
 * between them. */
#ifndef GA_COMMSHARE_H
#define GA_COMMSHARE_H

#include <stdbool.h>

#include "ga_findings.h"

#define GA_COMM_SHARE_MAX 0.95
#define GA_COMM_WAITED_FOR 0.25

typedef struct {
    bool dominates;     /* the share is above GA_COMM_SHARE_MAX */
    double share;       /* the ranks' median exposed share, the lowest left out; 0 for fewer than 2 ranks */
    int waited_for;     /* index of the one rank the others waited for; -1 none stands out */
    double others_wait; /* the median wait of the ranks other than waited_for (all when -1), per step */
    double step;        /* the median step of the same ranks */
} ga_comm_verdict;

/* wait[i], step[i]: rank i's wait for gradients and its step, per step, in any one unit; ranks with no step
 * (step <= 0: failed, or no timed steps) are left out. */
void ga_comm_judge(const double *wait, const double *step, int n, ga_comm_verdict *v);

/* The warning code (DDP_COMM_DOMINATES, TRAIN_COMM_DOMINATES) for a verdict that dominates: at the rank the
 * others waited for (where, rank, host: its figures; rank_wait_ms its own wait) or, with waited_for -1, at
 * the cluster, naming the fabric. Figures in ms. Nothing when the verdict does not dominate. */
void ga_comm_add_finding(ga_findings *f, const char *code, const ga_comm_verdict *v, ga_where where, int rank,
                         const char *host, double rank_wait_ms);

#endif
