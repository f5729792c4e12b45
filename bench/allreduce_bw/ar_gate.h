/* The judgement between groups that sweep at once (the pairs of a round, the nodes): after each size every
 * rank of the world shares its time, every rank computes each group's busbw and which groups are far below
 * their peers (ar_budget.h), and so every rank answers alike: a group far below at two sizes runs one timed
 * operation per size from then on; a group far below twice (ar_far_below_peers at AR_FAR_TIMES sizes from the
 * judging size) is judged, and with cut_on_judged the sweep of every group stops there, so that the groups
 * stay comparable at one size; past the deadline (any rank's clock) every group stops. The peers are the
 * groups of this sweep and of the earlier sweeps the gate saw (the earlier rounds), at the same size. */
#ifndef AR_GATE_H
#define AR_GATE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "ar_bench.h"

typedef struct {
    ar_gate base;
    /* set by the runner */
    ar_coll_id coll;
    ar_dtype type;
    const uint64_t *sizes;
    int n_sizes;
    int judge_from;     /* first size index whose figures count towards a judgement */
    bool cut_on_judged; /* pairs: stop every group once one is judged */
    double deadline;    /* ga_now() by which the sweep stops (0: none) */
    int my_group;       /* this rank's group in the sweep being run, -1 when it sits out */
    double size_bound;  /* the wait for the slowest group's size (0: the default wait bound) */
    const char *what;   /* names the groups in the log ("round 2 pair", "node") */
    /* kept across sweeps: per size, the busbw of every group measured there (rank 0's copy is the same as
     * every rank's) */
    int n_hist[64];
    double *hist[64];
    /* the sweep being run, per group: far counts, one-op flags, judged flags */
    int n_groups;
    int *far_count; /* far below at sizes from judge_from on */
    int *far_seen;  /* far below at any size */
    bool *one_op, *judged;
    /* why and where the last sweep stopped: -1 not stopped */
    int stopped_at;
    bool stopped_late, stopped_judged;
    double *times; /* scratch: every rank's (group, time, late) */
} ar_group_gate;

/* Collective state on every rank: n_groups groups in the sweep that follows. */
void ar_group_gate_begin(ar_group_gate *g, int n_groups, int my_group);
/* Whether group k was judged far below its peers in the sweep just run. */
bool ar_group_gate_judged(const ar_group_gate *g, int k);
void ar_group_gate_free(ar_group_gate *g);
/* A gate for sizes[0..n_sizes-1] of one collective; judgements from judge_from on. */
void ar_group_gate_init(ar_group_gate *g, ar_coll_id coll, ar_dtype type, const uint64_t *sizes, int n_sizes,
                        int judge_from, bool cut_on_judged, double deadline);

#endif
