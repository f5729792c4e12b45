#include "ga_runtime.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_testhook.h"
#include "ga_time.h"

/* The test hook GPUACCEPT_TEST_RANKS_PER_NODE: the machine's ranks split into nodes of N consecutive ranks,
 * each with a host name of its own, so that patterns across nodes run on one machine (ga_testhook.h). */
static void fake_nodes(ga_ctx *ctx)
{
    int per = ga_test_ranks_per_node();
    if (per <= 0)
        return;
    MPI_Comm part;
    GA_MPI_CHECK(MPI_Comm_split(ctx->node_comm, ctx->world_rank / per, ctx->world_rank, &part));
    MPI_Comm_free(&ctx->node_comm);
    ctx->node_comm = part;
    char host[GA_HOST_MAX];
    snprintf(host, sizeof host, "%.50s-n%d", ctx->host, ctx->world_rank / per);
    snprintf(ctx->host, sizeof ctx->host, "%s", host);
    ga_fatal_set_identity(ctx->host, ctx->world_rank);
    ga_log_set_rank(ctx->world_rank, ctx->host);
}

void ga_init(int *argc, char ***argv, ga_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    /* Line-buffered even into mpirun's pipe, so progress lines appear as they happen. */
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* MULTIPLE: the deadline watcher thread calls MPI_Abort (never NCCL) while the main thread may
     * be inside an MPI call, which only MPI_THREAD_MULTIPLE allows. Every other MPI call comes from the main
     * thread. Where the library provides less, the watcher ends the process instead (ga_fatal). */
    int provided = MPI_THREAD_SINGLE;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "[FATAL] MPI_Init_thread failed\n");
        exit(GA_EXIT_ENV);
    }
    ga_fatal_set_thread_level(provided);
    ctx->start_time = ga_now();
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->world_size);
    /* The machine, not the pod: a Kubernetes pod's host name is the pod's, gone when the job ends, and no
     * `kubectl label node` can act on it (issue 41, item 1). */
    char hostname[GA_HOST_MAX] = "unknown";
    if (gethostname(hostname, sizeof hostname) != 0)
        snprintf(hostname, sizeof hostname, "unknown");
    hostname[sizeof hostname - 1] = '\0';
    ga_machine_name(ga_process_getenv, hostname, ctx->host, sizeof ctx->host, ctx->pod, sizeof ctx->pod);
    ga_fatal_set_identity(ctx->host, ctx->world_rank);
    ga_log_set_rank(ctx->world_rank, ctx->host);
    ga_launcher_detect(ga_process_getenv, &ctx->launcher);
    ga_deadline_attach_mpi(ctx->host, ctx->world_rank, ctx->world_size, provided);

    /* srun without --mpi=pmix starts N independent singletons, each believing it is rank 0 of 1. */
    int expected = ga_launcher_expected_tasks(ga_process_getenv);
    if (expected > 1 && ctx->world_size == 1)
        GA_FATAL(GA_EXIT_ENV,
                 "the launcher started %d tasks but MPI sees a world of 1: each task runs alone "
                 "(srun without --mpi=pmix?). Refusing to run %d copies of rank 0",
                 expected, expected);

    /* The first collectives of the program: bounded by -T when the command line gave it (ga_program_begin
     * read it before MPI_Init), so that a rank that never arrives is named within -T, not after --timeout. */
    ga_phase("start-up: the ranks of each node");
    ga_deadline_arm("the ranks' first exchanges at start-up (the ranks of each node)");
    GA_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx->world_rank, MPI_INFO_NULL,
                                     &ctx->node_comm));
    fake_nodes(ctx);
    MPI_Comm_rank(ctx->node_comm, &ctx->local_rank);
    MPI_Comm_size(ctx->node_comm, &ctx->local_size);

    /* Node index: the rank of this node's leader among all leaders, so nodes are numbered in world-rank
     * order. A node here is a shared-memory domain (MPI_COMM_TYPE_SHARED), which is a pod in Kubernetes: the
     * node-local rank picks among the GPUs this process can see, and only the pod's own ranks see the same
     * GPUs and /dev/shm. Two pods on one machine are two indexes with one host name; the suite's merge
     * groups by host name, so they are one machine there, and the MPIJob's anti-affinity keeps them apart
     * (docs/deployment.md). */
    MPI_Comm leaders;
    GA_MPI_CHECK(
        MPI_Comm_split(MPI_COMM_WORLD, ctx->local_rank == 0 ? 0 : MPI_UNDEFINED, ctx->world_rank, &leaders));
    int ids[2] = {0, 0};
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &ids[0]);
        MPI_Comm_size(leaders, &ids[1]);
        MPI_Comm_free(&leaders);
    }
    GA_MPI_CHECK(MPI_Bcast(ids, 2, MPI_INT, 0, ctx->node_comm));
    ga_deadline_disarm();
    ga_phase("start-up: preparing the run"); /* what a --timeout before the program's first phase names */
    ctx->node_index = ids[0];
    ctx->node_count = ids[1];
}

ga_job ga_ctx_job(const ga_ctx *ctx)
{
    ga_job job = {.launcher = ctx->launcher,
                  .world_size = ctx->world_size,
                  .node_count = ctx->node_count,
                  .start_time = ctx->start_time,
                  .argc = ctx->argv ? ctx->argc : 0,
                  .argv = ctx->argv};
    return job;
}

double ga_ranks_per_cpu(const ga_ctx *ctx)
{
    cpu_set_t mine, all;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) /* unknown: counts as a CPU of its own */
        CPU_SET(ctx->local_rank, &mine);
    ga_deadline_arm("agreeing on the CPUs of this node's ranks");
    GA_MPI_CHECK(MPI_Allreduce(&mine, &all, (int)sizeof all, MPI_BYTE, MPI_BOR, ctx->node_comm));
    double per_cpu = (double)ctx->local_size / (CPU_COUNT(&all) > 0 ? CPU_COUNT(&all) : 1);
    GA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &per_cpu, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    ga_deadline_disarm();
    return per_cpu;
}
