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
#define SUITE_RUN_SCHEMA_VERSION 2
#define SUITE_REPORT_SCHEMA "gpuaccept-report"

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

/* The findings of each host, in their order: {host: [finding, ...]} (new object; findings without a host are
 * left out). */
json_t *suite_findings_by_host(const json_t *findings);

/* Exit code a failure with this fault code implies: 1 for a check that found a fault, 2..5 for a step that
 * could not measure (STEP_TIMEOUT 4, STEP_ENV_ERROR 3, ...). */
int suite_fault_exit_class(const char *code);

/* A program's report is one this gpuaccept can trust: its schema and version, a program, a run id, sizes,
 * nodes, findings, metrics and a verdict. 0, or -1 with a message. */
int suite_report_check(const json_t *report, char *err, size_t errlen);

/* suite_report_check, and the file at path is named after the report's program: gemm_flops.json holds
 * program gemm_flops, so that no report can stand in for, or hide behind, another file (path: where it was
 * read, for the message). 0, or -1 with a message that names path. */
int suite_report_file_check(const char *path, const json_t *report, char *err, size_t errlen);

/* suite_run.json is one this gpuaccept wrote: schema, version, run id, and steps with known statuses. */
int suite_run_check(const json_t *run, char *err, size_t errlen);

/* The reports of one run in dir, as an array. Every *.json in dir (hidden ones aside) is, by its name:
 * summary.json (a summary of this version), suite_run.json (passing suite_run_check), gpuaccept-k8s.json (the
 * hand-off's patches), or a report that passes suite_report_file_check; anything else is refused.
 * run_id: the run's reports only (others are skipped with a note on stderr); NULL: every report must be of
 * one run. Two reports of one program, or of different node counts, are refused. NULL with a message
 * when anything cannot be trusted. */
json_t *suite_load_reports(const char *dir, const char *run_id, char *err, size_t errlen);

/* What `gpuaccept merge` reads from dir: suite_run.json when present (it must pass suite_run_check: a
 * record that cannot be read is refused, never ignored) and that run's reports (suite_load_reports).
 * 0, or -1 with a message; *run is NULL when dir has no suite_run.json. */
int suite_load_run_dir(const char *dir, json_t **reports, json_t **run, char *err, size_t errlen);

#endif
