/* lm_train's checks, from the gathered records: the loss fell toward the data's floor, nothing went
 * non-finite, every replica ends bit-identical, no rank's step is an outlier of its peers' (the suite's one
 * rule, ga_outlier), and the throughput figures (tokens/s, MFU, scaling efficiency) against their floors.
 * Pure: no MPI, no CUDA, so they are tested with fixtures of a large cluster. */
#ifndef LM_ANALYSIS_H
#define LM_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ga_findings.h"
#include "lm_record.h"

/* FNV-1a 64 over n floats' bytes; their sum; whether all are finite. */
void lm_params_digest(const float *params, size_t n, uint64_t *hash, double *sum, bool *finite);

/* Steps averaged for the start and end loss: a tenth of the run, 1 to 20 steps. */
int lm_loss_window(int steps);
/* Mean of curve[from .. from+count); NAN when there is nothing to average. */
double lm_mean(const double *curve, int from, int count);
/* The median of n values (copied; the input is left as it is); NAN for none. */
double lm_median_of(const double *v, int n);

typedef struct {
    double
        min_improvement; /* fraction of the way from the start loss to loss_floor the loss must fall; 0 off */
    double loss_floor;   /* the synthetic stream's entropy; 0 for a shard (its entropy is unknown) */
    double ln_vocab;     /* ln V: where an untrained model starts */
    double straggler_ratio;    /* compute time over the peers' median that is a straggler warning; 0 off */
    double flops_per_token;    /* lm_flops_per_token(LM_FLOPS_LLMC) */
    double min_mfu;            /* fraction; 0: reported only */
    double min_scaling;        /* fraction; 0: reported only */
    double min_tokens_per_gpu; /* tokens/s per GPU; 0: reported only */
    bool floors_estimated;     /* the two floors above are estimates: below them is a warning */
    bool cut_short; /* the time ran out before the steps asked: --min-improvement, a bound for the whole run,
                     * is not judged on the steps taken (TRAIN_LOSS_NOT_JUDGED, a warning) */
    int64_t tokens_per_step; /* the global batch in tokens: ranks x micro-batch x accumulation x T */
} lm_check_opts;

typedef struct {
    double loss_start, loss_end;
    double improvement; /* (start - end) / (start - floor) */
    int steps, timed_steps;
    double tokens_per_s;         /* the job's: tokens_per_step * timed steps / the slowest rank's train_s */
    double tokens_per_s_per_gpu; /* the job's over its ranks */
    double step_ms_median;       /* median over ranks of their median step */
    double step_ms_worst;        /* the worst step of any rank */
    double comm_fraction;        /* mean over ranks */
    double peak_tflops;          /* per GPU; 0 when a rank's is unknown (host path) */
    double mfu;                  /* NAN without a peak */
    double single_tokens_per_s_per_gpu; /* the scaling phase's median per rank; NAN not run */
    double scaling_efficiency;          /* tokens_per_s_per_gpu over it; NAN not run */
    double bytes_used_max;
    bool replicas_identical;
    int reference_rank;
    uint64_t reference_hash;
    int n_mismatched;
    int *mismatched; /* world ranks, malloc'd: lm_outcome_free */
    int n_stragglers;
} lm_outcome;

/* Adds findings: TRAIN_RANK_FAILED, TRAIN_NONFINITE, TRAIN_REPLICA_MISMATCH (each rank that differs from the
 * majority), TRAIN_LOSS_NOT_IMPROVED, TRAIN_MFU_LOW, TRAIN_THROUGHPUT_LOW, TRAIN_SCALING_LOW, and the
 * warnings TRAIN_STRAGGLER (a rank whose step compute time is an outlier of its peers') and
 * TRAIN_PEERS_DIFFER (two ranks that differ: two never blame one), and, while no rank is either,
 * TRAIN_COMM_DOMINATES (gradient communication far beyond its share of the step, ga_commshare.h). */
void lm_analyse(const lm_record *all, int n, const lm_check_opts *o, ga_findings *f, lm_outcome *out);
void lm_outcome_free(lm_outcome *out);

/* Whether a rank would be called a straggler or two ranks differ: then every rank measures its compute time
 * again (--remeasure). why: "rank 3 computes a step in 21 ms, 3.1x the median 6.8 ms". */
bool lm_straggler_suspects(const lm_record *all, int n, const lm_check_opts *o, char *why, size_t why_len);

/* The rank's compute time per step: compute_ms when measured, else its median step less the mean wait. */
double lm_compute_ms(const lm_record *r);
/* A window's compute time per step into r: appended, kept when it is the best. */
void lm_add_compute(lm_record *r, double compute_ms);

#endif
