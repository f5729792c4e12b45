/* mem_bw on rank 0: GB/s per test against the median of the GPU's model and its datasheet peak (HBM for the
 * device tests, the PCIe link for H2D/D2H). Pure: records in, summary, metrics and findings out. */
#ifndef MB_ANALYSIS_H
#define MB_ANALYSIS_H

#include <jansson.h>

#include "ga_findings.h"
#include "mb_record.h"
#include "ga_devflag.h"

/* min_efficiency: the floor of the device tests against the HBM peak; min_host_efficiency: that of the
 * host-link tests against the PCIe line rate, separate because every GPU of a node copies at once through
 * shared switches and host memory (a per-GPU share under load, no fraction of the HBM's). 0: off. */
typedef struct {
    double tolerance, min_efficiency, min_host_efficiency;
    bool relative_warn; /* --relative warn: a GPU below its peers is a warning (the quick profile) */
} mb_policy;

/* Peak GB/s of a test on a rank's device, or -1 when unknown (host path, unknown model). */
double mb_peak(const mb_record *r, int test);

/* What the analysis found, typed: main logs it and makes the report's headlines from it. */
typedef struct {
    ga_dev_figure tests[MB_TEST_COUNT]; /* the tests that ran, in mb_test order */
    int n_tests;
} mb_outcome;

/* Sets report's "summary", appends its metrics, adds findings, fills out. backend: "cuda" or "host". */
void mb_analyse(const mb_record *all, int n, const mb_policy *p, const char *backend, json_t *report,
                ga_findings *f, mb_outcome *out);

/* The tests (bit per mb_test) that hold a suspect: below its peers or its peak, or one of two that differ.
 * They are measured again on every rank before the verdict (--remeasure). why: "host_triad: 1 of 4 ranks". */
unsigned mb_suspect_tests(const mb_record *all, int n, const mb_policy *p, char *why, size_t why_len);

#endif
