#include "ddp_json.h"

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

json_t *ddp_record_json(const void *record, void *user)
{
    (void)user;
    const ddp_record *r = record;
    json_t *o = json_object();
    json_object_set_new(o, "local_batch", json_integer(r->local_batch));
    json_object_set_new(o, "steps", json_integer(r->steps_done));
    json_object_set_new(o, "samples_per_s", json_real(r->samples_per_s));
    json_object_set_new(o, "step_time_ms", json_real(r->step_time_ms));
    json_object_set_new(o, "comm_wait_ms", json_real(r->comm_wait_ms));
    json_object_set_new(o, "comm_fraction", json_real(r->comm_fraction));
    json_object_set_new(o, "compute_ms", json_real(ddp_compute_ms(r)));
    json_t *ms = json_array();
    for (int k = 0; k < r->compute_measured && k < DDP_MAX_MEASUREMENTS; k++)
        json_array_append_new(ms, json_real(r->compute_measurements[k]));
    json_object_set_new(o, "compute_ms_measurements", ms);
    json_object_set_new(o, "loss_start", real_or_null(r->loss_start));
    json_object_set_new(o, "loss_end", real_or_null(r->loss_end));
    json_object_set_new(o, "param_hash", hash_string(r->param_hash));
    json_object_set_new(o, "param_sum", real_or_null(r->param_sum));
    json_object_set_new(o, "params_finite", json_boolean(r->params_finite));
    return o;
}

int ddp_curve_stride(int steps)
{
    return steps <= 1000 ? 1 : (steps + 999) / 1000;
}

static json_t *buckets_json(const ddp_bucket_plan *plan, size_t elem_size)
{
    json_t *arr = json_array();
    for (int k = 0; plan && k < plan->n; k++)
        json_array_append_new(arr, json_pack("{s:i, s:i, s:I, s:I}", "first_layer", plan->b[k].first_layer,
                                             "last_layer", plan->b[k].last_layer, "elements",
                                             (json_int_t)plan->b[k].count, "bytes",
                                             (json_int_t)(plan->b[k].count * elem_size)));
    return arr;
}

json_t *ddp_conditions_json(const ddp_run_info *info, int steps)
{
    return json_pack("{s:o, s:o, s:o, s:i, s:i, s:i, s:{s:i, s:i, s:i, s:i}}", "backend",
                     ga_json_text(info->backend), "dtype", ga_json_text(info->dtype), "data",
                     ga_json_text(info->data), "local_batch", info->local_batch, "global_batch",
                     info->global_batch, "steps", steps, "model", "input", info->input_dim, "hidden_layers",
                     info->hidden_layers, "hidden", info->hidden, "classes", info->classes);
}

json_t *ddp_summary_json(const ddp_run_info *info, const ddp_outcome *out, const double *curve, int steps)
{
    json_t *s = json_object();
    json_object_set_new(s, "backend", ga_json_text(info->backend));
    json_object_set_new(s, "dtype", ga_json_text(info->dtype));
    json_object_set_new(s, "data", ga_json_text(info->data));
    json_object_set_new(s, "ranks", json_integer(info->ranks));
    json_object_set_new(s, "local_batch", json_integer(info->local_batch));
    json_object_set_new(s, "global_batch", json_integer(info->global_batch));
    json_object_set_new(s, "steps", json_integer(out->steps));
    json_object_set_new(s, "model",
                        json_pack("{s:i, s:i, s:i, s:i, s:I}", "input", info->input_dim, "hidden_layers",
                                  info->hidden_layers, "hidden", info->hidden, "classes", info->classes,
                                  "parameters", (json_int_t)info->n_params));
    json_object_set_new(s, "optimizer",
                        json_pack("{s:s, s:f, s:f, s:I}", "name", "sgd_momentum", "lr", info->lr, "momentum",
                                  info->momentum, "seed", (json_int_t)info->seed));
    json_object_set_new(s, "bucket_cap_bytes", json_integer((json_int_t)info->bucket_cap_bytes));
    json_object_set_new(s, "buckets", buckets_json(info->plan, info->elem_size));
    json_object_set_new(s, "loss_start", real_or_null(out->loss_start));
    json_object_set_new(s, "loss_end", real_or_null(out->loss_end));
    json_object_set_new(s, "improvement", real_or_null(out->improvement));
    json_object_set_new(s, "min_improvement", json_real(info->min_improvement));
    json_object_set_new(s, "straggler_ratio", json_real(info->straggler_ratio));
    json_object_set_new(s, "accuracy_end", real_or_null(out->accuracy_end));
    json_object_set_new(s, "samples_per_s", json_real(out->samples_per_s));
    json_object_set_new(s, "step_time_ms", json_real(out->step_time_ms));
    json_object_set_new(s, "comm_wait_ms", json_real(out->comm_wait_ms));
    json_object_set_new(s, "comm_fraction", json_real(out->comm_fraction));
    json_object_set_new(s, "replicas_identical", json_boolean(out->replicas_identical));
    json_t *mism = json_array();
    for (int i = 0; out->mismatched && i < out->n_mismatched; i++)
        json_array_append_new(mism, json_integer(out->mismatched[i]));
    json_object_set_new(s, "mismatched_ranks", mism);
    json_object_set_new(s, "reference_param_hash", hash_string(out->reference_hash));

    int stride = ddp_curve_stride(steps);
    json_t *c = json_array();
    for (int k = 0; curve && k < steps; k += stride)
        json_array_append_new(c, json_pack("{s:i, s:o}", "step", k, "loss", real_or_null(curve[k])));
    json_object_set_new(s, "loss_curve_stride", json_integer(stride));
    json_object_set_new(s, "loss_curve", c);
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

void ddp_add_headlines(json_t *report, const ddp_outcome *out, const double *curve, int steps)
{
    headline(report, "loss_start", "loss at the start", out->loss_start, "", false);
    headline(report, "loss_end", "loss at the end", out->loss_end, "", false);
    headline(report, "loss_improvement", "loss improvement", out->improvement, "fraction", true);
    headline(report, "samples_per_s", "training throughput", out->samples_per_s, "samples/s", true);
    headline(report, "step_time_ms", "step time (slowest rank)", out->step_time_ms, "ms", false);
    headline(report, "comm_fraction", "share of the step waiting on gradients", out->comm_fraction,
             "fraction", false);
    headline(report, "replica_mismatches", "ranks whose parameters differ from the majority",
             out->n_mismatched, "ranks", false);
    int stride = ddp_curve_stride(steps);
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
