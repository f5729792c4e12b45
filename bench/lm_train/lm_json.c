/* lm_train's record, summary and headlines as JSON (lm_json.h). */
#include "lm_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ga_headline.h"
#include "ga_text.h"

/* JSON has no NaN or Inf: null stands for them. */
static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *hash_string(uint64_t h)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
    return json_string(buf);
}

json_t *lm_record_json(const void *record, void *user)
{
    (void)user;
    const lm_record *r = record;
    json_t *o = json_object();
    json_object_set_new(o, "steps", json_integer(r->steps_done));
    json_object_set_new(o, "timed_steps", json_integer(r->timed_steps));
    json_object_set_new(o, "tokens_per_s", json_real(r->tokens_per_s));
    json_object_set_new(o, "step_ms_median", real_or_null(r->step_ms_median));
    json_object_set_new(o, "step_ms_worst", real_or_null(r->step_ms_worst));
    json_object_set_new(o, "comm_wait_ms", real_or_null(r->comm_wait_ms));
    json_object_set_new(o, "comm_fraction", real_or_null(r->comm_fraction));
    json_object_set_new(o, "compute_ms", real_or_null(lm_compute_ms(r)));
    json_t *ms = json_array();
    for (int k = 0; k < r->compute_measured && k < LM_MAX_MEASUREMENTS; k++)
        json_array_append_new(ms, json_real(r->compute_measurements[k]));
    json_object_set_new(o, "compute_ms_measurements", ms);
    json_object_set_new(o, "bytes_used", json_real(r->bytes_used));
    json_object_set_new(o, "peak_tflops_bf16", json_real(r->peak_tflops));
    json_object_set_new(o, "loss_start", real_or_null(r->loss_start));
    json_object_set_new(o, "loss_end", real_or_null(r->loss_end));
    json_object_set_new(o, "param_hash", hash_string(r->param_hash));
    json_object_set_new(o, "param_sum", real_or_null(r->param_sum));
    json_object_set_new(o, "params_finite", json_boolean(r->params_finite));
    if (r->group_size > 0)
        json_object_set_new(o, "scaling_group",
                            json_pack("{s:i, s:i, s:i, s:o}", "index", r->group_index, "ranks", r->group_size,
                                      "steps", r->group_steps, "tokens_per_s",
                                      real_or_null(r->group_tokens_per_s)));
    return o;
}

static json_t *model_json(const lm_run_info *info)
{
    const lm_config *c = &info->cfg;
    return json_pack("{s:o, s:i, s:i, s:i, s:i, s:i, s:i, s:I}", "name", ga_json_text(info->model), "layers",
                     c->layers, "channels", c->channels, "heads", c->heads, "seq_len", c->seq_len, "vocab",
                     c->vocab, "padded_vocab", c->padded_vocab, "parameters", (json_int_t)info->n_params);
}

json_t *lm_conditions_json(const lm_run_info *info)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:i, s:i, s:I, s:b}", "backend", ga_json_text(info->backend),
                     "dtype", ga_json_text(info->dtype), "data", ga_json_text(info->data), "model",
                     model_json(info), "micro_batch", info->micro_batch, "grad_accum", info->grad_accum,
                     "tokens_per_step", (json_int_t)info->tokens_per_step, "zero1", info->zero1);
}

/* How MFU is counted: the formula, the FLOPs per token under both conventions, and the peak. */
static json_t *mfu_json(const lm_run_info *info, const lm_outcome *out)
{
    return json_pack("{s:s, s:f, s:f, s:f, s:s, s:o}", "formula",
                     "tokens/s per GPU x FLOPs per token / dense bf16 peak per GPU; FLOPs per token = 6N + "
                     "6LCT (llm.c)",
                     "flops_per_token", info->flops_per_token, "flops_per_token_palm",
                     info->flops_per_token_palm, "peak_tflops_bf16", out->peak_tflops, "peak_source",
                     out->peak_tflops > 0 ? "common/analysis/ga_peaks (docs/gpu-peaks.md), dense, no sparsity"
                                          : "none: no datasheet peak on this path",
                     "mfu", real_or_null(out->mfu));
}

static json_t *loss_curve_json(const double *curve, int steps, int *stride_out)
{
    int stride = steps <= 1000 ? 1 : (steps + 999) / 1000;
    json_t *c = json_array();
    for (int k = 0; curve && k < steps; k += stride)
        json_array_append_new(c, json_pack("{s:i, s:o}", "step", k, "loss", real_or_null(curve[k])));
    *stride_out = stride;
    return c;
}

static void summary_figures(json_t *s, const lm_outcome *out)
{
    json_object_set_new(s, "tokens_per_s", json_real(out->tokens_per_s));
    json_object_set_new(s, "tokens_per_s_per_gpu", json_real(out->tokens_per_s_per_gpu));
    json_object_set_new(s, "step_ms_median", real_or_null(out->step_ms_median));
    json_object_set_new(s, "step_ms_worst", real_or_null(out->step_ms_worst));
    json_object_set_new(s, "comm_fraction", real_or_null(out->comm_fraction));
    json_object_set_new(s, "bytes_used_max", json_real(out->bytes_used_max));
    json_object_set_new(s, "single_group_tokens_per_s_per_gpu",
                        real_or_null(out->single_tokens_per_s_per_gpu));
    json_object_set_new(s, "scaling_efficiency", real_or_null(out->scaling_efficiency));
    json_object_set_new(s, "replicas_identical", json_boolean(out->replicas_identical));
    json_t *mism = json_array();
    for (int i = 0; out->mismatched && i < out->n_mismatched; i++)
        json_array_append_new(mism, json_integer(out->mismatched[i]));
    json_object_set_new(s, "mismatched_ranks", mism);
    json_object_set_new(s, "reference_param_hash", hash_string(out->reference_hash));
}

json_t *lm_summary_json(const lm_run_info *info, const lm_outcome *out, const double *curve, int steps)
{
    const lm_check_opts *o = info->checks;
    json_t *s = json_object();
    json_object_set_new(s, "conditions", lm_conditions_json(info));
    json_object_set_new(s, "ranks", json_integer(info->ranks));
    json_object_set_new(s, "steps_asked", json_integer(info->steps_asked));
    json_object_set_new(s, "steps", json_integer(out->steps));
    json_object_set_new(s, "timed_steps", json_integer(out->timed_steps));
    json_object_set_new(s, "optimizer",
                        json_pack("{s:s, s:f, s:i, s:I}", "name", "adamw", "lr", info->lr, "warmup_steps",
                                  info->warmup, "seed", (json_int_t)info->seed));
    json_object_set_new(s, "loss_start", real_or_null(out->loss_start));
    json_object_set_new(s, "loss_end", real_or_null(out->loss_end));
    json_object_set_new(s, "loss_floor", json_real(o->loss_floor));
    json_object_set_new(s, "ln_vocab", json_real(o->ln_vocab));
    json_object_set_new(s, "improvement", real_or_null(out->improvement));
    json_object_set_new(s, "min_improvement", json_real(o->min_improvement));
    json_object_set_new(s, "min_mfu", json_real(o->min_mfu));
    json_object_set_new(s, "min_scaling", json_real(o->min_scaling));
    json_object_set_new(s, "min_tokens_per_s_per_gpu", json_real(o->min_tokens_per_gpu));
    json_object_set_new(s, "straggler_ratio", json_real(o->straggler_ratio));
    json_object_set_new(s, "mfu", mfu_json(info, out));
    summary_figures(s, out);
    int stride;
    json_object_set_new(s, "loss_curve", loss_curve_json(curve, steps, &stride));
    json_object_set_new(s, "loss_curve_stride", json_integer(stride));
    return s;
}

static void headline(json_t *report, const char *name, const char *label, double value, const char *unit,
                     bool higher_is_better)
{
    ga_report_add_headline(report, &(ga_headline){.name = name,
                                                  .label = label,
                                                  .value = value,
                                                  .unit = unit,
                                                  .higher_is_better = higher_is_better,
                                                  .reference = NAN});
}

void lm_add_headlines(json_t *report, const lm_outcome *out, const double *curve, int steps)
{
    headline(report, "tokens_per_s_per_gpu", "training throughput per GPU", out->tokens_per_s_per_gpu,
             "tokens/s", true);
    headline(report, "tokens_per_s", "training throughput of the job", out->tokens_per_s, "tokens/s", true);
    if (isfinite(out->mfu))
        headline(report, "mfu", "model FLOPs utilisation (6N+6LCT over dense bf16 peak)", out->mfu,
                 "fraction", true);
    if (isfinite(out->scaling_efficiency))
        headline(report, "scaling_efficiency", "tokens/s per GPU of the job over a node's alone",
                 out->scaling_efficiency, "fraction", true);
    headline(report, "step_ms_median", "step time (median rank)", out->step_ms_median, "ms", false);
    headline(report, "loss_start", "loss at the start", out->loss_start, "", false);
    headline(report, "loss_end", "loss at the end", out->loss_end, "", false);
    headline(report, "replica_mismatches", "ranks whose parameters differ from the majority",
             out->n_mismatched, "ranks", false);
    int stride = steps <= 1000 ? 1 : (steps + 999) / 1000;
    size_t n = 0;
    double *x = calloc((size_t)(steps > 0 ? steps : 1), sizeof *x);
    double *y = calloc((size_t)(steps > 0 ? steps : 1), sizeof *y);
    for (int k = 0; x && y && curve && k < steps; k += stride) {
        x[n] = k;
        y[n++] = curve[k];
    }
    if (n) {
        json_t *chart = ga_chart_new("Training loss by step", "step", "loss", false);
        ga_chart_add_series(chart, "loss", x, y, n);
        ga_report_add_chart(report, chart);
    }
    free(x);
    free(y);
}
