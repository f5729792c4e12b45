/* mem_bw on rank 0: GB/s per test against the median of the GPU's model and its datasheet peak (HBM for the
 * device tests, the PCIe link for H2D/D2H). Pure: records in, summary, metrics and findings out. */
#ifndef MB_ANALYSIS_H
#define MB_ANALYSIS_H

#include <jansson.h>

#include "ga_findings.h"
#include "mb_record.h"
#include "tp_flag.h"

/* min_efficiency: the floor of the device tests against the HBM peak; min_host_efficiency: that of the
 * host-link tests against the PCIe line rate, separate because every GPU of a node copies at once through
 * shared switches and host memory (a per-GPU share under load, no fraction of the HBM's). 0: off. */
typedef struct {
    double tolerance, min_efficiency, min_host_efficiency;
} mb_policy;

/* Peak GB/s of a test on a rank's device, or -1 when unknown (host path, unknown model). */
double mb_peak(const mb_record *r, int test);

/* What the analysis found, typed: main logs it and makes the report's headlines from it. */
typedef struct {
    tp_figure tests[MB_TEST_COUNT]; /* the tests that ran, in mb_test order */
    int n_tests;
} mb_outcome;

/* Sets report's "summary", appends its metrics, adds findings, fills out. backend: "cuda" or "host". */
void mb_analyse(const mb_record *all, int n, const mb_policy *p, const char *backend, json_t *report,
                ga_findings *f, mb_outcome *out);

json_t *mb_record_json(const void *record, void *user);

#endif
