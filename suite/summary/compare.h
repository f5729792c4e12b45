/* History: one run's metrics against another's (an acceptance run against today's), per metric key
 * (program, name, host, GPU or rank): old, new, change and whether it regressed beyond a tolerance in the
 * metric's own direction (higher_is_better), plus the metrics and nodes present in one run only. Inputs are
 * summaries (summary.json) or single program reports. Pure, except the printing. */
#ifndef COMPARE_H
#define COMPARE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#define SUITE_COMPARE_DEFAULT_TOLERANCE_PCT 5.0

/* Returns {schema, tolerance_pct, compared, regressions, improvements, not_comparable, not_comparable_why,
 * forced, rows: [{program, name, host, gpu, rank, unit, higher_is_better, old, new, change_pct, regression,
 * improvement, comparable, not_comparable_why}], only_old: [key], only_new: [key], nodes_only_old: [host],
 * nodes_only_new: [host], regressed_nodes: [host]}, or NULL with a message if an input is neither a summary
 * nor a report, or no metric is comparable (comparable.h) and force is false. A metric measured under other
 * conditions is listed and never counted as a regression or improvement, unless force. */
json_t *suite_compare(const json_t *old_run, const json_t *new_run, double tolerance_pct, bool force,
                      char *err, size_t errlen);

/* A table for people: regressions and changes beyond the tolerance (every row with all). */
void suite_compare_print(const json_t *cmp, FILE *out, bool all);

#endif
