/* allreduce_bw's report from what the runners measured. The MPI runners (ar_world.c, ar_node_run.c,
 * ar_pairs_run.c) only measure and fill the plain outcomes below; this one pure module (no MPI, no CUDA)
 * turns them into the findings, the report's parts (each combination's entry, "summary" with its "node" and
 * "pairs", "conditions", "not_covered") and the metrics and headlines. The fixtures (ctest/allreduce_bw:
 * nodes, pairs, summary, outcomes) run it on outcomes written as JSON. */
#ifndef AR_REPORT_H
#define AR_REPORT_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "ar_analysis.h"
#include "ar_nodes.h"
#include "ar_opts.h"
#include "ar_screen.h"
#include "ga_findings.h"
#include "ga_pairs.h"

/* What the patterns concluded so far, at rank 0. The JSON members are the report's parts, taken by
 * ar_summary_fill. */
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

/* One sweep's records: every rank of its communicators (recs[i] in group_of[i], 0 .. n_groups-1). */
typedef struct {
    ar_sweep_desc desc; /* the sizes it ran */
    const ar_record *const *recs;
    const int *group_of;
    int n, n_groups;
    const char *pattern; /* "world", "node" or "pairs": its combination entry's */
    double min_busbw;    /* held to it when check_busbw */
    bool check_busbw;
    bool first;        /* the world's first combination: its figures are the headline ones */
    int measurements;  /* first: measurements of its largest size (1 + --min-busbw's remeasurements) */
    double best_busbw; /* and the best busbw among them, which the floor holds */
} ar_sweep_outcome;

/* --pattern node: every node's figure at the largest size the node sweeps reached. */
typedef struct {
    ar_node_fig *nodes; /* best of each node's measurements; ar_report_nodes sets their verdict fields */
    int n;
    uint64_t size; /* the size they were judged at */
} ar_nodes_outcome;

/* A member of the pairs as the report names it: its host and first world rank. */
typedef struct {
    char host[GA_PAIRS_HOST_MAX];
    int rank;
} ar_member_id;

/* --pattern pairs: every pair of every round at the one size all rounds reached, each with its
 * measurements. */
typedef struct {
    ga_pair *pairs; /* ar_report_pairs sets their verdict fields */
    int n_pairs;
    int rounds;              /* rounds that ran */
    int members;             /* nodes, or the ranks of one node (by_rank) */
    bool by_rank;            /* one node: pairs of ranks */
    bool cpus_shared;        /* a node has more ranks than CPUs (ga_pairs_analyse) */
    const ar_member_id *ids; /* [members]: who each member is, for the pairs no round tested */
    /* the world sweep's busbw far below the screen's median pair (0: it was not; ar_world.c), and that
     * pair's: the world's slow link is then among the pairs its ring used, the ring neighbours */
    double world_far_busbw, screen_busbw;
    /* what the screen found (run_state's screen; kind NONE: nothing): a member the pairs do not name is a
     * warning */
    ar_screen_verdict screen;
} ar_pairs_outcome;

/* The run's facts beside the outcome. */
typedef struct {
    const ar_opts *o;
    const char *backend; /* "nccl", "mpi" */
    ar_dtype type;       /* the first combination's */
    ar_op op;
    int world_size, node_count;
} ar_summary_facts;

/* One line of what the run did not cover (the report's "not_covered"), also logged. */
void ar_outcome_note(ar_outcome *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ar_outcome_vnote(ar_outcome *out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* What one sweep adds: its combination entry, the totals and its findings (COMM_WRONG_RESULT,
 * COMM_BUSBW_LOW). */
void ar_report_sweep(ar_outcome *out, ga_findings *f, const ar_sweep_outcome *s);
/* A sweep stopped at reached of asked for lack of time: one COMM_SWEEP_CUT warning for the run, so that a
 * verdict never reads as a whole measurement when it was not (issue 41, observation 8). */
void ar_report_sweep_cut(ga_findings *f, const char *pattern, uint64_t reached, uint64_t asked);
/* nccl-tests' NCCL_TESTS_MIN_BW (min_bw < 0: unset) held to the footer's average busbw. */
void ar_report_min_bw(ga_findings *f, double avg_busbw, double min_bw);

/* The node pattern: its verdict, findings, the summary's "node" part, the node_busbw metrics and the slowest
 * node's figure. 0, or -1 when memory runs out. */
int ar_report_nodes(const ar_opts *o, ar_nodes_outcome *nodes, ga_findings *f, json_t *report,
                    ar_outcome *out);
/* The pairs: their verdict, findings, the summary's "pairs" part with its coverage, what was not judged, the
 * pair_busbw metrics. 0, or -1 when memory runs out. */
int ar_report_pairs(const ar_opts *o, ar_pairs_outcome *p, ga_findings *f, json_t *report, ar_outcome *out);

/* COMM_NODE_BUSBW_LOW for each flagged node, naming it and the bound it missed; COMM_NODE_PEERS_DIFFER (a
 * warning) naming both of two nodes that differ. */
void ar_nodes_findings(const ar_node_fig *nodes, int n, const ar_nodes_verdict *v, double min_busbw,
                       double tolerance, ga_findings *f);
/* COMM_SLOW_NODE for each suspect, COMM_SLOW_LINK for each slow link. by_rank: members are ranks of one node
 * (names the rank and GPU rather than the node). */
void ar_pairs_findings(const ga_pair *pairs, int n, const ga_pairs_verdict *v, double tolerance, bool by_rank,
                       ga_findings *f);

/* Sets the report's "summary", "conditions" and "not_covered", and adds the world's metrics and every
 * pattern's headlines. Takes the outcome's JSON members (they are NULL after). */
void ar_summary_fill(json_t *report, const ar_summary_facts *facts, ar_outcome *out);

#endif
