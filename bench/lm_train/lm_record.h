/* What each rank of lm_train reports: a fixed-size record gathered as bytes to rank 0. */
#ifndef LM_RECORD_H
#define LM_RECORD_H

#include <stdint.h>

#include "ga_outlier.h"
#include "ga_record.h"

#define LM_MAX_MEASUREMENTS (1 + GA_REMEASURE_MAX)

typedef struct {
    ga_record_header hdr;
    int32_t micro_batch, grad_accum, seq_len;
    int32_t steps_asked; /* --steps */
    int32_t steps_done;  /* optimiser steps taken: fewer when the time ran out or the loss went non-finite */
    int32_t timed_steps; /* steps after the warm-up, the ones the figures describe */
    int32_t nonfinite_step; /* first step whose global loss was NaN or Inf; -1 none */
    int32_t params_finite;  /* 1 when every parameter is finite after training */
    int64_t n_params;
    double loss_start,
        loss_end;        /* means of the global loss over the first and last windows (lm_loss_window) */
    double train_s;      /* wall time of the timed steps */
    double tokens_per_s; /* this rank's tokens over train_s */
    double step_ms_median, step_ms_worst; /* over the timed steps, wall time */
    double comm_wait_ms;                  /* mean per step blocked waiting for gradient communication */
    double comm_fraction;                 /* the wait's share of the step */
    double bytes_used;                    /* memory the trainer holds (device on GPUs) */
    double peak_tflops;                   /* the GPU's dense bf16 peak (ga_peaks), 0 unknown or host */
    uint64_t param_hash;                  /* FNV-1a over the parameter bytes */
    double param_sum;
    /* The scaling phase: this rank's group (its node, or --scaling-ranks) trained alone first; 0: not run. */
    int32_t group_size, group_index, group_steps;
    double group_tokens_per_s; /* this rank's tokens/s while its group trained alone */
    /* The straggler check's figure: the median compute time of a step (CPU time on the host path, the step
     * less the wait on GPUs), the best of the run's and each remeasurement window's. */
    int32_t compute_measured;
    double compute_ms;
    double compute_measurements[LM_MAX_MEASUREMENTS];
} lm_record;

#endif
