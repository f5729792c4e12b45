/* The merge: the programs' reports (and, after `gpuaccept run`, how each step ended) into one summary, with a
 * verdict and fault codes per node and per GPU, the abnormal nodes, the step statuses, every finding and
 * metric (tagged with its program) and each program's figures. Generic: any report with the common
 * top-level fields (nodes, findings, metrics, verdict, summary) is merged, whatever its program.
 * Schema: docs/suite.md. Pure. The verdict is verdict.h's; checking and loading reports, report_check.h and
 * report_load.h. */
#ifndef MERGE_H
#define MERGE_H

#include <jansson.h>
#include <stddef.h>

#include "programs.h" /* the programs, in run order */
#include "summary_schema.h"
#include "verdict.h"

/* reports: an array of reports in any order. run: the run record `gpuaccept run` writes (suite_run.json:
 * launcher, options, steps with status, exit code, duration, [RESULT] line), or NULL: then each step's status
 * is read from its report, and a step without a report did not run. Returns a new summary. */
json_t *suite_merge(const json_t *reports, const json_t *run, const char *report_dir);

#endif
