/* The consolidated JSON report written by rank 0 (schema: docs/report-schema.md). Ownership follows jansson:
 * *_new functions return a new reference, *_set_new / *_add steal the value given to them. */
#ifndef GA_REPORT_H
#define GA_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "ga_cli.h"
#include "ga_findings.h"
#include "ga_job.h"
#include "ga_record.h"

#define GA_REPORT_SCHEMA_VERSION 1

/* Renders the program-specific part of one rank's record; the header fields are added by the report. */
typedef json_t *(*ga_record_json_fn)(const void *record, void *user);

/* The run a report belongs to: --run-id, else $GPUACCEPT_RUN_ID, else "slurm-<job id>", else a fresh id.
 * `gpuaccept merge` merges the reports of one run only. */
void ga_report_run_id(const ga_common_opts *common, char *out, size_t len);

/* A report with the job's identity: program, version, time, launcher, sizes, command line, common options.
 * A program passes ga_ctx_job(&ctx); the report itself never sees MPI. */
json_t *ga_report_new(const ga_job *job, const char *program, const ga_common_opts *common);

/* Adds "nodes": ranks grouped by node, each rank's header fields plus what fn returns (may be NULL). */
void ga_report_add_nodes(json_t *report, const void *records, int n, size_t record_size, ga_record_json_fn fn,
                         void *user);

/* Adds "findings" and "verdict" from the findings and the final exit code. */
void ga_report_set_verdict(json_t *report, const ga_findings *f, int exit_code);

/* Appends one figure to the report's flat "metrics" list, the list that baselines and `gpuaccept compare`
 * read: {name, value, unit, higher_is_better, host, node_index, rank, gpu}. name is stable across runs
 * ("busbw_at_max", "tflops_bf16"); where says what it measures (GA_WHERE_CLUSTER for the job as a whole). */
void ga_report_add_metric(json_t *report, const char *name, double value, const char *unit,
                          bool higher_is_better, ga_where where);

/* Writes <dir>/<program>.json via a temporary file in the same directory (.<program>.json.XXXXXX), fsync,
 * then rename: a reader never sees half a report. Temporary files of program an earlier write left (a kill
 * midway) are removed first. Returns 0, or -1 with a message. */
int ga_report_write_atomic(const char *dir, const char *program, json_t *report, char *err, size_t errlen);
/* The two halves of it. Staged: written, synced, not yet visible, remembered with the exit code the report
 * states. Committed: renamed into place when agreed_exit_code (the job's, agreed by every rank) is that code;
 * else removed, so that a job that did not end as its report says (a rank failed or was killed after the
 * report was written) leaves no report a later merge could read as the step's verdict. commit: 0 committed or
 * nothing staged, 1 removed (err says why), -1 with a message. */
int ga_report_stage(const char *dir, const char *program, json_t *report, int exit_code, char *err,
                    size_t errlen);
int ga_report_commit_staged(int agreed_exit_code, char *err, size_t errlen);
/* Nothing written half-way, even when the job is ended during the write: the runtime's fatal path removes the
 * temporary file of a write in progress (ga_report_abandon_pending), and the commit check, called just before
 * the rename, may end the job instead (the run's --timeout has passed: a late report must not look complete).
 * A check that does not return must remove tmp_path itself. */
typedef void (*ga_report_commit_check)(const char *tmp_path);
void ga_report_set_commit_check(ga_report_commit_check check);
void ga_report_abandon_pending(void);

/* The end of every program on rank 0: the verdict into the report, the report staged (ga_program_end commits
 * it once the ranks agree on the exit code), its path logged under tag, and the [RESULT] line. Returns the
 * exit code: exit_code, or GA_EXIT_ENV when the report cannot be written (the [RESULT] line says why). */
int ga_report_finish(json_t *report, const ga_common_opts *common, const char *program, const char *tag,
                     const ga_findings *f, int exit_code);

/* Removes from dir the temporary reports of program that killed writers left (ga_report_stage names them
 * .<program>.json.tmp.<host>.<pid>.XXXXXX) older than this run's first call, of a process of this host that
 * is gone or a day old; and those of the unnamed form earlier versions wrote. A live writer's is kept. Called
 * by the engine at the start of a run and again when staging. */
void ga_report_remove_stale_temps(const char *dir, const char *program);

/* Creates dir if needed and proves it writable. Returns 0, or -1 with a message. */
int ga_report_dir_prepare(const char *dir, char *err, size_t errlen);

/* json_t of a header's fields, for reuse by the report and the tests. */
json_t *ga_record_header_json(const ga_record_header *hdr);

#endif
