/* The gpuaccept front-end: one dispatcher (gpuaccept.c) and one file per verb (cmd_<verb>.c), as git's
 * builtin/, sharing the helpers below. The front-end is no MPI program: it starts them. */
#ifndef SUITE_H
#define SUITE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "outputs_write.h"

int cmd_run(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_node_check(int argc, char **argv);

/* One line on stderr, "gpuaccept VERB: message (see gpuaccept VERB --help)"; returns 2 (usage). */
int suite_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* getopt_long's verdict on an unknown option or a missing value, as a usage error. */
int suite_bad_option(const char *verb, int key, char **argv);

/* Parses a tolerance in percent ("5", "5%", 0..100; a fraction such as 0.05 is refused with a hint, as in
 * every program: ga_cli_parse_pct). 0, or -1 with a message. */
int suite_parse_pct(const char *s, double *out, char *err, size_t errlen);

/* --baseline: "none", "auto" (the shipped baseline of the summary's GPU model, if any) or a file. Applies it
 * and re-finalizes the summary. 0, or -1 with a message (an unreadable or invalid file). */
int suite_apply_baseline_option(json_t *summary, const char *spec, double tolerance_pct, char *err,
                                size_t errlen);

/* Whether path can be the file an option names for output (baseline -o, compare --json): not empty, not a
 * directory, in a directory that exists. Checked before any work, so a bad path is a usage error up front. 0,
 * or -1 with a message. */
int suite_output_path_check(const char *path, char *err, size_t errlen);

/* The closing lines: verdict, abnormal nodes with their fault codes, where the summary is, [RESULT]. */
void suite_print_verdict(const json_t *summary, const char *dir);

/* "[RESULT] FAILURE: NAME: why" for a run that ends without a verdict to print (no summary could be
 * written). Returns exit_code. */
int suite_print_failure(int exit_code, const char *why);

/* --drain, --apply-k8s: runs drain.sh and gpuaccept-k8s.sh from dir. A script that fails is a HANDOFF_FAILED
 * finding of the job (exit 3 unless a check failed); the summary is then finalized again and every output
 * rewritten, so that the exit code, [RESULT], summary.json and gpuaccept.prom say the same. 0, or -1 with a
 * message when the outputs could not be rewritten. */
int suite_handoff_act(json_t *summary, const char *dir, bool drain, bool apply_k8s, char *err, size_t errlen);

#endif
