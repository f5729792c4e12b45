#include "ga_program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_report.h"
#include "ga_topo.h"

/* "rank R on HOST" as far as it can be known before MPI is up: the launcher's variables, gethostname. */
static void who_before_mpi(char *buf, size_t len)
{
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"};
    const char *rank = NULL;
    for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars && !rank; i++)
        rank = getenv(rank_vars[i]);
    char host[GA_HOST_MAX] = "unknown";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    snprintf(buf, len, "rank %s on %s (pid %ld)", rank ? rank : "?", host, (long)getpid());
}

/* GA_CHECK_ARGS_ONLY=1 PROGRAM ARGS...: the arguments parsed as a run would parse them, without MPI or a GPU,
 * then exit 0, or 2 with the program's own one-line message. gpuaccept run and its --dry-run ask every
 * planned step this before launching anything (issue 41, item 6): a bad --args is found on the front-end, not
 * 20 minutes into a 64-node run. */
static void check_args_only(int argc, char **argv, const ga_program_spec *spec, ga_common_opts *common,
                            void *program_opts)
{
    const char *only = getenv(GA_CHECK_ARGS_ENV);
    if (!only || strcmp(only, "1") != 0)
        return;
    ga_cli_result parsed = ga_cli_parse(spec, argc, argv, common, program_opts, true);
    fflush(stdout);
    exit(parsed == GA_CLI_ERROR ? GA_EXIT_USAGE : GA_EXIT_PASS);
}

int ga_program_begin(int *argc, char ***argv, const ga_program_spec *spec, ga_ctx *ctx,
                     ga_common_opts *common, void *program_opts)
{
    check_args_only(*argc, *argv, spec, common, program_opts);
    /* The start-up is bounded like the rest (a rank stopped inside MPI_Init would otherwise hang the job for
     * ever): by --timeout, else the program's default, else GA_STARTUP_TIMEOUT_S. */
    double startup_s = ga_cli_scan_timeout(spec, *argc, *argv);
    char who[128];
    who_before_mpi(who, sizeof who);
    ga_deadline_start_startup(startup_s > 0 ? startup_s : GA_STARTUP_TIMEOUT_S, who);
    /* -T bounds every wait from the first collective on (ga_init's exchanges), so it is read before MPI_Init;
     * the engine sets it again once validate has resolved the program's default (issue 45, item 8). */
    double wait_s = ga_cli_scan_wait_timeout(spec, *argc, *argv);
    if (wait_s > 0)
        ga_deadline_set_wait_timeout(wait_s);
    ga_gpu_set_device_order(); /* before MPI_Init, which may start the CUDA runtime (CUDA-aware MPI) */
    ga_init(argc, argv, ctx);
    /* getopt permutes argv: keep the command line as typed for the report. */
    ctx->argc = *argc;
    ctx->argv = calloc((size_t)*argc + 1, sizeof(char *));
    if (!ctx->argv)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    memcpy(ctx->argv, *argv, (size_t)*argc * sizeof(char *));

    ga_cli_result parsed = ga_cli_parse(spec, *argc, *argv, common, program_opts, ctx->world_rank == 0);
    if (parsed != GA_CLI_RUN) {
        ga_deadline_start_run(0); /* the start-up is over; ga_program_end has its own bounds */
        return parsed == GA_CLI_EXIT ? GA_EXIT_PASS : GA_EXIT_USAGE;
    }
    ga_log_set_verbose(common->verbose);
    ga_deadline_start_run(common->timeout_s); /* the start-up is over */
    ga_report_set_commit_check(ga_deadline_check_before_commit);
    return -1;
}

int ga_program_report_dir(const ga_ctx *ctx, const char *program, const ga_common_opts *common)
{
    /* Checked before measuring, so a long run never ends with nowhere to write its report. */
    char err[GA_PATH_MAX + 128] = "";
    int bad = 0;
    if (ctx->world_rank == 0) {
        bad = ga_report_dir_prepare(common->report_dir, err, sizeof err) != 0;
        if (!bad)
            ga_report_remove_stale_temps(common->report_dir, program);
    }
    ga_deadline_arm("agreeing on the report directory");
    GA_MPI_CHECK(MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (bad) {
        ga_error_once(program, "%s", err);
        return GA_EXIT_USAGE;
    }
    return -1;
}

int ga_program_end(ga_ctx *ctx, int exit_code)
{
    /* The highest code wins; the lowest tells whether the ranks disagreed, and rank 0's whether the code is
     * the report's verdict (rank 0 alone analyses and writes the report, whose findings name the nodes). When
     * other ranks hold the winning code, they are the failing ones and say so on a line the front-end can
     * attribute; a code every rank holds is a job-wide decision that no one node caused. */
    int mine[3] = {exit_code, -exit_code, ctx->world_rank == 0 ? exit_code : -1}, all[3];
    ga_deadline_arm("agreeing on the exit code at the end");
    MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ga_deadline_stop();
    int agreed = all[0], lowest = -all[1], rank0 = all[2];
    if (lowest != agreed && exit_code == agreed && rank0 != agreed)
        ga_exit_notice(exit_code);
    /* Every rank got here: the report rank 0 staged is the job's, if the job ends as it says. */
    char err[GA_PATH_MAX + 256];
    int committed = ga_report_commit_staged(agreed, err, sizeof err);
    if (committed != 0) {
        fflush(stdout);
        fprintf(stderr, "%s\n", err);
        if (committed < 0)
            agreed = GA_EXIT_ENV;
    }
    if (ctx->node_comm != MPI_COMM_NULL && ctx->node_comm != 0)
        MPI_Comm_free(&ctx->node_comm);
    free(ctx->argv);
    ctx->argv = NULL;
    ga_topo_release();
    MPI_Finalize();
    return agreed;
}

void ga_program_report_start(ga_program_report *r, const ga_ctx *ctx, const char *program, const char *tag,
                             const ga_common_opts *common)
{
    const ga_job job = ga_ctx_job(ctx);
    r->json = ga_report_new(&job, program, common);
    /* How CUDA numbered the GPUs: a user's FASTEST_FIRST makes ordinals differ from nvidia-smi's. */
    bool by_user = false;
    const char *order = ga_gpu_device_order(&by_user);
    json_object_set_new(r->json, "cuda_device_order",
                        json_pack("{s:s, s:s}", "value", order, "set_by", by_user ? "user" : "gpuaccept"));
    ga_findings_init(&r->findings);
    r->common = common;
    r->program = program;
    r->tag = tag;
}

void ga_program_report_open(ga_program_report *r, const ga_ctx *ctx, const char *program, const char *tag,
                            const ga_common_opts *common, const void *records, size_t record_size,
                            ga_record_json_fn record_json)
{
    ga_program_report_start(r, ctx, program, tag, common);
    ga_report_add_nodes(r->json, records, ctx->world_size, record_size, record_json, NULL);
}

int ga_program_report_close(ga_program_report *r, int exit_code)
{
    if (exit_code < 0)
        exit_code = ga_findings_exit_code(&r->findings);
    exit_code = ga_report_finish(r->json, r->common, r->program, r->tag, &r->findings, exit_code);
    json_decref(r->json);
    r->json = NULL;
    ga_findings_free(&r->findings);
    return exit_code;
}
