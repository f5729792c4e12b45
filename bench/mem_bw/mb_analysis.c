#include "mb_analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_headline.h"
#include "ga_report.h"
#include "ga_devflag.h"
#include "ga_peaks.h"

static const char *const test_names[MB_TEST_COUNT] = {"device_copy", "device_rw", "h2d", "d2h", "host_triad"};

const char *mb_test_name(int t)
{
    return t >= 0 && t < MB_TEST_COUNT ? test_names[t] : "?";
}

bool mb_wants(const mb_opts *o, int t)
{
    return o->tests == 0 || (o->tests & (1u << t));
}

void mb_result_add(mb_result *dst, const mb_result *src)
{
    if (src->state != MB_MEASURED) {
        if (src->state == MB_FAILED) { /* a test that fails when measured again has failed */
            int measured = dst->measured;
            *dst = *src;
            dst->measured = measured;
        }
        return;
    }
    if (dst->state != MB_MEASURED) {
        *dst = *src;
        dst->measured = 1;
        dst->measurements[0] = src->GBps;
        return;
    }
    if (dst->measured < MB_MAX_MEASUREMENTS)
        dst->measurements[dst->measured++] = src->GBps;
    int ok = dst->check_ok && src->check_ok;
    if (src->GBps > dst->GBps) {
        int measured = dst->measured;
        double ms[MB_MAX_MEASUREMENTS];
        for (int i = 0; i < measured; i++)
            ms[i] = dst->measurements[i];
        *dst = *src;
        dst->measured = measured;
        for (int i = 0; i < measured; i++)
            dst->measurements[i] = ms[i];
    }
    dst->check_ok = ok;
}

double mb_peak(const mb_record *r, int test)
{
    if (r->hdr.device_index < 0)
        return -1;
    const ga_gpu_peaks *pk = ga_peaks_lookup(r->model);
    if (!pk)
        return -1;
    if (test == MB_DEVICE_COPY || test == MB_DEVICE_RW)
        return pk->mem_GBps;
    if (test == MB_H2D || test == MB_D2H)
        return ga_pcie_GBps(pk->pcie_gen, pk->pcie_width);
    return -1;
}

static json_t *num_or_null(double v)
{
    return v >= 0 ? json_real(v) : json_null();
}

static json_t *analyse_test(const mb_record *all, int n, int t, const mb_policy *p, json_t *report,
                            ga_findings *f, ga_dev_sample *s, ga_dev_verdict *v, ga_dev_figure *fig)
{
    double peak = -2;
    for (int i = 0; i < n; i++) {
        const mb_record *r = &all[i];
        double pk = mb_peak(r, t);
        bool measured = r->t[t].state == MB_MEASURED;
        s[i] = (ga_dev_sample){.host = r->hdr.host,
                               .node_index = r->hdr.node_index,
                               .rank = r->hdr.world_rank,
                               .gpu = r->hdr.device_index,
                               .pci_bus_id = ga_record_where(&r->hdr).pci_bus_id,
                               .group = r->model,
                               .value = measured ? r->t[t].GBps : -1,
                               .peak = pk,
                               .measurements = measured && r->t[t].measured > 0 ? r->t[t].measurements : NULL,
                               .measured = r->t[t].measured};
        if (s[i].value >= 0)
            peak = peak == -2 || peak == pk ? pk : -1; /* one peak for the summary only when all agree */
        if (r->t[t].state == MB_FAILED)
            ga_findings_add(f, GA_SEV_FAIL, "MEM_FAILED", ga_record_where(&r->hdr),
                            "node %d (%s) rank %d GPU %d: %s failed: %s", r->hdr.node_index, r->hdr.host,
                            r->hdr.world_rank, r->hdr.device_index, mb_test_name(t), r->t[t].note);
        else if (r->t[t].state == MB_MEASURED && !r->t[t].check_ok)
            ga_findings_add(f, GA_SEV_FAIL, "MEM_WRONG_DATA", ga_record_where(&r->hdr),
                            "node %d (%s) rank %d GPU %d: %s: the data read back is not what was written",
                            r->hdr.node_index, r->hdr.host, r->hdr.world_rank, r->hdr.device_index,
                            mb_test_name(t));
    }
    bool host_link = t == MB_H2D || t == MB_D2H;
    ga_dev_policy tp = {p->tolerance, host_link ? p->min_host_efficiency : p->min_efficiency,
                        p->relative_warn};
    double median = ga_dev_flag(s, n, &tp, v);
    ga_dev_labels labels = {mb_test_name(t),    "GB/s",         "MEM_BELOW_MEDIAN", "MEM_BELOW_PEAK",
                            "MEM_PEERS_DIFFER", "MEM_TOO_NOISY"};
    ga_dev_add_findings(f, &labels, s, v, n, &tp);

    *fig = (ga_dev_figure){.unit = "GB/s", .median = median, .peak = peak > 0 ? peak : -1};
    snprintf(fig->name, sizeof fig->name, "%s", mb_test_name(t));
    snprintf(fig->metric, sizeof fig->metric, "GBps_%s", mb_test_name(t));
    for (int i = 0; i < n; i++) {
        fig->measured += s[i].value >= 0;
        fig->on_gpus = fig->on_gpus || s[i].gpu >= 0;
    }
    json_t *e = json_pack("{s:s, s:o, s:o}", "test", fig->name, "median_GBps", num_or_null(median),
                          "peak_GBps", num_or_null(fig->peak));
    json_object_set_new(e, "gpus", ga_dev_gpus_json(s, v, n, "GBps"));

    int *idx = malloc((size_t)n * sizeof *idx);
    if (idx) {
        ga_dev_order(s, n, idx);
        for (int k = 0; k < n; k++) {
            const ga_dev_sample *x = &s[idx[k]];
            if (x->value < 0)
                continue;
            ga_report_add_metric(report, fig->metric, x->value, "GB/s", true,
                                 (ga_where){x->host, x->node_index, x->rank, x->gpu, x->pci_bus_id});
            if (v[idx[k]].below_median || v[idx[k]].below_peak)
                ga_report_flag_last_metric(report);
        }
        free(idx);
    }
    return e;
}

/* A link that trained below what the GPU and its slot can do (a Gen4 link in a Gen5 slot, x8 of x16), as NVML
 * read it while the host-link tests copied: the PCIe figure is then low on every run, and no peer comparison
 * sees it where every GPU of a model is behind such a link. */
static void check_link(const mb_record *r, ga_findings *f)
{
    if (r->hdr.device_index < 0 || r->pcie_gen_load <= 0 || r->pcie_max_gen <= 0)
        return;
    if (r->pcie_gen_load < r->pcie_max_gen ||
        (r->pcie_max_width > 0 && r->pcie_width_load < r->pcie_max_width))
        ga_findings_add(
            f, GA_SEV_FAIL, "MEM_PCIE_DEGRADED", ga_record_where(&r->hdr),
            "node %d (%s) rank %d GPU %d: PCIe link at Gen%d x%d while copying, the GPU and its slot "
            "can do Gen%d x%d",
            r->hdr.node_index, r->hdr.host, r->hdr.world_rank, r->hdr.device_index, r->pcie_gen_load,
            r->pcie_width_load, r->pcie_max_gen, r->pcie_max_width);
}

void mb_analyse(const mb_record *all, int n, const mb_policy *p, const char *backend, json_t *report,
                ga_findings *f, mb_outcome *out)
{
    memset(out, 0, sizeof *out);
    ga_dev_sample *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    ga_dev_verdict *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    json_t *tests = json_array();
    for (int t = 0; s && v && t < MB_TEST_COUNT; t++) {
        int ran = 0;
        for (int i = 0; i < n; i++)
            ran += all[i].t[t].state != MB_NOT_RUN;
        if (ran)
            json_array_append_new(tests,
                                  analyse_test(all, n, t, p, report, f, s, v, &out->tests[out->n_tests++]));
    }
    free(s);
    free(v);
    for (int i = 0; i < n; i++)
        check_link(&all[i], f);
    for (int i = 0; i < n; i++)
        if (all[i].hdr.status != 0)
            ga_findings_add(f, GA_SEV_FAIL, "MEM_RANK_FAILED", ga_record_where(&all[i].hdr),
                            "node %d (%s) rank %d: %s", all[i].hdr.node_index, all[i].hdr.host,
                            all[i].hdr.world_rank, all[i].hdr.message);
    json_t *summary = json_pack(
        "{s:s, s:o, s:f, s:o, s:o}", "backend", backend, "tests", tests, "tolerance", p->tolerance,
        "min_efficiency", p->min_efficiency > 0 ? json_real(p->min_efficiency) : json_null(),
        "min_host_efficiency", p->min_host_efficiency > 0 ? json_real(p->min_host_efficiency) : json_null());
    json_object_set_new(report, "summary", summary);
    /* What the figures depend on: arrays of another size (cache, not memory) are another figure. */
    json_object_set_new(report, "conditions",
                        json_pack("{s:s, s:f, s:f}", "backend", backend, "buffer_bytes",
                                  n ? all[0].buffer_bytes : 0.0, "pinned_bytes",
                                  n ? all[0].pinned_bytes : 0.0));
}

unsigned mb_suspect_tests(const mb_record *all, int n, const mb_policy *p, char *why, size_t why_len)
{
    ga_dev_sample *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    ga_dev_verdict *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    unsigned mask = 0;
    size_t k = 0;
    why[0] = '\0';
    for (int t = 0; s && v && t < MB_TEST_COUNT; t++) {
        int measured = 0, suspects = 0;
        bool host_link = t == MB_H2D || t == MB_D2H;
        ga_dev_policy tp = {p->tolerance, host_link ? p->min_host_efficiency : p->min_efficiency,
                            p->relative_warn};
        for (int i = 0; i < n; i++) {
            s[i] = (ga_dev_sample){.host = all[i].hdr.host,
                                   .group = all[i].model,
                                   .value = all[i].t[t].state == MB_MEASURED ? all[i].t[t].GBps : -1,
                                   .peak = mb_peak(&all[i], t)};
            measured += s[i].value >= 0;
        }
        if (!measured || ga_dev_flag(s, n, &tp, v) < -1 || !ga_dev_any_suspect(v, n))
            continue;
        mask |= 1u << t;
        for (int i = 0; i < n; i++)
            suspects += v[i].below_median || v[i].below_peak || v[i].differs || v[i].screened;
        if (k < why_len)
            k += (size_t)snprintf(
                why + k, why_len - k,
                "%s%s: %d of %d %s more than the tolerance below the median, below a bound, or differing",
                k ? "; " : "", mb_test_name(t), suspects, measured,
                all[0].hdr.device_index >= 0 ? "GPUs" : "ranks");
    }
    free(s);
    free(v);
    return mask;
}
