/* The life cycle every program shares, on top of the runtime: start-up, command line, watchdog and report
 * directory at the beginning; the agreed exit code and MPI's end at the end. */
#ifndef GA_PROGRAM_H
#define GA_PROGRAM_H

#include "ga_cli.h"
#include "ga_runtime.h"

/* The start-up bound of a program without a whole-run one (allreduce_bw without --timeout): MPI_Init and the
 * first exchanges of ga_init end within it or the job ends with exit 4. */
#define GA_STARTUP_TIMEOUT_S 600.0

/* The whole preamble of a program: the start-up bound (--timeout, before MPI_Init), ga_init, command line
 * (rank 0 prints errors once), --verbose, the watchdog for --timeout, the report directory check. Returns -1
 * when the program should go on, or the exit code to return from main (after ga_program_end) for --help,
 * --version and usage errors. */
int ga_program_begin(int *argc, char ***argv, const ga_program_spec *spec, ga_ctx *ctx,
                     ga_common_opts *common, void *program_opts);

/* Stops the watchdog, finalizes MPI and returns exit_code, agreed by all ranks (the maximum). */
int ga_program_end(ga_ctx *ctx, int exit_code);

#endif
