/* One training step of one rank, behind a small interface with two implementations: the host path (double,
 * OpenBLAS, MPI_Iallreduce) and the GPU path (float, cuBLAS, CUDA kernels, NCCL on a second stream). The
 * training loop (ddp_train.c) does not know which one it drives. */
#ifndef DDP_TRAINER_H
#define DDP_TRAINER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp_bucket.h"
#include "ddp_model.h"
#include "ddp_optim.h"

typedef struct {
    const ddp_layout *layout;
    size_t bucket_cap_bytes;
    int local_batch, global_batch;
    ddp_sgd sgd;
    uint64_t seed;
    double comm_timeout_s; /* bound on any one wait for gradient communication */
    double slow_factor;    /* test hook (host path): this rank's forward and backward take this many times as
                            * long (GPUACCEPT_TEST_SLOW_FACTOR); 1 otherwise */
    double delay_s;        /* test hook (host path): this rank starts each step this late, asleep */
} ddp_trainer_config;

typedef struct {
    double loss, accuracy; /* of the global batch: identical on every rank */
    double comm_wait_s;    /* time the step was blocked waiting for gradient communication */
    double compute_s;      /* host path: CPU time of this rank's forward, backward and update (its cores' own
                            * time, whatever else the host runs); -1 where the wall clock is the figure (GPU) */
} ddp_step_result;

typedef struct ddp_trainer ddp_trainer;
struct ddp_trainer {
    const char *backend; /* "host" or "gpu" */
    const char *dtype;   /* "fp64" or "fp32" */
    size_t elem_size;
    ddp_bucket_plan plan;
    /* Forward, backward with bucketed gradient averaging, optimiser update. x: local_batch x input floats. */
    void (*step)(ddp_trainer *t, const float *x, const int32_t *labels, ddp_step_result *out);
    /* The parameters on the host (the GPU path copies them back): layout->n_params of elem_size bytes. */
    const void *(*params)(ddp_trainer *t);
    /* Test only (GPUACCEPT_TEST_PERTURB_RANK): moves one parameter by one ulp. */
    void (*perturb)(ddp_trainer *t);
    void (*destroy)(ddp_trainer *t);
};

/* Both collective over comm: the initial parameters are rank 0's, broadcast as DDP frameworks do. */
ddp_trainer *ddp_host_trainer_create(const ddp_trainer_config *cfg, MPI_Comm comm);
#if GA_HAVE_CUDA
ddp_trainer *ddp_gpu_trainer_create(const ddp_trainer_config *cfg, MPI_Comm comm);
#endif

#endif
