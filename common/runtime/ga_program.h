/* The life cycle every program shares, on top of the runtime: start-up, command line, watchdog and report
 * directory at the beginning; the agreed exit code and MPI's end at the end. Programs reach them through the
 * engine (ga_engine.h), which calls them in its spine. */
#ifndef GA_PROGRAM_H
#define GA_PROGRAM_H

#include "ga_cli.h"
#include "ga_findings.h"
#include "ga_report.h"
#include "ga_runtime.h"

/* The start-up bound of a program without a whole-run one (allreduce_bw without --timeout): MPI_Init and the
 * first exchanges of ga_init end within it or the job ends with exit 4. */
#define GA_STARTUP_TIMEOUT_S 600.0

/* The whole preamble of a program: the start-up bound (--timeout, before MPI_Init), ga_init, command line
 * (rank 0 prints errors once), --verbose, the watchdog for --timeout, the report directory check. Returns -1
 * when the program should go on, or the exit code to return from main (after ga_program_end) for --help,
 * --version and usage errors. With GA_CHECK_ARGS_ENV (ga_cli.h) set to 1, it exits 0 or 2 after parsing. */
int ga_program_begin(int *argc, char ***argv, const ga_program_spec *spec, ga_ctx *ctx,
                     ga_common_opts *common, void *program_opts);

/* Rank 0's report of one run, the tail every program shares: opened with the job, the common fields and every
 * rank's record under "nodes" (record_json per record), with the findings the analysis adds; closed with the
 * verdict, staged for ga_program_end (ga_report_finish), and freed. */
typedef struct {
    json_t *json;
    ga_findings findings;
    const ga_common_opts *common;
    const char *program, *tag;
} ga_program_report;

void ga_program_report_open(ga_program_report *r, const ga_ctx *ctx, const char *program, const char *tag,
                            const ga_common_opts *common, const void *records, size_t record_size,
                            ga_record_json_fn record_json);
/* The same report opened before the run, without the records: for a program whose run adds its parts and
 * findings as it goes (allreduce_bw), which adds its records under "nodes" (ga_report_add_nodes) before
 * closing it. */
void ga_program_report_start(ga_program_report *r, const ga_ctx *ctx, const char *program, const char *tag,
                             const ga_common_opts *common);
/* The exit code: exit_code, or the findings' own (ga_findings_exit_code) when it is negative; GA_EXIT_ENV
 * when the report cannot be written. */
int ga_program_report_close(ga_program_report *r, int exit_code);

/* Stops the watchdog, finalizes MPI and returns exit_code, agreed by all ranks (the maximum). */
int ga_program_end(ga_ctx *ctx, int exit_code);

#endif
