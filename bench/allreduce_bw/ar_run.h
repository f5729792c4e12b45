/* What allreduce_bw's patterns share: the run's state at rank 0, the sweep's descriptors from the options,
 * the backend and record helpers, and one runner per pattern (ar_world.c, ar_node_run.c, ar_pairs_run.c). */
#ifndef AR_RUN_H
#define AR_RUN_H

#include <jansson.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "ar_backend.h"
#include "ar_bench.h"
#include "ar_nccltests.h"
#include "ar_opts.h"
#include "ar_record.h"
#include "ar_analysis.h"
#include "ar_report.h"
#include "ga_backend.h"
#include "ga_findings.h"
#include "ga_runtime.h"

typedef struct {
    ar_dtype type;
    ar_op op;
} combo;

/* ---- world mode: one sweep per combination over every rank, printed as nccl-tests prints it ---- */

/* What the nccl-tests output accumulates over every line of every combination and cycle (rank 0). */
typedef struct {
    ar_nt_config cfg;
    json_t *json; /* -J document, or NULL */
    char json_path[1024];
    double bw_sum; /* busbw of every line and placement: the footer's average */
    int bw_count, out_of_bounds;
} nt_state;

/* nccl-tests' NCCL_TESTS_SPLIT_MASK: world rank r joins communicator (r & mask), each running the sweep on
 * its own; the table's line of a size covers every communicator. */
typedef struct {
    MPI_Comm comm; /* this rank's communicator (MPI_COMM_WORLD without a mask) */
    int color;     /* r & mask: the Group column */
    int group;     /* dense index of the communicator, 0 .. n_groups-1, by color */
    int n_groups, size;
    MPI_Comm leaders;   /* rank 0 of each communicator, MPI_COMM_NULL elsewhere or without a mask */
    int *world_rank_of; /* world rank 0: the world rank of each gathered sample, in gathered order */
} split_plan;

/* Every rank's record, as pointers, with the group each belongs to. */
typedef struct {
    const ar_record **recs;
    int *group_of;
    int n, n_groups;
} rec_set;

/* Rank 0 state of the whole run: the combinations' summaries, findings, the records shown under "nodes". */
typedef struct {
    ar_outcome out;          /* what the patterns concluded, for the report (ar_report.h) */
    ga_findings *findings;   /* the report's (ga_program_report) */
    ar_record *node_records; /* first combination (world) or first round (pairs) */
    double min_bw;           /* NCCL_TESTS_MIN_BW, -1 when unset */
    /* --min-busbw on the world sweep: measurements of its largest size (1 + remeasures) and the best busbw */
    int world_measurements;
    double world_best_busbw;
    /* Time as a budget (ar_budget.h): when the pattern running now should end (ga_now(); 0: no bound), on
     * every rank */
    double phase_deadline;
    /* every rank: the screen before the world sweep found a pair far below the others: the world sweep stops
     * at the judging size and isolation looks at small sizes */
    bool fabric_slow;
    /* every rank: the screen found a member low in every pair it was in (ar_screen.h): the pairs isolate it
     * by small sizes, one operation each, as for a slow fabric, while the world sweep runs */
    bool member_low;
    /* every rank: the screen's median pair busbw at the judging size (0: no screen); the world sweep stops
     * once it is far below it (ar_world_far_below_pairs) */
    double screen_pairs_busbw;
    /* every rank: the world's busbw when it fell far below the screen's median pair at a size (0: never) */
    double world_far_busbw;
    /* rank 0: what the screen found (kind NONE: nothing); if the pairs do not name its member, the report
     * says so (COMM_SLOW_UNCONFIRMED) */
    ar_screen_verdict screen;
} run_state;

/* nccl-tests' -u -G -R -x -y -M as ar_opts_finish left them for the backend that runs; set once in main. */
extern ar_backend_setup ar_backend_defaults;

/* The backend of this run's kind over comm, buffers for max_bytes; what names its communicator. Collective.
 */
ar_backend *ar_backend_open(ga_backend kind, MPI_Comm comm, size_t max_bytes, const char *what);
/* Every rank's record at rank 0 (*all, rank 0 only), the gather bounded by bound seconds. Collective. */
void ar_gather_records(const ga_ctx *ctx, const ar_record *mine, ar_record **all, double bound,
                       const char *what);
/* Collective: this rank's record cleared for its group (color; -1 for MPI_UNDEFINED, a rank sitting out) and
 * the world split by color into groups (named in the wait's message with what), the split bounded by bound
 * seconds. Returns this rank's group communicator (MPI_COMM_NULL when it sits out). */
MPI_Comm ar_split_groups(const ga_ctx *ctx, int color, ar_record *mine, double bound, const char *groups,
                         const char *what);
/* Collective over *gc: cfg's sweep on a backend of its own into mine; frees *gc. */
void ar_sweep_group(ga_backend kind, MPI_Comm *gc, const ar_sweep_cfg *cfg, ar_record *mine,
                    const char *label);
/* Rank 0: the first of rounds' records become the report's "nodes" (st->node_records) when no earlier pattern
 * gave them, else are freed; the others are freed. */
void ar_keep_first_records(run_state *st, ar_record **rounds_all, int rounds);
/* The pairs measured again (batch_of[i] >= 0, in index order) as list[k] = members a, b, batch, pair index.
 */
void ar_remeasure_list_fill(const ga_pair *pairs, int n_pairs, const int *batch_of, int (*list)[4]);
/* The entry of list (count of them) in batch that member me is in: its group's color, else MPI_UNDEFINED. */
int ar_remeasure_color(int (*list)[4], int count, int batch, int me);
void ar_rec_set_free(rec_set *s);
/* Every rank's record in its communicator: one, or one per NCCL_TESTS_SPLIT_MASK group. */
rec_set ar_rec_set_world(const ar_record *all, int n);
ar_sweep_desc ar_desc_of(const ar_opts *o, combo c, const uint64_t *sizes, int n_sizes);
ar_sweep_cfg ar_cfg_of(const ar_opts *o, combo c, const uint64_t *sizes, int n_sizes, const char *label);
/* Rank 0: one sweep's records handed to the report (ar_report_sweep). check_busbw: hold its busbw to
 * min_busbw; first: its figures are the world's headline ones. */
void ar_account_sweep(run_state *st, const ar_sweep_desc *d, const rec_set *set, double min_busbw,
                      bool check_busbw, bool first, const char *pattern);
/* Rank 0: the busbw at the largest size of the ranks of one group, and the iterations they ran. */
double ar_group_busbw(const ar_record *all, int n, int group, const ar_sweep_desc *d, int *iters);
/* Rank 0: the share of the largest size's out-of-place measurement that the group's least delayed rank
 * waited for a CPU (ar_sample.cpu_wait), -1 unknown. The least: a group is held up by the host only when all
 * of its ranks were (a rank slow for another reason sleeps or waits on its device, and its partners' waits
 * for a CPU while it does cost nothing). */
double ar_group_cpu_wait(const ar_record *all, int n, int group, const ar_sweep_desc *d);

/* The patterns. Collective over the world; rank 0 hands each one's outcome to the report (ar_report.h). */
void ar_run_world(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, const combo *combos, int n_combos,
                  const uint64_t *sizes, int n_sizes, const split_plan *split, nt_state *nt, run_state *st);
void ar_run_node(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                 int n_sizes, run_state *st, json_t *report);
void ar_run_pairs(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                  int n_sizes, run_state *st, json_t *report);
/* --pattern rails (ar_rails_run.c, ar_rails.h). */
void ar_run_rails(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                  int n_sizes, run_state *st, json_t *report);

/* Collective, before the world sweep: one round of pairs at the judging size, twice; true (on every rank)
 * when a pair was far below the others both times, so that the world's answer is known before it is measured.
 */
bool ar_pairs_screen(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                     int n_sizes, run_state *st);
/* Rank 0: one line of what the run did not cover (the report's "not_covered"), also logged. */
void ar_run_not_covered(run_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Collective: the communicators of NCCL_TESTS_SPLIT_MASK, or the world; 0, or -1 with a message. */
int ar_split_world(const ga_ctx *ctx, split_plan *sp, char *err, size_t errlen);
void ar_split_free(split_plan *sp);

#endif
