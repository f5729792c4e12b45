/* The training loop: each rank reads its shard of every global batch, steps its trainer, records the global
 * loss of every step and the timings, and prints [TRAIN] progress. It stops early, every rank at the same
 * step, when the steps left would not end by the phase's end (ga_train_budget.h). */
#ifndef DDP_TRAIN_H
#define DDP_TRAIN_H

#include <mpi.h>
#include <stdbool.h>

#include "ddp_data.h"
#include "ddp_trainer.h"

typedef struct {
    int steps;
    int rank, ranks, local_batch;
    int64_t dataset_size; /* for the epoch in progress lines */
    int warmup;           /* first steps left out of the timings */
    bool quiet;           /* no [TRAIN] progress lines (a remeasurement window) */
    double phase_end;     /* ga_now() time by which the steps must end (ga_train_phase_end); 0: no bound */
    MPI_Comm comm;        /* the ranks training together: they agree on the steps that fit */
} ddp_loop_config;

typedef struct {
    double *loss_curve;     /* steps entries, malloc'd: the global loss of each step */
    double *accuracy_curve; /* likewise */
    int steps_done;
    int nonfinite_step;          /* -1 none */
    int steps_planned;           /* the steps that fit the phase's time (c->steps when nothing was cut) */
    bool out_of_time;            /* steps_done < c->steps because the time was spent */
    int timed_steps;             /* the steps after the warm-up (at most half of those done) */
    double train_s, comm_wait_s; /* over the timed steps */
    double compute_s;            /* likewise, the steps' compute_s; -1 when a step had none (GPU) */
} ddp_loop_result;

void ddp_train_run(ddp_trainer *t, ddp_sampler *sampler, const ddp_loop_config *c, ddp_loop_result *out);
void ddp_loop_result_free(ddp_loop_result *r);

#endif
