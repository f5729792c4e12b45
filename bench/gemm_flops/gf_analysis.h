/* gemm_flops on rank 0: TFLOP/s per dtype against the cluster median and the GPU's own peak, throttling and
 * silent data corruption in burn mode. Pure: records in, summary, metrics and findings out (fixture-tested).
 */
#ifndef GF_ANALYSIS_H
#define GF_ANALYSIS_H

#include <jansson.h>

#include "ga_findings.h"
#include "gf_record.h"
#include "tp_flag.h"

typedef struct {
    double tolerance;      /* fraction below the model's median that is flagged */
    double min_efficiency; /* fraction of peak below which a GPU is flagged; 0 off */
    double max_drop_pct;   /* burn: first-to-last interval drop beyond which a GPU is throttling */
    unsigned dtypes;       /* the dtypes asked for */
    bool dtypes_explicit;  /* an unavailable dtype was named explicitly: a warning, not a note */
} gf_policy;

/* What the analysis found, typed: main logs it and makes the report's headlines from it. */
typedef struct {
    tp_figure dtypes[TP_DTYPE_COUNT]; /* the dtypes asked for, in tp_dtype order */
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

/* First-to-last interval drop of a burn, in percent of the first (negative: it got faster). */
double gf_drop_pct(const gf_record *r);

/* Silent data corruption: for each rank, the number of burn intervals whose output checksum disagrees with
 * the majority of its group (same model, SM count, library) or with its own first interval. mismatches[n]. */
int gf_sdc_compare(const gf_record *all, int n, int *mismatches);

/* The per-rank part of the report's "nodes". */
json_t *gf_record_json(const void *record, void *user);

/* TFLOP/s from the recorded time, as the report and the tests recompute it. */
double gf_tflops(int64_t m, int64_t n, int64_t k, int iters, double time_s);

#endif
