/* lm_train's training loop: each rank draws its share of every global batch, steps its trainer, records the
 * global loss and its step times, prints [TRAIN] progress, and stops when the steps asked are done or the
 * phase's time is spent (every rank stops at the same step: they agree after each). */
#ifndef LM_LOOP_H
#define LM_LOOP_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "lm_data.h"
#include "lm_trainer.h"

/* Where the tokens come from: the synthetic chain, or a shard when shard is set. */
typedef struct {
    const lm_markov *markov;
    const lm_shard *shard;
} lm_source;

typedef struct {
    int steps; /* at most */
    int micro_batch, grad_accum, seq_len;
    uint64_t first_sequence; /* the phase's start in the stream: phases read different sequences */
    int warmup;              /* first steps left out of the timings */
    double phase_end;        /* ga_now() time at which no step may start that would not end by it; 0 none */
    MPI_Comm comm;           /* the ranks training together */
    bool quiet;              /* no [TRAIN] progress lines (a remeasurement window, a scaling group) */
    const char *what;        /* "training", "remeasurement", "scaling group 2" */
} lm_loop_config;

typedef struct {
    double *loss_curve; /* steps entries, malloc'd: the global loss of each step */
    int steps_done, timed_steps;
    int nonfinite_step; /* -1 none */
    bool out_of_time;   /* stopped before the steps asked: the phase's time was spent */
    double train_s, comm_wait_s;
    double *step_s, *compute_s; /* timed_steps entries each: wall time, compute time of each timed step */
    double last_grad_norm;
} lm_loop_result;

/* Collective over c->comm. Returns 0, or -1 with err when the trainer failed (its message). */
int lm_loop_run(lm_trainer *t, const lm_source *src, const lm_loop_config *c, lm_loop_result *out, char *err,
                size_t errlen);
void lm_loop_result_free(lm_loop_result *r);

#endif
