/* The report's ddp_smoke parts: each rank's figures under "nodes" and the "summary" object (documented in
 * docs/ddp_smoke.md; the suite front-end reads its field names). Pure. */
#ifndef DDP_JSON_H
#define DDP_JSON_H

#include <jansson.h>
#include <stdint.h>

#include "ddp_bucket.h"
#include "ddp_analysis.h"
#include "ddp_record.h"

typedef struct {
    const char *backend, *dtype, *data;
    int ranks, local_batch, global_batch;
    int hidden_layers, hidden, input_dim, classes;
    size_t n_params, bucket_cap_bytes, elem_size;
    const ddp_bucket_plan *plan;
    double lr, momentum, min_improvement;
    double straggler_ratio; /* compute time over the median that is a straggler warning; 0 off */
    uint64_t seed;
} ddp_run_info;

/* A ga_record_json_fn. */
json_t *ddp_record_json(const void *record, void *user);

/* Every step up to 1000 steps, then a fixed stride so that the curve keeps about 1000 points. */
int ddp_curve_stride(int steps);

/* What the figures depend on (gpuaccept compare): backend, data, batch, steps and model. */
json_t *ddp_conditions_json(const ddp_run_info *info, int steps);

/* curve: the global loss of each of `steps` steps (identical on every rank; rank 0's is used). */
json_t *ddp_summary_json(const ddp_run_info *info, const ddp_outcome *out, const double *curve, int steps);

/* The report's generic part: loss, throughput and replica agreement as headlines, the loss curve (at the
 * summary's stride) as a chart. */
void ddp_add_headlines(json_t *report, const ddp_outcome *out, const double *curve, int steps);

#endif
