/* lm: lm_train's checks (loss toward its floor, nothing non-finite, replicas identical, stragglers, MFU and
 * scaling floors) over a described cluster.
 * input.json: {"nodes": N, "ranks_per_node": R, "checks": {min_improvement, loss_floor, ln_vocab,
 *              straggler_ratio, flops_per_token, min_mfu, min_scaling, min_tokens_per_gpu,
 *              floors_estimated (true/false), cut_short (true/false), tokens_per_step},
 *              "every_rank": {fields}, "overrides": [{"rank": I, fields...}]}
 * fields: param_hash (hex string), param_sum, loss_start, loss_end, steps, nonfinite_step, params_finite,
 *         train_s, step_ms_median, step_ms_worst, comm_wait_ms, compute_ms, peak_tflops, group_size,
 *         group_tokens_per_s, status, device_name, pci_bus_id.
 * outcome: {"exit_code", "findings": [sorted], "mismatched_ranks", "replicas_identical", "improvement",
 *           "tokens_per_s", "tokens_per_s_per_gpu", "mfu", "scaling_efficiency"} (null for NaN) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_adapt.h"
#include "lm_analysis.h"

static int apply_text(lm_record *r, const char *key, const json_t *v)
{
    if (!json_is_string(v))
        return -1;
    const char *s = json_string_value(v);
    if (strcmp(key, "param_hash") == 0)
        r->param_hash = strtoull(s, NULL, 16);
    else if (strcmp(key, "device_name") == 0)
        snprintf(r->hdr.device_name, sizeof r->hdr.device_name, "%s", s);
    else if (strcmp(key, "pci_bus_id") == 0)
        snprintf(r->hdr.device_pci_bus_id, sizeof r->hdr.device_pci_bus_id, "%s", s);
    else
        return -1;
    return 0;
}

static int apply_number(lm_record *r, const char *key, double d)
{
    struct {
        const char *name;
        double *field;
    } reals[] = {{"param_sum", &r->param_sum},
                 {"loss_start", &r->loss_start},
                 {"loss_end", &r->loss_end},
                 {"train_s", &r->train_s},
                 {"step_ms_median", &r->step_ms_median},
                 {"step_ms_worst", &r->step_ms_worst},
                 {"comm_wait_ms", &r->comm_wait_ms},
                 {"peak_tflops", &r->peak_tflops},
                 {"group_tokens_per_s", &r->group_tokens_per_s}};
    for (size_t k = 0; k < sizeof reals / sizeof reals[0]; k++)
        if (strcmp(key, reals[k].name) == 0) {
            *reals[k].field = d;
            return 0;
        }
    if (strcmp(key, "steps") == 0)
        r->steps_done = r->timed_steps = (int32_t)d;
    else if (strcmp(key, "nonfinite_step") == 0)
        r->nonfinite_step = (int32_t)d;
    else if (strcmp(key, "compute_ms") == 0) {
        r->compute_measured = 0;
        lm_add_compute(r, d);
    } else if (strcmp(key, "group_size") == 0)
        r->group_size = (int32_t)d;
    else if (strcmp(key, "status") == 0)
        r->hdr.status = (int32_t)d;
    else
        return -1;
    return 0;
}

static int apply_fields(lm_record *r, const json_t *o, char *err, size_t err_len)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        int rc = strcmp(key, "rank") == 0            ? 0
                 : strcmp(key, "params_finite") == 0 ? (r->params_finite = json_is_true(v), 0)
                 : json_is_string(v)                 ? apply_text(r, key, v)
                 : json_is_number(v)                 ? apply_number(r, key, json_number_value(v))
                                                     : -1;
        if (rc != 0) {
            snprintf(err, err_len, "unknown record field '%s', or a value of the wrong type", key);
            return -1;
        }
    }
    if (r->step_ms_median > 0)
        r->comm_fraction = r->comm_wait_ms / r->step_ms_median;
    return 0;
}

static double num(const json_t *o, const char *key, double dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static lm_check_opts checks_of(const json_t *c)
{
    return (lm_check_opts){.min_improvement = num(c, "min_improvement", 0.2),
                           .loss_floor = num(c, "loss_floor", 0.9143),
                           .ln_vocab = num(c, "ln_vocab", log(50257.0)),
                           .straggler_ratio = num(c, "straggler_ratio", 1.5),
                           .flops_per_token = num(c, "flops_per_token", 803478528.0),
                           .min_mfu = num(c, "min_mfu", 0),
                           .min_scaling = num(c, "min_scaling", 0),
                           .min_tokens_per_gpu = num(c, "min_tokens_per_gpu", 0),
                           .floors_estimated = json_is_true(json_object_get(c, "floors_estimated")),
                           .cut_short = json_is_true(json_object_get(c, "cut_short")),
                           .tokens_per_step = (int64_t)num(c, "tokens_per_step", 0)};
}

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *describe(const lm_outcome *out, const ga_findings *f)
{
    json_t *mism = json_array();
    for (int i = 0; i < out->n_mismatched; i++)
        json_array_append_new(mism, json_integer(out->mismatched[i]));
    return json_pack("{s:i, s:o, s:o, s:b, s:o, s:f, s:f, s:o, s:o}", "exit_code", ga_findings_exit_code(f),
                     "findings", fixture_findings_json(f, true), "mismatched_ranks", mism,
                     "replicas_identical", out->replicas_identical, "improvement",
                     real_or_null(out->improvement), "tokens_per_s", out->tokens_per_s,
                     "tokens_per_s_per_gpu", out->tokens_per_s_per_gpu, "mfu", real_or_null(out->mfu),
                     "scaling_efficiency", real_or_null(out->scaling_efficiency));
}

/* The cluster's records: every rank from every_rank, then the overrides. */
static int build(const json_t *in, lm_record *all, int n, int per, char *err, size_t err_len)
{
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        lm_record *r = &all[i];
        snprintf(r->hdr.host, sizeof r->hdr.host, "node%02d", i / per);
        r->hdr.world_rank = i;
        r->hdr.local_rank = i % per;
        r->hdr.local_size = per;
        r->hdr.node_index = i / per;
        r->hdr.device_index = i % per;
        snprintf(r->hdr.device_pci_bus_id, sizeof r->hdr.device_pci_bus_id, "0000:%02x:00.0", 0x10 + i % per);
        r->nonfinite_step = -1;
        r->params_finite = 1;
        rc = apply_fields(r, json_object_get(in, "every_rank"), err, err_len);
    }
    size_t k;
    json_t *o;
    json_array_foreach(json_object_get(in, "overrides"), k, o) {
        json_t *rank = json_object_get(o, "rank");
        if (rc != 0)
            break;
        if (!json_is_integer(rank) || json_integer_value(rank) < 0 || json_integer_value(rank) >= n) {
            snprintf(err, err_len, "overrides[%zu]: rank missing or outside the cluster", k);
            rc = -1;
        } else
            rc = apply_fields(&all[json_integer_value(rank)], o, err, err_len);
    }
    return rc;
}

int fixture_adapt_lm(const char *case_dir, const json_t *in, json_t **outcome, char *err, size_t err_len)
{
    (void)case_dir;
    static const char *const keys[] = {"nodes", "ranks_per_node", "checks", "every_rank", "overrides", NULL};
    if (fixture_check_keys(in, keys, "input.json", err, err_len) != 0)
        return -1;
    int nodes = (int)json_integer_value(json_object_get(in, "nodes"));
    int per = (int)json_integer_value(json_object_get(in, "ranks_per_node"));
    if (nodes < 1 || per < 1 || nodes > 4096 || per > 64) {
        snprintf(err, err_len, "input.json: nodes and ranks_per_node must be given (1..4096, 1..64)");
        return -1;
    }
    int n = nodes * per;
    lm_record *all = calloc((size_t)n, sizeof *all);
    if (!all) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    int rc = build(in, all, n, per, err, err_len);
    if (rc == 0) {
        lm_check_opts o = checks_of(json_object_get(in, "checks"));
        ga_findings f;
        ga_findings_init(&f);
        lm_outcome out;
        lm_analyse(all, n, &o, &f, &out);
        *outcome = describe(&out, &f);
        lm_outcome_free(&out);
        ga_findings_free(&f);
    }
    free(all);
    return rc;
}
