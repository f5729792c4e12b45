#include "gf_json.h"

#include "gf_record.h"
#include "ga_text.h"

/* The GEMM's layout and, on a GPU, cuBLASLt's algorithm (a configuration field that could not be read is
 * left out). */
static json_t *algorithm_json(const gf_result *x, bool gpu)
{
    json_t *a = json_pack("{s:s}", "layout", x->layout_nn ? "nn" : "tn");
    if (!gpu)
        return a;
    json_object_set_new(a, "candidates", json_integer(x->algo_candidates));
    json_object_set_new(a, "timed", json_integer(x->algo_timed));
    json_object_set_new(a, "chosen", json_integer(x->algo_chosen));
    const char *names[] = {"id", "tile", "stages", "splitk", "swizzle"};
    const int32_t values[] = {x->algo_id, x->algo_tile, x->algo_stages, x->algo_splitk, x->algo_swizzle};
    for (int i = 0; i < 5; i++)
        if (values[i] >= 0)
            json_object_set_new(a, names[i], json_integer(values[i]));
    return a;
}

json_t *gf_record_json(const void *record, void *user)
{
    (void)user;
    const gf_record *r = record;
    json_t *res = json_object();
    for (int d = 0; d < GA_DTYPE_COUNT; d++) {
        const gf_result *x = &r->dt[d];
        if (x->state == GF_NOT_RUN)
            continue;
        json_t *o;
        if (x->state == GF_MEASURED) {
            o = json_pack("{s:s, s:i, s:f, s:f, s:f, s:f, s:b}", "state", "measured", "iters", x->iters,
                          "time_s", x->time_s, "tflops", x->tflops, "check_error", x->check_err,
                          "check_tolerance", x->check_tol, "check_ok", x->check_ok);
            json_t *ms = json_array();
            for (int k = 0; k < x->measured && k < GF_MAX_MEASUREMENTS; k++)
                json_array_append_new(ms, json_real(x->measurements[k]));
            json_object_set_new(o, "measurements", ms);
            if (d == GA_FP8 && r->hdr.device_index >= 0)
                json_object_set_new(o, "fast_accum", json_boolean(x->fast_accum == 1));
            json_object_set_new(o, "algorithm", algorithm_json(x, r->hdr.device_index >= 0));
        } else
            o = json_pack("{s:s, s:o}", "state", x->state == GF_SKIPPED ? "skipped" : "failed", "note",
                          ga_json_text(x->note)); /* a library's error message */
        json_object_set_new(res, ga_dtype_name(d), o);
    }
    json_t *o = json_pack("{s:o, s:o, s:I, s:I, s:I, s:o}", "model", ga_json_text(r->model), "library",
                          ga_json_text(r->library), "m", (json_int_t)r->m, "n", (json_int_t)r->n, "k",
                          (json_int_t)r->k, "gemm", res);
    if (r->threads > 0)
        json_object_set_new(o, "threads", json_integer(r->threads));
    if (r->hdr.device_index >= 0)
        json_object_set_new(o, "compute_capability", json_sprintf("%d.%d", r->cc_major, r->cc_minor));
    json_object_set_new(o, "sdc_group", ga_json_text(r->group));
    return o;
}
