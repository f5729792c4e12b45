/* Start-up and identity of one rank: MPI, node-local rank, node index and count, and the launcher that
 * started the job. The program's life cycle on top of it is ga_program. */
#ifndef GA_RUNTIME_H
#define GA_RUNTIME_H

#include <mpi.h>
#include <stdbool.h>

#include "ga_deadline.h" /* ga_phase */
#include "ga_job.h"

typedef struct {
    int world_rank, world_size;
    int local_rank, local_size; /* within the node: MPI_COMM_TYPE_SHARED, not a hostname hash */
    int node_index, node_count; /* nodes numbered by the world rank of their first rank */
    MPI_Comm node_comm;         /* ranks on this node */
    char
        host[GA_HOST_MAX]; /* the machine's name: ga_machine_name (GA_NODE_NAME in a pod, else gethostname) */
    char pod[GA_HOST_MAX]; /* the process's own host name where it is not the machine's (a pod), else "" */
    ga_launcher launcher;
    double start_time;
    int argc;
    char **argv; /* the command line as given, for the report */
} ga_ctx;

/* MPI start-up and identity. Aborts on failure. */
void ga_init(int *argc, char ***argv, ga_ctx *ctx);

/* Collective over the world: the most ranks that share one CPU's worth on any node, as local ranks over the
 * CPUs their affinity masks allow together (1 or less: every rank has a CPU of its own; 2: four ranks on two
 * CPUs). Where ranks share CPUs, a measurement of two ranks waits on where the scheduler put them as much as
 * on their link (docs/allreduce_bw.md, "No false alarms"). */
double ga_ranks_per_cpu(const ga_ctx *ctx);

/* The job as a report describes it (launcher, sizes, start time, command line), taken from the context. */
ga_job ga_ctx_job(const ga_ctx *ctx);

#endif
