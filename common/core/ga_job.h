/* The job as the core sees it, without MPI: which launcher started it (detected from environment variables,
 * so it is tested with fixtures) and the identity a report records. The runtime fills a ga_job from its MPI
 * context (ga_ctx_job); a test or a tool fills one by hand. */
#ifndef GA_JOB_H
#define GA_JOB_H

#include <stddef.h>

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

/* The environment variable through which Kubernetes gives a rank its machine's name: the MPIJob and the
 * DaemonSet set it from the downward API (fieldRef spec.nodeName), since a pod's host name is the pod's. Not
 * GPUACCEPT_*: `gpuaccept run` forwards those from the launcher to every rank (mpirun -x), and each rank must
 * keep its own. docs/deployment.md. */
#define GA_NODE_NAME_ENV "GA_NODE_NAME"

/* Pure: the name of the machine a rank runs on, as reports and hand-offs name it (issue 41, item 1), into
 * machine; and into pod the process's own host name where that is not the machine's (a Kubernetes pod), ""
 * otherwise. hostname is gethostname()'s. GA_NODE_NAME wins where it is set and is a plain name (letters,
 * digits, '.', '-', '_'); else the host name, which on bare metal and under Slurm is the machine's. */
void ga_machine_name(ga_getenv_fn getenv_fn, const char *hostname, char *machine, size_t machine_len,
                     char *pod, size_t pod_len);

/* What a report says about the job that wrote it. */
typedef struct {
    ga_launcher launcher;
    int world_size, node_count;
    double start_time; /* ga_now() at start-up: the report's duration counts from it */
    int argc;
    char **argv; /* the command line as given (may be NULL) */
} ga_job;

#endif
