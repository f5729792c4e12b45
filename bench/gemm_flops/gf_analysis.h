/* gemm_flops on rank 0: TFLOP/s per dtype against the cluster median and the GPU's own peak, throttling and
 * silent data corruption in burn mode. Pure: records in, summary, metrics and findings out (fixture-tested).
 */
#ifndef GF_ANALYSIS_H
#define GF_ANALYSIS_H

#include <jansson.h>

#include "ga_findings.h"
#include "ga_outlier.h"
#include "gf_record.h"
#include "ga_devflag.h"

typedef struct {
    double tolerance;      /* fraction below the model's median that may be flagged (the outlier rule) */
    double min_efficiency; /* fraction of peak below which a GPU is flagged; 0 off */
    double max_drop_pct;   /* burn: a drop from the first to the last third of the intervals beyond this and
                            * beyond the intervals' noise is throttling */
    unsigned dtypes;       /* the dtypes asked for */
    bool dtypes_explicit;  /* an unavailable dtype was named explicitly: a warning, not a note */
    bool relative_warn;    /* --relative warn: a GPU below its peers is a warning (the quick profile) */
} gf_policy;

/* What the analysis found, typed: main logs it and makes the report's headlines from it. */
typedef struct {
    ga_dev_figure dtypes[GA_DTYPE_COUNT]; /* the dtypes asked for, in ga_dtype order */
    int n_dtypes;
    bool burned; /* a burn ran on at least one rank; the burn fields below are then set */
    int burn_intervals;
    double burn_interval_s;
    int sdc_mismatches; /* intervals, over all GPUs */
    int sdc_gpus, throttling_gpus;
} gf_outcome;

/* Sets report's "summary" and appends its metrics; adds findings; fills out. backend: "cublas" or
 * "openblas". */
void gf_analyse(const gf_record *all, int n, const gf_policy *p, const char *backend, json_t *report,
                ga_findings *f, gf_outcome *out);

/* Intervals (after the warm-up one) below which a burn's drop is not judged: thirds of 3, true medians. */
#define GF_BURN_MIN_JUDGED 9

/* The drop of a burn, judged on every interval (ga_series_drop_judge): the median of the last third against
 * the median of the first third, after a warm-up interval when there are 4 or more; judged (out->judged) only
 * on GF_BURN_MIN_JUDGED intervals or more, never called a fall below. */
void gf_burn_drop(const gf_record *r, double max_drop_pct, ga_series_drop *out);

/* The dtypes (bit per ga_dtype) that hold a suspect: a GPU below its peers or its peak, or one of two that
 * differ. Their GEMMs are measured again on every rank before the verdict (--remeasure). why: "fp32: 1 of 4
 * ranks". */
unsigned gf_suspect_dtypes(const gf_record *all, int n, const gf_policy *p, char *why, size_t why_len);

/* "rank 3 on host: 9.1 9.0 8.2 ... TFLOP/s (first third 9.05, last 7.4)", the intervals of one burner. */
void gf_burn_intervals_line(const gf_record *r, double max_drop_pct, char *buf, size_t len);

/* Silent data corruption: for each rank, the number of burn intervals whose output checksum disagrees with
 * the majority of its group (same model, SM count, library) or with its own first interval. mismatches[n]. */
int gf_sdc_compare(const gf_record *all, int n, int *mismatches);

/* TFLOP/s from the recorded time, as the report and the tests recompute it. */
double gf_tflops(int64_t m, int64_t n, int64_t k, int iters, double time_s);

#endif
