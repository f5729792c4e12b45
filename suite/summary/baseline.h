/* Baselines: the figures a healthy cluster of one GPU model reaches, per metric of the suite, each with its
 * source. Shipped ones live in suite/baselines/<model>.json (installed to share/gpuaccept/baselines); a site
 * makes its own from a healthy run with `gpuaccept baseline --from summary.json`. Format: docs/suite.md.
 * Pure, except suite_baseline_find. */
#ifndef BASELINE_H
#define BASELINE_H

#include <jansson.h>
#include <stddef.h>

#define SUITE_BASELINE_SCHEMA "gpuaccept-baseline"
#define SUITE_BASELINE_SCHEMA_VERSION 1
#define SUITE_BASELINE_DEFAULT_TOLERANCE_PCT 10.0

/* Where a metric applies: "gpu" (it names a GPU), "rank", "node" (a host only) or "cluster". */
const char *suite_metric_scope(const json_t *metric);

/* Checks a baseline's shape: its schema and integer schema_version, a tolerance in percent, and metrics each
 * with program, name, value, direction, scope and known sources, none given twice. 0, or -1 with a message.
 */
int suite_baseline_validate(const json_t *baseline, char *err, size_t errlen);

/* Compares the summary's metrics with the baseline: each metric worse than its baseline value by more than
 * the tolerance becomes a BASELINE_REGRESSION failure on its node/GPU; summary.baseline records what was
 * applied. tolerance_pct < 0 takes the file's (else 10%). Call suite_summary_finalize afterwards. Returns the
 * number of regressions. */
int suite_baseline_apply(json_t *summary, const json_t *baseline, const char *source, double tolerance_pct);

/* A baseline from a summary: per (program, metric, scope) the median of the values. NULL with a message if
 * the summary failed (unless force) or has no metrics. */
json_t *suite_baseline_from_summary(const json_t *summary, double tolerance_pct, int force, char *err,
                                    size_t errlen);

/* The first baseline in dir (by file name) with a "match" entry equal to gpu_model, the GPU's name as CUDA
 * reports it ("NVIDIA H100 80GB HBM3"; case-insensitive, exact: an H100 NVL is not an H100 SXM). 0 with its
 * path, or -1 when none matches. */
int suite_baseline_find(const char *dir, const char *gpu_model, char *path, size_t len);

/* The shipped baseline of a GPU model: $GPUACCEPT_BASELINE_DIR, the install tree beside the executable, the
 * source tree. 0 with its path, or -1 when none matches. */
int suite_baseline_find_shipped(const char *model, char *path, size_t len);

#endif
