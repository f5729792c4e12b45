#include "mb_json.h"

#include "mb_record.h"
#include "ga_text.h"

json_t *mb_record_json(const void *record, void *user)
{
    (void)user;
    const mb_record *r = record;
    json_t *tests = json_object();
    for (int t = 0; t < MB_TEST_COUNT; t++) {
        const mb_result *x = &r->t[t];
        if (x->state == MB_NOT_RUN)
            continue;
        json_t *o = x->state == MB_MEASURED
                        ? json_pack("{s:s, s:f, s:i, s:f, s:f, s:f, s:f, s:b}", "state", "measured", "bytes",
                                    x->bytes, "reps", x->reps, "best_s", x->best_s, "median_s", x->median_s,
                                    "GBps", x->GBps, "median_GBps", x->median_GBps, "check_ok", x->check_ok)
                        : json_pack("{s:s, s:o}", "state", "failed", "note", ga_json_text(x->note));
        if (x->state == MB_MEASURED) {
            json_t *ms = json_array();
            for (int k = 0; k < x->measured && k < MB_MAX_MEASUREMENTS; k++)
                json_array_append_new(ms, json_real(x->measurements[k]));
            json_object_set_new(o, "measurements", ms);
        }
        if (t == MB_DEVICE_RW) /* the GPU triad: which kernel (--triad-kernel) */
            json_object_set_new(o, "kernel", json_string(mb_triad_kernel_name(r->triad_kernel)));
        json_object_set_new(tests, mb_test_name(t), o);
    }
    json_t *o = json_pack("{s:o, s:o, s:b, s:f, s:o}", "model", ga_json_text(r->model), "numa_node",
                          r->numa_node >= 0 ? json_integer(r->numa_node) : json_null(), "numa_bound",
                          r->numa_bound, "buffer_bytes", r->buffer_bytes, "bandwidth", tests);
    if (r->threads > 0)
        json_object_set_new(o, "threads", json_integer(r->threads));
    if (r->hdr.device_index >= 0) {
        json_object_set_new(o, "pinned_bytes", json_real(r->pinned_bytes));
        json_object_set_new(o, "pcie_link_GBps_now",
                            r->pcie_link_GBps > 0 ? json_real(r->pcie_link_GBps) : json_null());
        json_object_set_new(o, "pcie_link",
                            r->pcie_gen_load > 0
                                ? json_pack("{s:i, s:i, s:i, s:i}", "gen_under_load", r->pcie_gen_load,
                                            "width_under_load", r->pcie_width_load, "max_gen",
                                            r->pcie_max_gen, "max_width", r->pcie_max_width)
                                : json_null());
    }
    return o;
}
