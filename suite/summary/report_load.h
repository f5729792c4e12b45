/* A run's report directory read back (`gpuaccept merge`, `compare`, `baseline`): every file in it is what its
 * name says, or the directory is refused. */
#ifndef REPORT_LOAD_H
#define REPORT_LOAD_H

#include <jansson.h>
#include <stddef.h>

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
