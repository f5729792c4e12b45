/* Which launcher `gpuaccept run` starts the programs under, and the command prefix for it. Pure: the
 * environment comes through a getenv function and the machine's facts through suite_launch_in, so the rules
 * are unit-tested with fixtures:
 *   --hostfile F given           mpirun --hostfile F [-np N]
 *   inside a Slurm allocation    srun --mpi=pmix --kill-on-bad-exit=1 [--ntasks=N] [--srun-args words]
 *                                [--container-image=IMG] (Pyxis)
 *   inside an MPIJob launcher    mpirun --hostfile <operator's hostfile> [-np N]
 *   otherwise                    mpirun -np N on this machine, N = --np, else one rank per GPU, else 2 */
#ifndef LAUNCH_PLAN_H
#define LAUNCH_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "ga_job.h" /* ga_getenv_fn */

#define SUITE_LAUNCH_MAX_WORDS 96
#define SUITE_LAUNCH_WORD_MAX 512

typedef enum {
    SUITE_LAUNCH_LOCAL,    /* mpirun on this machine */
    SUITE_LAUNCH_HOSTFILE, /* mpirun with a hostfile given on the command line */
    SUITE_LAUNCH_SLURM,    /* srun inside an allocation */
    SUITE_LAUNCH_MPIJOB,   /* mpirun inside a Kubeflow MPIJob launcher */
} suite_launch_kind;

typedef struct {
    int np;                      /* --np, 0 = the launcher's default */
    const char *hostfile;        /* --hostfile, NULL = none */
    int local_gpus;              /* GPUs on this machine */
    int local_cores;             /* online CPUs on this machine */
    bool as_root;                /* effective uid 0: Open MPI refuses root without --allow-run-as-root */
    char *const *envp;           /* environment, for the variables mpirun forwards to remote nodes (-x) */
    const char *srun_args;       /* --srun-args: extra srun options, split at blanks; NULL = none */
    const char *container_image; /* --container-image: Pyxis image for every srun; NULL = none */
} suite_launch_in;

typedef struct {
    suite_launch_kind kind;
    int np; /* ranks asked for, 0 = decided by the launcher (Slurm allocation, hostfile slots) */
    int argc;
    char argv[SUITE_LAUNCH_MAX_WORDS][SUITE_LAUNCH_WORD_MAX];
    char detail[256];         /* for people: "mpirun on this machine, 2 ranks (no GPU: host paths)" */
    int extra_first, extra_n; /* argv[extra_first ..] are the srun options every srun gets (preflight too) */
} suite_launch;

const char *suite_launch_kind_name(suite_launch_kind kind);

/* Fills out. Returns 0; -1 with a one-line message (too many forwarded variables, a word too long); or -2
 * with one when the options do not fit the launcher (srun options outside Slurm, quotes in --srun-args): a
 * usage error. */
int suite_launch_plan(ga_getenv_fn get, const suite_launch_in *in, suite_launch *out, char *err,
                      size_t errlen);

/* GPUs on this machine: CUDA_VISIBLE_DEVICES when set, else /proc/driver/nvidia/gpus entries. */
int suite_local_gpu_count(ga_getenv_fn get);

#endif
