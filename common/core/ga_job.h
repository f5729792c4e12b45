/* The job as the core sees it, without MPI: which launcher started it (detected from environment variables,
 * so it is tested with fixtures) and the identity a report records. The runtime fills a ga_job from its MPI
 * context (ga_ctx_job); a test or a tool fills one by hand. */
#ifndef GA_JOB_H
#define GA_JOB_H

/* Longest host name kept (the context, the records, the findings). */
#define GA_HOST_MAX 64

typedef enum {
    GA_LAUNCHER_SINGLETON, /* started without a launcher: one rank */
    GA_LAUNCHER_MPIRUN,    /* Open MPI mpirun / mpiexec */
    GA_LAUNCHER_SRUN,      /* Slurm srun (PMIx or PMI2) */
    GA_LAUNCHER_MPIJOB,    /* mpirun inside a Kubeflow MPIJob launcher pod (operator hostfile) */
} ga_launcher_kind;

typedef struct {
    ga_launcher_kind kind;
    char detail[160]; /* e.g. "srun --mpi=pmix (SLURM_JOB_ID=42)" */
} ga_launcher;

const char *ga_launcher_name(ga_launcher_kind kind);

/* Pure: which launcher the environment variables of a rank point to. getenv_fn lets tests pass fixtures. */
typedef const char *(*ga_getenv_fn)(const char *name);
/* The process's own environment as a ga_getenv_fn (getenv, whose pointer type differs). */
const char *ga_process_getenv(const char *name);
void ga_launcher_detect(ga_getenv_fn getenv_fn, ga_launcher *out);
/* Pure: how many tasks the launcher says the job has (0 if it does not say). */
int ga_launcher_expected_tasks(ga_getenv_fn getenv_fn);

/* What a report says about the job that wrote it. */
typedef struct {
    ga_launcher launcher;
    int world_size, node_count;
    double start_time; /* ga_now() at start-up: the report's duration counts from it */
    int argc;
    char **argv; /* the command line as given (may be NULL) */
} ga_job;

#endif
