/* What each rank reports after training: a fixed-size record gathered as bytes to rank 0. */
#ifndef DDP_RECORD_H
#define DDP_RECORD_H

#include <stdint.h>

#include "ga_outlier.h"
#include "ga_record.h"

#define DDP_MAX_MEASUREMENTS (1 + GA_REMEASURE_MAX)

typedef struct {
    ga_record_header hdr;
    int32_t local_batch;
    int32_t steps_done;     /* optimiser steps taken (fewer than asked when the loss went non-finite) */
    int32_t timed_steps;    /* steps after the warm-up, the ones the figures describe */
    int32_t nonfinite_step; /* first step whose global loss was NaN or Inf; -1 none */
    int32_t params_finite;  /* 1 when every parameter is finite after training */
    int32_t n_buckets;
    int64_t n_params;
    double loss_start, loss_end; /* means over the first and last loss windows (ddp_loss_window) */
    double accuracy_end;         /* mean training accuracy over the last window */
    double train_s;              /* wall time of the timed steps */
    double step_time_ms;         /* mean over the timed steps */
    double comm_wait_ms;         /* mean time per step blocked waiting for gradient communication */
    double comm_fraction;        /* comm_wait_ms / step_time_ms */
    double samples_per_s;        /* this rank's samples: local_batch * timed_steps / train_s */
    uint64_t param_hash;         /* FNV-1a over the parameter bytes */
    double param_sum;            /* sum of the parameters, for the eye */
    /* This rank's own figure, which the straggler check compares: its compute time per step (the step less
     * the wait for gradients; every rank's step time is the same in synchronous training). The best of the
     * training run's timed steps and each remeasurement window (--remeasure); 0 measured: step - wait. */
    int32_t compute_measured;
    double compute_ms;
    double compute_measurements[DDP_MAX_MEASUREMENTS];
} ddp_record;

/* The rank's compute time per step: compute_ms when measured, else step_time_ms - comm_wait_ms. */
double ddp_compute_ms(const ddp_record *r);

#endif
