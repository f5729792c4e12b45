/* The program engine: one spine for every program. A program describes itself in a ga_program_def (its
 * command line, its record, its phases as function pointers) and its main() is ga_program_run; the engine
 * owns what every program used to repeat: start-up, the backend, the record, the agreed failure, the gather
 * or the remeasurement, rank 0's report and the end. docs/architecture.md, "The program engine". */
#ifndef GA_ENGINE_H
#define GA_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "ga_gpu.h"
#include "ga_program.h"

/* What a measurement came to on this rank. FAILED marks the record failed (exit 3 on that rank, named in the
 * report); OUT_OF_MEMORY on any rank ends the job with exit 5 on all of them, decided together. */
typedef enum { GA_MEASURED = 0, GA_MEASURE_FAILED, GA_MEASURE_OUT_OF_MEMORY } ga_measured;

typedef struct ga_program_def ga_program_def;

/* One run as the phases see it. The engine allocates opts, state and the record and frees them. */
typedef struct {
    const ga_program_def *def;
    ga_ctx ctx;
    ga_common_opts common;
    int argc0;          /* the command line as main received it, before MPI or getopt touched it */
    char **argv0;       /* (argv0[0]: the name run under) */
    void *opts;         /* the program's options: def->opts_size bytes, set by def->opts_init, then parsed */
    void *state;        /* what the program's phases share: def->state_size bytes, zeroed */
    void *mine;         /* this rank's record: def->record_size bytes, zeroed, its header from the context */
    void *all;          /* rank 0, after the gather: every rank's record in rank order; elsewhere NULL */
    ga_backend backend; /* resolved when def->backend_asked is set, else what prepare sets */
    ga_measured measured;      /* what measure returned on this rank */
    int remeasure_passes;      /* set by a phase before the gather: how often suspects may be remeasured */
    ga_program_report *report; /* rank 0 while the report is open; NULL elsewhere */
    char err[256];             /* measure's message when it did not measure */
} ga_run;

/* Returned by a phase that lets the run go on; any other value (>= 0) is the exit code to end with. */
#define GA_GO_ON (-1)

struct ga_program_def {
    /* name, --help text, option table and handler, aliases, default --timeout: defined where the option table
     * is (<p>_opts.c), whose sizes are known there, so that nothing patches it at run time */
    const ga_program_spec *cli;
    const char *tag; /* the log tag of its lines: "COMPUTE" */

    size_t opts_size;
    void (*opts_init)(void *opts); /* the defaults before the command line; NULL: zeroed */
    size_t record_size;            /* 0: no per-rank record gathered by the engine (allreduce_bw) */
    ga_record_json_fn record_json; /* one record under the report's "nodes" */
    size_t state_size;

    /* Every phase below is optional except measure. In order, every rank unless said: */
    /* 1. the options checked against each other, before anything is chosen (usage errors) */
    int (*validate)(ga_run *run);
    /* 2. the backend asked for: the engine resolves it into run->backend; a GPU-only request (gpu_only
     * writes it, "" for none) on a host without a GPU ends the run, as ga_backend_gpu_only says */
    ga_backend (*backend_asked)(const ga_run *run);
    void (*gpu_only)(const ga_run *run, char *out, size_t len);
    /* 3. collective: this rank's device, the defaults that depend on it, data, the start line; may end */
    int (*prepare)(ga_run *run);
    bool barrier_before_measure; /* every rank starts measuring together */
    /* 4. collective: the measurement into run->mine (run->err when it did not measure) */
    ga_measured (*measure)(ga_run *run);
    /* a measurement that may run out of memory: every rank agrees on it before the gather (a collective of
     * its own, which a program whose measure never says GA_MEASURE_OUT_OF_MEMORY goes without) */
    bool agree_out_of_memory;
    /* 5. the gather; with suspects, ga_remeasure_loop instead (run->remeasure_passes passes at most) */
    unsigned (*suspects)(const void *all, int n, ga_run *run, char *why, size_t why_len);
    void (*measure_again)(unsigned mask, void *mine, ga_run *run);
    /* 6. collective, after the gather: more measurement (a burn), which gathers again (ga_engine_gather) */
    int (*after_gather)(ga_run *run);
    /* 7. rank 0, before the report takes the records: what the analysis writes into them (node_health's
     * port roles) */
    void (*before_report)(ga_run *run);
    /* 8. rank 0: the analysis of run->all into the open report (run->report: the common fields, and the
     * records under "nodes" unless streamed); returns the exit code, or GA_GO_ON for the findings' own */
    int (*report)(ga_run *run);
    /* Rank 0 opens the report before measuring and the run adds to it as it goes (allreduce_bw): its records
     * are then the run's to add (ga_report_add_nodes). */
    bool report_streams;
    /* 9. every rank that passed prepare: what the state holds beyond its own bytes */
    void (*cleanup)(ga_run *run);
};

/* The whole program: returns main's exit code, agreed by every rank. */
int ga_program_run(int argc, char **argv, const ga_program_def *def);

/* Collective: this rank's record gathered again into run->all at rank 0 (after a phase changed it). */
void ga_engine_gather(ga_run *run);

/* "N ranks on M nodes" for a program's start line: "s" where a count wants a plural. */
const char *ga_plural(int n);

#endif
