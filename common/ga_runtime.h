/* Start-up and identity of one rank: MPI, node-local rank, node index and count, the launcher that started
 * the job, and the program's life cycle (command line, watchdog, report directory, finalize). */
#ifndef GA_RUNTIME_H
#define GA_RUNTIME_H

#include <mpi.h>
#include <stdbool.h>

#include "ga_cli.h"
#include "ga_deadline.h" /* ga_phase */

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

typedef struct {
    int world_rank, world_size;
    int local_rank, local_size; /* within the node: MPI_COMM_TYPE_SHARED, not a hostname hash */
    int node_index, node_count; /* nodes numbered by the world rank of their first rank */
    MPI_Comm node_comm;         /* ranks on this node */
    char host[GA_HOST_MAX];
    ga_launcher launcher;
    double start_time;
    int argc;
    char **argv; /* the command line as given, for the report */
} ga_ctx;

const char *ga_launcher_name(ga_launcher_kind kind);

/* Pure: which launcher the environment variables of a rank point to. getenv_fn lets tests pass fixtures. */
typedef const char *(*ga_getenv_fn)(const char *name);
void ga_launcher_detect(ga_getenv_fn getenv_fn, ga_launcher *out);
/* Pure: how many tasks the launcher says the job has (0 if it does not say). */
int ga_launcher_expected_tasks(ga_getenv_fn getenv_fn);

/* MPI start-up and identity. Aborts on failure. */
void ga_init(int *argc, char ***argv, ga_ctx *ctx);

/* The whole preamble of a program: ga_init, command line (rank 0 prints errors once), --verbose, the
 * watchdog for --timeout, the report directory check. Returns -1 when the program should go on, or the exit
 * code to return from main (after ga_program_end) for --help, --version and usage errors. */
int ga_program_begin(int *argc, char ***argv, const ga_program_spec *spec, ga_ctx *ctx,
                     ga_common_opts *common, void *program_opts);

/* Stops the watchdog, finalizes MPI and returns exit_code, agreed by all ranks (the maximum). */
int ga_program_end(ga_ctx *ctx, int exit_code);

#endif
