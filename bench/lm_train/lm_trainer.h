/* One data-parallel training step of one rank behind one interface with two implementations: the host path
 * (fp32, OpenBLAS, each block's gradients averaged with MPI_Iallreduce as backward leaves the block) and the
 * GPU path (bf16 compute beside fp32 master weights, cuBLASLt, the kernels of lm_math.h, each block's bucket
 * averaged with NCCL (ncclAvg) on a second stream while backward goes on; ZeRO-1 as an option). The training
 * loop (budget, timing, records) does not know which one it drives. */
#ifndef LM_TRAINER_H
#define LM_TRAINER_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lm_config.h"
#include "lm_data.h"
#include "lm_model.h"

typedef struct {
    lm_config cfg;
    int micro_batch;       /* B: sequences per micro-batch per rank */
    int grad_accum;        /* micro-batches per optimiser step */
    lm_optim_config optim; /* AdamW, schedule, clipping */
    uint64_t seed;         /* initial weights (rank 0's, broadcast) and the synthetic stream */
    bool zero1;            /* GPU path: reduce-scatter, update the shard, all-gather */
    double comm_timeout_s; /* bound on any one wait for gradient communication */
    double slow_factor;    /* test hook (host path): this rank's compute takes this many times as long */
    double delay_s;        /* test hook (host path): this rank starts each step this late, asleep */
} lm_trainer_config;

typedef struct {
    double loss;        /* mean cross-entropy of the global batch: identical on every rank */
    double grad_norm;   /* global gradient norm before clipping */
    double step_s;      /* wall time of the whole step on this rank */
    double compute_s;   /* host path: CPU time of forward, backward and update; GPU: events' time; -1 none */
    double comm_wait_s; /* time the step was blocked waiting for gradient communication (exposed comm) */
} lm_step_result;

typedef struct lm_trainer lm_trainer;
struct lm_trainer {
    const char *backend; /* "host" or "gpu" */
    const char *dtype;   /* "fp32" or "bf16" */
    size_t n_params;
    double bytes_used; /* device (GPU) or host memory the trainer holds, measured where it can be */
    /* One optimiser step over grad_accum micro-batches of tokens/targets (B x T each, consecutive). */
    int (*step)(lm_trainer *t, const int *tokens, const int *targets, lm_step_result *out, char *err,
                size_t errlen);
    /* The fp32 master parameters on the host (the GPU path copies them back): n_params floats. */
    const float *(*params)(lm_trainer *t);
    /* Test only (GPUACCEPT_TEST_PERTURB_RANK): moves one parameter by one ulp. */
    void (*perturb)(lm_trainer *t);
    void (*destroy)(lm_trainer *t);
};

/* Both collective over comm (every rank calls, with the same cfg): the initial parameters are rank 0's,
 * broadcast as DDP frameworks do. NULL with err on failure (a configuration that does not fit is refused
 * here, before training, with a one-line message; never an out-of-memory crash mid-run). */
lm_trainer *lm_host_trainer_create(const lm_trainer_config *cfg, MPI_Comm comm, char *err, size_t errlen);
#if GA_HAVE_CUDA
lm_trainer *lm_gpu_trainer_create(const lm_trainer_config *cfg, MPI_Comm comm, char *err, size_t errlen);
#endif

#endif
