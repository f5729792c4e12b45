#include "ga_runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_report.h"
#include "ga_time.h"
#include "ga_topo.h"

const char *ga_launcher_name(ga_launcher_kind kind)
{
    switch (kind) {
    case GA_LAUNCHER_MPIRUN:
        return "mpirun";
    case GA_LAUNCHER_SRUN:
        return "srun";
    case GA_LAUNCHER_MPIJOB:
        return "mpijob";
    default:
        return "singleton";
    }
}

static bool env_set(ga_getenv_fn get, const char *name)
{
    const char *v = get(name);
    return v && *v;
}

void ga_launcher_detect(ga_getenv_fn get, ga_launcher *out)
{
    memset(out, 0, sizeof *out);
    /* Open MPI's own variables come first: mpirun inside a Slurm allocation also sees SLURM_*, and Open MPI 4
     * sets PMIX_RANK for its ranks too. */
    if (env_set(get, "OMPI_COMM_WORLD_SIZE")) {
        const char *hostfile = get("OMPI_MCA_orte_default_hostfile");
        if (env_set(get, "KUBERNETES_SERVICE_HOST") ||
            (hostfile && strcmp(hostfile, "/etc/mpi/hostfile") == 0)) {
            out->kind = GA_LAUNCHER_MPIJOB;
            snprintf(out->detail, sizeof out->detail, "mpirun in an MPIJob launcher (hostfile %s)",
                     hostfile ? hostfile : "unset");
        } else {
            out->kind = GA_LAUNCHER_MPIRUN;
            snprintf(out->detail, sizeof out->detail, "mpirun%s%s", hostfile ? " with hostfile " : "",
                     hostfile ? hostfile : "");
        }
        return;
    }
    if (env_set(get, "SLURM_PROCID") && env_set(get, "SLURM_STEP_ID")) {
        const char *mpi = get("SLURM_MPI_TYPE");
        const char *job = get("SLURM_JOB_ID");
        out->kind = GA_LAUNCHER_SRUN;
        snprintf(out->detail, sizeof out->detail, "srun --mpi=%s (SLURM_JOB_ID=%s)", mpi ? mpi : "?",
                 job ? job : "?");
        return;
    }
    out->kind = GA_LAUNCHER_SINGLETON;
    snprintf(out->detail, sizeof out->detail, "no launcher: a single rank");
}

int ga_launcher_expected_tasks(ga_getenv_fn get)
{
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = get(names[i]);
        if (v && *v && (i == 0 || env_set(get, "SLURM_PROCID")))
            return atoi(v);
    }
    return 0;
}

static const char *process_getenv(const char *name)
{
    return getenv(name);
}

void ga_init(int *argc, char ***argv, ga_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    /* Line-buffered even into mpirun's pipe, so progress lines appear as they happen. */
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* MULTIPLE: the deadline watcher thread calls MPI_Abort (after ncclCommAbort) while the main thread may
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
    if (gethostname(ctx->host, sizeof ctx->host) != 0)
        snprintf(ctx->host, sizeof ctx->host, "unknown");
    ctx->host[sizeof ctx->host - 1] = '\0';
    ga_fatal_set_identity(ctx->host, ctx->world_rank);
    ga_log_set_rank(ctx->world_rank, ctx->host);
    ga_launcher_detect(process_getenv, &ctx->launcher);

    /* srun without --mpi=pmix starts N independent singletons, each believing it is rank 0 of 1. */
    int expected = ga_launcher_expected_tasks(process_getenv);
    if (expected > 1 && ctx->world_size == 1)
        GA_FATAL(GA_EXIT_ENV,
                 "the launcher started %d tasks but MPI sees a world of 1: each task runs alone "
                 "(srun without --mpi=pmix?). Refusing to run %d copies of rank 0",
                 expected, expected);

    GA_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx->world_rank, MPI_INFO_NULL,
                                     &ctx->node_comm));
    MPI_Comm_rank(ctx->node_comm, &ctx->local_rank);
    MPI_Comm_size(ctx->node_comm, &ctx->local_size);

    /* Node index: the rank of this node's leader among all leaders, so nodes are numbered in world-rank
     * order. */
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
    ctx->node_index = ids[0];
    ctx->node_count = ids[1];
}

/* ---- program life cycle ---- */

int ga_program_begin(int *argc, char ***argv, const ga_program_spec *spec, ga_ctx *ctx,
                     ga_common_opts *common, void *program_opts)
{
    ga_init(argc, argv, ctx);
    /* getopt permutes argv: keep the command line as typed for the report. */
    ctx->argc = *argc;
    ctx->argv = calloc((size_t)*argc + 1, sizeof(char *));
    if (!ctx->argv)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    memcpy(ctx->argv, *argv, (size_t)*argc * sizeof(char *));

    switch (ga_cli_parse(spec, *argc, *argv, common, program_opts, ctx->world_rank == 0)) {
    case GA_CLI_EXIT:
        return GA_EXIT_PASS;
    case GA_CLI_ERROR:
        return GA_EXIT_USAGE;
    case GA_CLI_RUN:
        break;
    }
    ga_log_set_verbose(common->verbose);
    ga_deadline_start_run(common->timeout_s);

    /* Checked before measuring, so a long run never ends with nowhere to write its report. */
    char err[GA_PATH_MAX + 128] = "";
    int bad = 0;
    if (ctx->world_rank == 0)
        bad = ga_report_dir_prepare(common->report_dir, err, sizeof err) != 0;
    GA_MPI_CHECK(MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (bad) {
        ga_error_once(spec->name, "%s", err);
        return GA_EXIT_USAGE;
    }
    return -1;
}

int ga_program_end(ga_ctx *ctx, int exit_code)
{
    int agreed = exit_code;
    ga_deadline_arm("agreeing on the exit code at the end");
    MPI_Allreduce(&exit_code, &agreed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ga_deadline_stop();
    if (ctx->node_comm != MPI_COMM_NULL && ctx->node_comm != 0)
        MPI_Comm_free(&ctx->node_comm);
    free(ctx->argv);
    ctx->argv = NULL;
    ga_topo_release();
    MPI_Finalize();
    return agreed;
}
