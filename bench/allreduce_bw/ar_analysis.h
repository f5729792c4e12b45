/* From gathered records to what the user reads: the figures of each table line (printed by
 * ar_nccltests.c), the report's results and figures, and the findings of a sweep. Pure: no MPI, no CUDA. */
#ifndef AR_ANALYSIS_H
#define AR_ANALYSIS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ar_coll.h"
#include "ar_record.h"
#include "ar_sweep.h"
#include "ga_findings.h"

typedef struct {
    ar_coll_id coll;
    ar_dtype type;
    ar_op op;
    int root;
    const uint64_t *sizes;
    int n_sizes;
    ar_time_mode mode;
} ar_sweep_desc;

/* One size, both placements, over n ranks in n_groups communicators (1 for the world; pairs otherwise). The
 * time is the -a aggregate of each group's ranks; over several groups, the median of the groups'. Rank
 * figures (min, mean, max, slowest) are across all n ranks. */
typedef struct {
    uint64_t bytes; /* max(send, recv) bytes, as nccl-tests prints */
    size_t count;   /* the call's count */
    int group_size;
    ar_agg agg[AR_PLACEMENTS];
    double algbw[AR_PLACEMENTS], busbw[AR_PLACEMENTS];
} ar_line;

/* samples[i]: rank i's sample of this size; group_of[i]: its communicator (0 .. n_groups-1). Returns -1 when
 * out of memory. */
int ar_line_compute(const ar_sweep_desc *d, int size_index, const ar_sample *const *samples,
                    const int *group_of, int n, int n_groups, ar_line *out);

typedef struct {
    double avg_busbw;       /* mean busbw over every size and both placements (nccl-tests' footer) */
    double busbw_at_max;    /* out-of-place busbw at the largest size: the figure people compare */
    double busbw_at_max_ip; /* in-place busbw at the largest size */
    uint64_t max_bytes;
    int64_t wrong_total;
    int out_of_bounds; /* measurements (size x placement) with any wrong element */
    int n_lines;       /* the curve: busbw of each placement by message size */
    double bytes[AR_MAX_SIZES], busbw[AR_PLACEMENTS][AR_MAX_SIZES];
} ar_figures;

/* Adds a line to the figures (call once per size, in order, from n_lines_so_far = 0 on a zeroed fig). */
void ar_figures_add(ar_figures *f, const ar_line *l, int n_lines_so_far);

/* The results and figures of a sweep from the records of n ranks (recs[i] with group_of[i], as for
 * ar_line_compute). Returns a new array of result objects, and fills fig. */
json_t *ar_results_json(const ar_sweep_desc *d, const ar_record *const *recs, const int *group_of, int n,
                        int n_groups, ar_figures *fig);

/* COMM_WRONG_RESULT when any element was wrong (naming the rank with the most), COMM_BUSBW_LOW when
 * min_busbw > 0 and the busbw at the largest size is below it (check_busbw: only for the first combination).
 */
void ar_sweep_findings(const ar_sweep_desc *d, const ar_record *const *recs, int n, const ar_figures *fig,
                       double min_busbw, bool check_busbw, ga_findings *f);

/* The report's generic part of a sweep: busbw at the largest size and its average as headlines, busbw by
 * message size as a chart. what: "allreduce", or "allreduce, pairs" and such. */
void ar_figures_headlines(json_t *report, const ar_figures *fig, const char *what, int nranks, int nnodes);

#endif
