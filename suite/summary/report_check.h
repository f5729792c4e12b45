/* Whether a report, or the run record, is one this gpuaccept can trust before anything reads its figures.
 * Pure. */
#ifndef REPORT_CHECK_H
#define REPORT_CHECK_H

#include <jansson.h>
#include <stddef.h>

#include "summary_schema.h"

/* The longest string a report may hold anywhere (a value or a key), and the longest finding code, metric
 * name or unit: what the programs write is far shorter; what is longer would reach every hand-off (a code
 * of 2,000 characters broke both Prometheus files, issue 45, item 2). */
#define SUITE_REPORT_STRING_MAX 16384
#define SUITE_REPORT_NAME_MAX 128

/* A program's report is one this gpuaccept can trust: its schema and version, a program, a run id, sizes,
 * nodes, findings, metrics and a verdict; every string bounded (above); every name that reaches a scheduler
 * (host, slurm_node, pod) a node name (node_name.h). 0, or -1 with a message. */
int suite_report_check(const json_t *report, char *err, size_t errlen);

/* suite_report_check, and the file at path is named after the report's program: gemm_flops.json holds
 * program gemm_flops, so that no report can stand in for, or hide behind, another file (path: where it was
 * read, for the message). 0, or -1 with a message that names path. */
int suite_report_file_check(const char *path, const json_t *report, char *err, size_t errlen);

/* suite_run.json is one this gpuaccept wrote: schema, version, run id, and steps with known statuses. */
int suite_run_check(const json_t *run, char *err, size_t errlen);

#endif
