/* Headline figures and charts: the generic part of every report that the suite's renderers show without
 * knowing the program. A program says what its figures are (name, label, value, unit, scope, direction,
 * reference) and which curves it measured; summary.md and summary.html draw any program from these alone.
 * Pure: jansson only. Schema: docs/report-schema.md ("headlines", "charts"). */
#ifndef GA_HEADLINE_H
#define GA_HEADLINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* What a headline figure stands for. GA_SCOPE_PER_DEVICE: the median over the GPUs (or ranks, on host paths)
 * of the metric called `name`, whose per-device values are in the report's "metrics"; the renderers chart
 * them. GA_SCOPE_CLUSTER: one figure for the whole job. */
typedef enum { GA_SCOPE_CLUSTER, GA_SCOPE_PER_DEVICE } ga_scope;

typedef struct {
    const char *name;  /* stable, as in "metrics": "tflops_bf16", "busbw_at_max" */
    const char *label; /* what a person reads: "bf16", "allreduce busbw at the largest size" */
    double value;      /* NAN when it could not be measured (written as null) */
    const char *unit;
    ga_scope scope;
    bool higher_is_better;
    double reference;            /* a figure to hold it against, e.g. the datasheet peak; NAN for none */
    const char *reference_label; /* "peak"; NULL when there is no reference */
} ga_headline;

const char *ga_scope_name(ga_scope scope);

/* Appends one entry to report's "headlines" (created on first use). */
void ga_report_add_headline(json_t *report, const ga_headline *h);

/* Marks the metric added last to report ("metrics") as flagged: the renderers draw that device as faulty in
 * the headline's chart. For the figure a finding is about, not for everything on that device. */
void ga_report_flag_last_metric(json_t *report);

/* A line chart: {title, x_label, y_label, x_scale, series: [{label, points: [[x, y], ...]}]}; x_scale is
 * "log2_bytes" (x is a message size in bytes) or "linear". New reference. */
json_t *ga_chart_new(const char *title, const char *x_label, const char *y_label, bool x_log2_bytes);

/* Adds a series of n points (non-finite ones are left out). 0, or -1 on a bad argument. */
int ga_chart_add_series(json_t *chart, const char *label, const double *x, const double *y, size_t n);

/* Appends chart to report's "charts" (created on first use); steals the reference. */
void ga_report_add_chart(json_t *report, json_t *chart);

#endif
