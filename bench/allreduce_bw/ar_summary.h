/* allreduce_bw's report from what a run concluded: its summary (the first combination's results, every
 * combination, the patterns that ran and their parts), its conditions, its metrics and headlines. Pure: no
 * MPI, no CUDA; the runners fill an ar_outcome as they go (ar_run.h) and main.c hands it here at the end. */
#ifndef AR_SUMMARY_H
#define AR_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ar_analysis.h"
#include "ar_opts.h"

/* What the patterns concluded, at rank 0. The JSON members are the report's parts, taken by ar_summary_fill.
 */
typedef struct {
    json_t *combos;        /* each combination's entry, the first one's results first */
    json_t *pairs;         /* pairs pattern: the "pairs" object, else NULL */
    json_t *node;          /* node pattern: the "node" object, else NULL */
    json_t *phases;        /* each pattern's seconds and share of the time */
    json_t *not_covered;   /* what the plan cut */
    bool ran[AR_PATTERNS]; /* the patterns that ran */
    double node_busbw_min; /* the slowest node's own busbw (node pattern) */
    int64_t wrong_total;   /* wrong elements over every combination */
    int out_of_bounds;     /* measurements with any wrong element */
    ar_figures first_fig;  /* the first combination's figures: the headline ones */
    double pair_median_busbw;
    int pairs_flagged;
} ar_outcome;

/* The run's facts beside the outcome. */
typedef struct {
    const ar_opts *o;
    const char *backend; /* "nccl", "mpi" */
    ar_dtype type;       /* the first combination's */
    ar_op op;
    int world_size, node_count;
} ar_summary_facts;

/* Sets the report's "summary", "conditions" and "not_covered", and adds its metrics and headlines. Takes the
 * outcome's JSON members (they are NULL after). */
void ar_summary_fill(json_t *report, const ar_summary_facts *facts, ar_outcome *out);

#endif
