/* The checks of a training run, from the gathered records: the loss fell, nothing went non-finite, and every
 * replica ends bit-identical. Pure: no MPI, no CUDA, so they are tested with fixtures of a large cluster. */
#ifndef DDP_ANALYSIS_H
#define DDP_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp_record.h"
#include "ga_findings.h"

typedef struct {
    uint64_t hash; /* FNV-1a 64 over the bytes */
    double sum;
    bool finite;
} ddp_digest;

/* n parameters of elem_size bytes (8: double, 4: float). */
void ddp_params_digest(const void *params, size_t n, size_t elem_size, ddp_digest *out);

/* Steps averaged for the start and end loss: a tenth of the run, 1 to 20 steps. */
int ddp_loss_window(int steps);
/* Mean of curve[from .. from+count). */
double ddp_mean(const double *curve, int from, int count);

typedef struct {
    double min_improvement; /* (start - end) / start must reach it */
    int global_batch;
    double straggler_ratio; /* a rank computing this much slower than the median (and beyond the others'
                             * noise, by the outlier rule) is a warning; 0: no check */
    bool cut_short;         /* the time ran out before the steps asked: --min-improvement, a bound for the
                             * whole run, is not judged on the steps taken (DDP_LOSS_NOT_JUDGED, a warning) */
} ddp_check_opts;

typedef struct {
    double loss_start, loss_end, improvement, accuracy_end;
    double samples_per_s; /* global: global_batch * timed_steps / slowest rank's train_s */
    double step_time_ms;  /* slowest rank's mean step time */
    double comm_wait_ms;  /* mean over ranks */
    double comm_fraction; /* mean over ranks */
    int steps;
    bool replicas_identical;
    int reference_rank; /* the rank whose parameters the majority shares */
    uint64_t reference_hash;
    int n_mismatched;
    int *mismatched; /* world ranks, malloc'd: ddp_outcome_free */
} ddp_outcome;

/* Adds findings: DDP_NONFINITE, DDP_REPLICA_MISMATCH (one per rank that differs from the majority),
 * DDP_LOSS_NOT_IMPROVED, DDP_RANK_FAILED, and the warnings DDP_STRAGGLER (a rank whose compute time is an
 * outlier of the others', common/core/ga_outlier.h) and DDP_PEERS_DIFFER (two ranks whose compute times
 * differ by more than the straggler ratio: two never blame one), and, while no rank is either,
 * DDP_COMM_DOMINATES (gradient communication far beyond its share of the step, ga_commshare.h). */
void ddp_analyse(const ddp_record *all, int n, const ddp_check_opts *o, ga_findings *f, ddp_outcome *out);
void ddp_outcome_free(ddp_outcome *out);

/* Whether a rank would be called a straggler or two ranks differ: then every rank measures its compute time
 * again (--remeasure). why: "rank 3 computes 2.1x the median". */
bool ddp_straggler_suspects(const ddp_record *all, int n, const ddp_check_opts *o, char *why, size_t why_len);

/* A remeasurement window's compute time per step into r: appended, and kept when it is the best. */
void ddp_add_compute(ddp_record *r, double compute_ms);

#endif
