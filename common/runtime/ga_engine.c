/* The program engine (ga_engine.h): the one spine every program runs, its phases called in order from the
 * program's ga_program_def. */
#include "ga_engine.h"

#include <stdlib.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_log.h"
#include "ga_remeasure.h"

const char *ga_plural(int n)
{
    return n == 1 ? "" : "s";
}

static void *zeroed(size_t size)
{
    void *p = calloc(1, size ? size : 1);
    if (!p)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    return p;
}

/* The options' memory, with the program's defaults, before the command line is parsed. */
static void run_init(ga_run *run, const ga_program_def *def, int argc, char **argv)
{
    memset(run, 0, sizeof *run);
    run->def = def;
    run->argc0 = argc;
    run->argv0 = argv;
    run->opts = zeroed(def->opts_size);
    if (def->opts_init)
        def->opts_init(run->opts);
    run->backend = GA_BACKEND_AUTO;
}

/* Steps 1-3 of ga_engine.h: the checks, the backend, the record, the program's preparation. Returns GA_GO_ON
 * or the exit code to end with. */
static int prepare(ga_run *run)
{
    const ga_program_def *def = run->def;
    if (def->validate) {
        int rc = def->validate(run);
        if (rc != GA_GO_ON)
            return rc;
    }
    if (def->backend_asked) {
        ga_backend asked = def->backend_asked(run);
        run->backend = ga_backend_resolve(&run->ctx, asked);
        char gpu_only[256] = "";
        if (def->gpu_only)
            def->gpu_only(run, gpu_only, sizeof gpu_only);
        int rc = ga_backend_gpu_only(&run->ctx, asked, run->backend, def->cli->name,
                                     gpu_only[0] ? gpu_only : NULL);
        if (rc != GA_GO_ON)
            return rc;
    }
    run->state = zeroed(def->state_size);
    if (def->record_size) {
        run->mine = zeroed(def->record_size);
        /* every record starts with its header (ga_record.h) */
        ga_record_header_init(&run->ctx, (ga_record_header *)run->mine);
    }
    return def->prepare ? def->prepare(run) : GA_GO_ON;
}

static unsigned suspects_of(const void *all, int n, void *user, char *why, size_t why_len)
{
    ga_run *run = user;
    return run->def->suspects(all, n, run, why, why_len);
}

static void measure_again_of(unsigned mask, void *mine, void *user)
{
    ga_run *run = user;
    run->def->measure_again(mask, mine, run);
}

void ga_engine_gather(ga_run *run)
{
    free(run->all);
    run->all = NULL;
    ga_phase("gathering %d records", run->ctx.world_size);
    ga_gather_records(&run->ctx, run->mine, run->def->record_size, &run->all);
}

/* Steps 4-6: the measurement, the failure every rank agrees on, the gather (or the remeasurement) and what
 * comes after it. Collective. Returns GA_GO_ON or the exit code to end with. */
static int measure(ga_run *run)
{
    const ga_program_def *def = run->def;
    if (def->barrier_before_measure)
        GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    run->measured = def->measure(run);
    /* Out of memory on any rank ends the job with exit 5 on all of them, decided before any later collective.
     */
    if (def->agree_out_of_memory) {
        bool oom = run->measured == GA_MEASURE_OUT_OF_MEMORY;
        int rc = GA_AGREE_FAILURE(GA_EXIT_INTERNAL, oom ? run->err : NULL);
        if (rc)
            return rc;
    } else if (run->measured == GA_MEASURE_OUT_OF_MEMORY) {
        GA_FATAL(GA_EXIT_INTERNAL, "%s: out of memory without agree_out_of_memory: %s", def->cli->name,
                 run->err);
    }
    if (run->measured == GA_MEASURE_FAILED && run->mine)
        ga_record_header_fail((ga_record_header *)run->mine, GA_EXIT_ENV, def->tag, run->err);
    if (def->suspects) {
        ga_remeasure_spec rs = {def->record_size, suspects_of, measure_again_of, def->tag, def->cli->name};
        ga_remeasure_loop(&run->ctx, &rs, run->remeasure_passes, run->mine, &run->all, run);
    } else if (def->record_size) {
        ga_engine_gather(run);
    }
    return def->after_gather ? def->after_gather(run) : GA_GO_ON;
}

/* Rank 0's report: opened before measuring when the run streams into it, else with the gathered records. */
static void report_open(ga_run *run, ga_program_report *rep)
{
    const ga_program_def *def = run->def;
    if (def->before_report)
        def->before_report(run);
    if (def->report_streams)
        ga_program_report_start(rep, &run->ctx, def->cli->name, def->tag, &run->common);
    else
        ga_program_report_open(rep, &run->ctx, def->cli->name, def->tag, &run->common, run->all,
                               def->record_size, def->record_json);
    run->report = rep;
}

static int report_close(ga_run *run)
{
    int code = run->def->report ? run->def->report(run) : GA_GO_ON;
    code = ga_program_report_close(run->report, code);
    run->report = NULL;
    return code;
}

/* Everything between the command line and the end: the exit code of this rank. */
static int run_phases(ga_run *run)
{
    int rc = prepare(run);
    if (rc != GA_GO_ON)
        return rc;
    ga_program_report rep = {0};
    bool rank0 = run->ctx.world_rank == 0;
    if (rank0 && run->def->report_streams)
        report_open(run, &rep);
    rc = measure(run);
    if (rc == GA_GO_ON) {
        if (rank0 && !run->def->report_streams)
            report_open(run, &rep);
        rc = rank0 ? report_close(run) : GA_EXIT_PASS;
    } else if (run->report) { /* a streamed report of a run that ended early is not written */
        json_decref(rep.json);
        ga_findings_free(&rep.findings);
        run->report = NULL;
    }
    if (run->def->cleanup)
        run->def->cleanup(run);
    return rc;
}

int ga_program_run(int argc, char **argv, const ga_program_def *def)
{
    ga_run run;
    run_init(&run, def, argc, argv);
    int rc = ga_program_begin(&argc, &argv, def->cli, &run.ctx, &run.common, run.opts);
    if (rc < 0)
        rc = run_phases(&run);
    free(run.all);
    free(run.mine);
    free(run.state);
    free(run.opts);
    return ga_program_end(&run.ctx, rc);
}
