/* Whether a report, or the run record, is one this gpuaccept can trust before anything reads its figures.
 * Pure. */
#ifndef REPORT_CHECK_H
#define REPORT_CHECK_H

#include <jansson.h>
#include <stddef.h>

#include "summary_schema.h"

/* A program's report is one this gpuaccept can trust: its schema and version, a program, a run id, sizes,
 * nodes, findings, metrics and a verdict. 0, or -1 with a message. */
int suite_report_check(const json_t *report, char *err, size_t errlen);

/* suite_report_check, and the file at path is named after the report's program: gemm_flops.json holds
 * program gemm_flops, so that no report can stand in for, or hide behind, another file (path: where it was
 * read, for the message). 0, or -1 with a message that names path. */
int suite_report_file_check(const char *path, const json_t *report, char *err, size_t errlen);

/* suite_run.json is one this gpuaccept wrote: schema, version, run id, and steps with known statuses. */
int suite_run_check(const json_t *run, char *err, size_t errlen);

#endif
