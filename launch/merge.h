/* The merge: the programs' reports (and, after `gpuaccept run`, how each step ended) into one summary, with a
 * verdict and fault codes per node and per GPU, the abnormal nodes, the step statuses, every finding and
 * metric (tagged with its program) and each program's figures. Generic: any report with the common
 * top-level fields (nodes, findings, metrics, verdict, summary) is merged, whatever its program.
 * Schema: docs/suite.md. Pure, except suite_load_reports. */
#ifndef MERGE_H
#define MERGE_H

#include <jansson.h>
#include <stddef.h>

#include "programs.h" /* the programs, in run order */

#define SUITE_SUMMARY_SCHEMA "gpuaccept-summary"
#define SUITE_SUMMARY_SCHEMA_VERSION 1
#define SUITE_RUN_SCHEMA "gpuaccept-suite-run"


/* reports: an array of reports in any order. run: the run record `gpuaccept run` writes (suite_run.json:
 * launcher, options, steps with status, exit code, duration, [RESULT] line), or NULL: then each step's status
 * is read from its report, and a step without a report did not run. Returns a new summary. */
json_t *suite_merge(const json_t *reports, const json_t *run, const char *report_dir);

/* Recomputes, from the summary's findings and steps: each GPU's and node's verdict and fault codes, each
 * node's per-check verdicts, the abnormal nodes and the overall verdict. Call it after adding findings (a
 * baseline does). */
void suite_summary_finalize(json_t *summary);

/* The summary's step of program, or NULL. */
const json_t *suite_summary_step(const json_t *summary, const char *program);

/* Exit code a failure with this fault code implies: 1 for a check that found a fault, 2..5 for a step that
 * could not measure (STEP_TIMEOUT 4, STEP_ENV_ERROR 3, ...). */
int suite_fault_exit_class(const char *code);

/* Every gpuaccept report (a *.json whose "schema" is gpuaccept-report) in dir, as an array. NULL with a
 * message if dir cannot be read; a file that does not parse is skipped with a warning on stderr. */
json_t *suite_load_reports(const char *dir, char *err, size_t errlen);

#endif
