/* The report's lm_train parts: each rank's figures under "nodes", the "summary" and "conditions" objects
 * (documented in docs/lm_train.md) and the headlines. Pure. */
#ifndef LM_JSON_H
#define LM_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "lm_analysis.h"
#include "lm_config.h"
#include "lm_record.h"

typedef struct {
    const char *backend, *dtype, *data, *model;
    lm_config cfg;
    int ranks, micro_batch, grad_accum, steps_asked, warmup;
    int64_t tokens_per_step;
    size_t n_params;
    double lr;
    uint64_t seed;
    bool zero1;
    double flops_per_token, flops_per_token_palm;
    const lm_check_opts *checks;
} lm_run_info;

/* A ga_record_json_fn. */
json_t *lm_record_json(const void *record, void *user);

/* What the figures depend on (gpuaccept compare): backend, data, model, batch. */
json_t *lm_conditions_json(const lm_run_info *info);

/* curve: the global loss of each of `steps` steps (rank 0's). */
json_t *lm_summary_json(const lm_run_info *info, const lm_outcome *out, const double *curve, int steps);

/* Loss, tokens/s, MFU, scaling and replica agreement as headlines; the loss curve as a chart. */
void lm_add_headlines(json_t *report, const lm_outcome *out, const double *curve, int steps);

#endif
