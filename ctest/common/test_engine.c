/* The program engine's contract (common/runtime/ga_engine.h) on a toy program: the phases in their order on
 * every rank, a suspect measured again, the gather after the burn-like phase, rank 0's report, and the ends a
 * phase can choose (a usage error in validate, out of memory agreed by every rank). A training program built
 * on the engine (lm_train) relies on exactly this order. GA_TEST_ENGINE picks the case: pass, remeasure, oom,
 * usage; ctest/common/CMakeLists.txt checks how each ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_engine.h"
#include "ga_exit.h"
#include "ga_log.h"

typedef struct {
    ga_record_header hdr;
    int value;  /* what this rank "measured": 10, or 1 the first time on rank 1 in the remeasure case */
    int passes; /* how often it was measured again */
} toy_record;

typedef struct {
    char trace[64]; /* one letter per phase, in the order the engine called them */
} toy_state;

typedef struct {
    char mode[16];
} toy_opts;

static const ga_program_spec toy_command_line = {.name = "engine_toy",
                                                 .summary = "The engine's test program."};

static void mark(ga_run *run, char phase)
{
    toy_state *st = run->state;
    size_t len = strlen(st->trace);
    if (len + 1 < sizeof st->trace)
        st->trace[len] = phase;
}

static void opts_init(void *opts)
{
    const char *mode = getenv("GA_TEST_ENGINE");
    snprintf(((toy_opts *)opts)->mode, sizeof((toy_opts *)opts)->mode, "%s", mode ? mode : "pass");
}

static bool mode_is(const ga_run *run, const char *mode)
{
    return strcmp(((const toy_opts *)run->opts)->mode, mode) == 0;
}

static int validate(ga_run *run)
{
    /* the state does not exist yet: validate comes before anything is allocated */
    if (run->state || run->mine)
        ga_log("ENGINE", "validate after the state was made");
    return mode_is(run, "usage") ? GA_EXIT_USAGE : GA_GO_ON;
}

static ga_backend backend_asked(const ga_run *run)
{
    (void)run;
    return GA_BACKEND_HOST;
}

static int prepare(ga_run *run)
{
    mark(run, 'P');
    run->remeasure_passes = 2;
    return ((toy_record *)run->mine)->hdr.world_rank == run->ctx.world_rank ? GA_GO_ON : GA_EXIT_INTERNAL;
}

static ga_measured measure(ga_run *run)
{
    mark(run, 'M');
    toy_record *r = run->mine;
    bool slow_once = mode_is(run, "remeasure") && run->ctx.world_rank == 1;
    r->value = slow_once ? 1 : 10;
    if (mode_is(run, "oom") && run->ctx.world_rank == 1) {
        snprintf(run->err, sizeof run->err, "toy: out of memory on purpose");
        return GA_MEASURE_OUT_OF_MEMORY;
    }
    return GA_MEASURED;
}

static unsigned suspects(const void *all, int n, ga_run *run, char *why, size_t why_len)
{
    (void)run;
    const toy_record *r = all;
    for (int i = 0; i < n; i++)
        if (r[i].value < 10) {
            snprintf(why, why_len, "rank %d below 10", i);
            return 1;
        }
    return 0;
}

static void measure_again(unsigned mask, void *mine, ga_run *run)
{
    mark(run, 'A');
    toy_record *r = mine;
    r->value = mask == 1 ? 10 : -1;
    r->passes++;
}

static int after_gather(ga_run *run)
{
    mark(run, 'G');
    ((toy_record *)run->mine)->value += 1; /* seen by the report only if the engine gathers again */
    ga_engine_gather(run);
    return GA_GO_ON;
}

static void before_report(ga_run *run)
{
    mark(run, 'B');
}

static json_t *toy_record_json(const void *record, void *user)
{
    (void)user;
    const toy_record *r = record;
    return json_pack("{s:i, s:i}", "value", r->value, "passes", r->passes);
}

static int report(ga_run *run)
{
    mark(run, 'R');
    const toy_record *all = run->all;
    json_t *values = json_array();
    for (int i = 0; i < run->ctx.world_size; i++)
        json_array_append_new(values, json_integer(all[i].value));
    json_object_set_new(run->report->json, "summary",
                        json_pack("{s:o, s:s}", "values", values, "trace", ((toy_state *)run->state)->trace));
    return GA_GO_ON;
}

static void cleanup(ga_run *run)
{
    mark(run, 'C');
    printf("[ENGINE] rank %d phases %s\n", run->ctx.world_rank, ((toy_state *)run->state)->trace);
    fflush(stdout);
}

static const ga_program_def toy_program = {
    .cli = &toy_command_line,
    .tag = "ENGINE",
    .opts_size = sizeof(toy_opts),
    .opts_init = opts_init,
    .record_size = sizeof(toy_record),
    .record_json = toy_record_json,
    .state_size = sizeof(toy_state),
    .validate = validate,
    .backend_asked = backend_asked,
    .prepare = prepare,
    .barrier_before_measure = true,
    .measure = measure,
    .agree_out_of_memory = true,
    .suspects = suspects,
    .measure_again = measure_again,
    .after_gather = after_gather,
    .before_report = before_report,
    .report = report,
    .cleanup = cleanup,
};

int main(int argc, char **argv)
{
    return ga_program_run(argc, argv, &toy_program);
}
