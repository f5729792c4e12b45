#include "gf_analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_headline.h"
#include "ga_report.h"
#include "ga_text.h"
#include "ga_devflag.h"
#include "ga_devreport.h"

double gf_tflops(int64_t m, int64_t n, int64_t k, int iters, double time_s)
{
    return time_s > 0 ? 2.0 * (double)m * (double)n * (double)k * iters / time_s / 1e12 : 0;
}

void gf_burn_drop(const gf_record *r, double max_drop_pct, ga_series_drop *out)
{
    /* the first interval holds the clocks' ramp and the caches' warming, whatever the GPU's health */
    int warmup = r->intervals >= 4 ? 1 : 0;
    ga_series_drop_judge(r->interval_tflops, r->intervals, warmup, max_drop_pct, out);
    /* Thirds of fewer than 3 intervals are single intervals (or the mean of two), and the noise of 2 to 7
     * differences is no bound: 3 intervals of 0.2 s on a loaded host "fell" 24.6 % against a 19.5 % bound
     * (issue 40, finding 8). Below GF_BURN_MIN_JUDGED the trend is reported, not judged. */
    if (out->used < GF_BURN_MIN_JUDGED)
        out->judged = out->fell = false;
}

void gf_burn_intervals_line(const gf_record *r, double max_drop_pct, char *buf, size_t len)
{
    ga_series_drop d;
    gf_burn_drop(r, max_drop_pct, &d);
    size_t k = (size_t)snprintf(buf, len, "rank %d on %s GPU %d: %s TFLOP/s per interval:", r->hdr.world_rank,
                                r->hdr.host, r->hdr.device_index, ga_dtype_name(r->burn_dtype));
    for (int t = 0; t < r->intervals && k < len; t++)
        k += (size_t)snprintf(buf + k, len - k, " %.4g", r->interval_tflops[t]);
    if (k < len)
        snprintf(buf + k, len - k,
                 " (first third %.4g, last third %.4g: %.1f%% drop, noise %.1f%%, bound %.1f%%)", d.first,
                 d.last, d.drop_pct, d.noise_pct, d.bound_pct);
}

static double peak_of(const gf_record *r, int d)
{
    if (r->hdr.device_index < 0)
        return -1; /* host path: no datasheet peak for a CPU */
    const ga_gpu_peaks *pk = ga_peaks_lookup(r->model);
    return pk && pk->tflops[d] > 0 ? pk->tflops[d] : -1;
}

static void samples_for(const gf_record *all, int n, int d, ga_dev_sample *s)
{
    for (int i = 0; i < n; i++) {
        const gf_record *r = &all[i];
        bool measured = r->dt[d].state == GF_MEASURED;
        s[i] =
            (ga_dev_sample){.host = r->hdr.host,
                            .node_index = r->hdr.node_index,
                            .rank = r->hdr.world_rank,
                            .gpu = r->hdr.device_index,
                            .pci_bus_id = ga_record_where(&r->hdr).pci_bus_id,
                            .group = r->model,
                            .value = measured ? r->dt[d].tflops : -1,
                            .peak = peak_of(r, d),
                            .measurements = measured && r->dt[d].measured > 0 ? r->dt[d].measurements : NULL,
                            .measured = r->dt[d].measured};
    }
}

/* The peak shared by every measured GPU, or -1 (unknown, or a mix of models). */
static double common_peak(const ga_dev_sample *s, int n)
{
    double pk = -2;
    for (int i = 0; i < n; i++) {
        if (s[i].value < 0)
            continue;
        if (pk == -2)
            pk = s[i].peak;
        else if (pk != s[i].peak)
            return -1;
    }
    return pk > 0 ? pk : -1;
}

static json_t *num_or_null(double v)
{
    return v >= 0 ? json_real(v) : json_null();
}

/* Per-rank failures, skips and wrong results of one dtype. */
static void dtype_findings(const gf_record *all, int n, int d, const gf_policy *p, ga_findings *f,
                           json_t *entry)
{
    const char *name = ga_dtype_name(d);
    int skipped = 0, first_skip = -1;
    for (int i = 0; i < n; i++) {
        const gf_record *r = &all[i];
        const gf_result *x = &r->dt[d];
        ga_where w = ga_record_where(&r->hdr);
        if (x->state == GF_FAILED)
            ga_findings_add(f, GA_SEV_FAIL, "GEMM_FAILED", w,
                            "node %d (%s) rank %d GPU %d: %s GEMM failed: %s", r->hdr.node_index, r->hdr.host,
                            r->hdr.world_rank, r->hdr.device_index, name, x->note);
        if (x->state == GF_MEASURED && !x->check_ok)
            ga_findings_add(f, GA_SEV_FAIL, "GEMM_WRONG_RESULT", w,
                            "node %d (%s) rank %d GPU %d: %s GEMM result differs from a naive dot product "
                            "(error %.3g, tolerance %.3g)",
                            r->hdr.node_index, r->hdr.host, r->hdr.world_rank, r->hdr.device_index, name,
                            x->check_err, x->check_tol);
        if (x->state == GF_SKIPPED && skipped++ == 0)
            first_skip = i;
    }
    if (skipped) {
        const gf_result *x = &all[first_skip].dt[d];
        ga_findings_add(f, p->dtypes_explicit ? GA_SEV_WARN : GA_SEV_INFO, "GEMM_DTYPE_UNAVAILABLE",
                        GA_WHERE_CLUSTER, "%s not measured on %d of %d ranks: %s", name, skipped, n, x->note);
        json_object_set_new(entry, "skipped",
                            json_pack("{s:i, s:o}", "ranks", skipped, "reason", ga_json_text(x->note)));
    }
}

static json_t *analyse_dtype(const gf_record *all, int n, int d, const gf_policy *p, json_t *report,
                             ga_findings *f, ga_dev_sample *s, ga_dev_verdict *v, ga_dev_figure *fig)
{
    samples_for(all, n, d, s);
    ga_dev_policy tp = {p->tolerance, p->min_efficiency, p->relative_warn};
    double median = ga_dev_flag(s, n, &tp, v);
    char metric[48];
    snprintf(metric, sizeof metric, "%s GEMM", ga_dtype_name(d));
    const char *unit = d == GA_INT8 ? "TOP/s" : "TFLOP/s";
    ga_dev_labels labels = {
        metric, unit, "GEMM_BELOW_MEDIAN", "GEMM_BELOW_PEAK", "GEMM_PEERS_DIFFER", "GEMM_TOO_NOISY"};
    ga_dev_add_findings(f, &labels, s, v, n, &tp);

    *fig = (ga_dev_figure){.unit = unit, .median = median, .peak = common_peak(s, n)};
    snprintf(fig->name, sizeof fig->name, "%s", ga_dtype_name(d));
    snprintf(fig->metric, sizeof fig->metric, "tflops_%s", ga_dtype_name(d));
    for (int i = 0; i < n; i++) {
        fig->measured += s[i].value >= 0;
        fig->on_gpus = fig->on_gpus || s[i].gpu >= 0;
    }
    json_t *entry = json_pack("{s:s, s:o, s:o, s:s}", "dtype", fig->name, "median_tflops",
                              num_or_null(median), "peak_tflops", num_or_null(fig->peak), "unit", unit);
    json_object_set_new(entry, "gpus", ga_dev_gpus_json(s, v, n, "tflops"));
    dtype_findings(all, n, d, p, f, entry);

    int *idx = malloc((size_t)n * sizeof *idx);
    if (idx) {
        ga_dev_order(s, n, idx);
        for (int k = 0; k < n; k++) {
            const ga_dev_sample *x = &s[idx[k]];
            if (x->value < 0)
                continue;
            ga_report_add_metric(report, fig->metric, x->value, unit, true,
                                 (ga_where){x->host, x->node_index, x->rank, x->gpu, x->pci_bus_id});
            if (v[idx[k]].below_median || v[idx[k]].below_peak)
                ga_report_flag_last_metric(report);
        }
        free(idx);
    }
    return entry;
}

unsigned gf_suspect_dtypes(const gf_record *all, int n, const gf_policy *p, char *why, size_t why_len)
{
    ga_dev_sample *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    ga_dev_verdict *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    unsigned mask = 0;
    size_t k = 0;
    why[0] = '\0';
    ga_dev_policy tp = {p->tolerance, p->min_efficiency, p->relative_warn};
    for (int d = 0; s && v && d < GA_DTYPE_COUNT; d++) {
        if (!(p->dtypes & (1u << d)))
            continue;
        samples_for(all, n, d, s);
        if (ga_dev_flag(s, n, &tp, v) < -1 || !ga_dev_any_suspect(v, n))
            continue;
        mask |= 1u << d;
        int suspects = 0, measured = 0;
        for (int i = 0; i < n; i++) {
            suspects += v[i].below_median || v[i].below_peak || v[i].differs || v[i].screened;
            measured += s[i].value >= 0;
        }
        if (k < why_len)
            k += (size_t)snprintf(
                why + k, why_len - k,
                "%s%s: %d of %d %s more than the tolerance below the median, below a bound, or differing",
                k ? "; " : "", ga_dtype_name(d), suspects, measured,
                all[0].hdr.device_index >= 0 ? "GPUs" : "ranks");
    }
    free(s);
    free(v);
    return mask;
}

typedef struct {
    int gid, rank_index;
    uint64_t sum;
} sdc_entry;

static int cmp_sdc(const void *a, const void *b)
{
    const sdc_entry *x = a, *y = b;
    if (x->gid != y->gid)
        return x->gid < y->gid ? -1 : 1;
    return (x->sum > y->sum) - (x->sum < y->sum);
}

int gf_sdc_compare(const gf_record *all, int n, int *mismatches)
{
    int *gid = malloc((size_t)(n > 0 ? n : 1) * sizeof *gid);
    sdc_entry *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!gid || !e) {
        free(gid);
        free(e);
        return -1;
    }
    /* Groups: same burn dtype and same group string (model, SM count, library). */
    for (int i = 0; i < n; i++) {
        mismatches[i] = 0;
        gid[i] = i;
        for (int j = 0; j < i; j++)
            if (gid[j] == j && all[j].burn_dtype == all[i].burn_dtype &&
                strcmp(all[j].group, all[i].group) == 0) {
                gid[i] = j;
                break;
            }
    }
    int total = 0;
    for (int t = 0; t < GF_MAX_INTERVALS; t++) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (all[i].burn_dtype >= 0 && t < all[i].intervals)
                e[m++] = (sdc_entry){gid[i], i, all[i].interval_checksum[t]};
        if (!m)
            break;
        qsort(e, (size_t)m, sizeof *e, cmp_sdc);
        for (int g0 = 0; g0 < m;) {
            int g1 = g0, best = 0, ties = 0;
            uint64_t best_sum = 0;
            while (g1 < m && e[g1].gid == e[g0].gid)
                g1++;
            for (int r0 = g0; r0 < g1;) {
                int r1 = r0;
                while (r1 < g1 && e[r1].sum == e[r0].sum)
                    r1++;
                if (r1 - r0 > best) {
                    best = r1 - r0;
                    best_sum = e[r0].sum;
                    ties = 0;
                } else if (r1 - r0 == best) {
                    ties = 1;
                }
                r0 = r1;
            }
            /* A strict majority names the odd ones out; without one (two GPUs that disagree, or equal camps)
             * nobody can be trusted and every member of the group is named. */
            bool majority = 2 * best > g1 - g0 && !ties;
            for (int k = g0; k < g1; k++) {
                const gf_record *r = &all[e[k].rank_index];
                bool bad = (best < g1 - g0) && (!majority || e[k].sum != best_sum);
                bad = bad || e[k].sum != r->interval_checksum[0]; /* its own output changed over time */
                bad = bad || r->interval_bad_gemms[t] > 0;        /* a GEMM differed from its first */
                if (bad) {
                    mismatches[e[k].rank_index]++;
                    total++;
                }
            }
            g0 = g1;
        }
    }
    free(gid);
    free(e);
    return total;
}

/* A burning GPU's findings: its throttling and its output differing from its peers' (or its own). */
static void burn_findings(const gf_record *r, const ga_series_drop *drop, int mismatched, const gf_policy *p,
                          ga_where w, ga_findings *f)
{
    if (drop->fell)
        ga_findings_add(
            f, GA_SEV_FAIL, "GEMM_THROTTLING", w,
            "node %d (%s) rank %d GPU %d: %s TFLOP/s fell %.1f%% from the first to the last third "
            "of %d intervals (medians %.4g -> %.4g); limit %.1f%% (--max-drop %.1f%%, interval "
            "noise %.1f%%)",
            r->hdr.node_index, r->hdr.host, r->hdr.world_rank, r->hdr.device_index,
            ga_dtype_name(r->burn_dtype), drop->drop_pct, drop->used, drop->first, drop->last,
            drop->bound_pct, p->max_drop_pct, drop->noise_pct);
    if (mismatched)
        ga_findings_add(f, GA_SEV_FAIL, "GEMM_SDC_MISMATCH", w,
                        "node %d (%s) rank %d GPU %d: %s GEMM output differs from identical GPUs given "
                        "identical inputs (or from its own earlier output) in %d of %d intervals",
                        r->hdr.node_index, r->hdr.host, r->hdr.world_rank, r->hdr.device_index,
                        ga_dtype_name(r->burn_dtype), mismatched, r->intervals);
}

/* A burning GPU's entry in the report: every interval's figure, its checksum, the throttling judgement. */
static json_t *burn_gpu_json(const gf_record *r, const ga_series_drop *drop, int mismatched)
{
    json_t *iv = json_array();
    long long gemms = 0, bad_gemms = 0;
    for (int t = 0; t < r->intervals; t++) {
        json_array_append_new(iv, json_real(r->interval_tflops[t]));
        gemms += r->interval_gemms[t], bad_gemms += r->interval_bad_gemms[t];
    }
    char sum0[24];
    snprintf(sum0, sizeof sum0, "%016llx", (unsigned long long)r->interval_checksum[0]);
    json_t *g =
        json_pack("{s:o, s:i, s:i, s:o, s:o, s:o, s:f, s:s, s:i, s:b}", "host", ga_json_text(r->hdr.host),
                  "node_index", r->hdr.node_index, "rank", r->hdr.world_rank, "gpu",
                  r->hdr.device_index >= 0 ? json_integer(r->hdr.device_index) : json_null(), "model",
                  ga_json_text(r->model), "interval_tflops", iv, "drop_pct", drop->drop_pct, "checksum", sum0,
                  "sdc_mismatch_intervals", mismatched, "flagged", drop->fell || mismatched);
    json_object_set_new(g, "gemms_checked", json_integer(gemms));
    json_object_set_new(g, "gemms_mismatched", json_integer(bad_gemms));
    json_object_set_new(g, "throttling",
                        json_pack("{s:b, s:i, s:f, s:f, s:f, s:f, s:b}", "judged", drop->judged,
                                  "intervals_judged", drop->used, "first_third_tflops", drop->first,
                                  "last_third_tflops", drop->last, "noise_pct", drop->noise_pct, "bound_pct",
                                  drop->bound_pct, "fell", drop->fell));
    return g;
}

static json_t *analyse_burn(const gf_record *all, int n, const gf_policy *p, json_t *report, ga_findings *f,
                            gf_outcome *out)
{
    int burners = 0, first = -1;
    for (int i = 0; i < n; i++)
        if (all[i].burn_dtype >= 0 && all[i].intervals > 0 && burners++ == 0)
            first = i;
    if (!burners)
        return json_null();
    int *mism = calloc((size_t)n, sizeof *mism);
    int *idx = calloc((size_t)n, sizeof *idx);
    if (!mism || !idx) {
        free(mism);
        free(idx);
        return json_null();
    }
    int total = gf_sdc_compare(all, n, mism);
    if (total < 0)
        total = 0;
    ga_dev_record_order(all, n, sizeof *all, idx);
    json_t *gpus = json_array();
    int sdc_gpus = 0;
    for (int k = 0; k < n; k++) {
        const gf_record *r = &all[idx[k]];
        if (r->burn_dtype < 0 || r->intervals <= 0)
            continue;
        ga_where w = ga_record_where(&r->hdr);
        ga_series_drop drop;
        gf_burn_drop(r, p->max_drop_pct, &drop);
        out->throttling_gpus += drop.fell;
        sdc_gpus += mism[idx[k]] > 0;
        burn_findings(r, &drop, mism[idx[k]], p, w, f);
        json_array_append_new(gpus, burn_gpu_json(r, &drop, mism[idx[k]]));
        ga_report_add_metric(report, "burn_drop_pct", drop.drop_pct, "%", false, w);
    }
    ga_report_add_metric(report, "sdc_mismatches", total, "intervals", false, GA_WHERE_CLUSTER);
    int warmup = all[first].intervals >= 4 ? 1 : 0;
    if (all[first].intervals - warmup < GF_BURN_MIN_JUDGED)
        ga_findings_add(f, GA_SEV_INFO, "GEMM_THROTTLING_UNJUDGED", GA_WHERE_CLUSTER,
                        "burn of %d intervals of %.3g s: throttling is judged on at least %d intervals after "
                        "the warm-up one (medians of thirds of 3 or more); not judged, the drops are in the "
                        "report (a longer --duration, or a shorter --interval, gives enough)",
                        all[first].intervals, all[first].interval_s, GF_BURN_MIN_JUDGED);
    out->burned = true;
    out->burn_intervals = all[first].intervals;
    out->burn_interval_s = all[first].interval_s;
    out->sdc_mismatches = total;
    out->sdc_gpus = sdc_gpus;
    json_t *b = json_pack("{s:f, s:f, s:i, s:s, s:i, s:i, s:o}", "duration_s",
                          all[first].interval_s * all[first].intervals, "interval_s", all[first].interval_s,
                          "intervals", all[first].intervals, "dtype", ga_dtype_name(all[first].burn_dtype),
                          "sdc_mismatches", total, "sdc_gpus", sdc_gpus, "gpus", gpus);
    free(mism);
    free(idx);
    return b;
}

void gf_analyse(const gf_record *all, int n, const gf_policy *p, const char *backend, json_t *report,
                ga_findings *f, gf_outcome *out)
{
    memset(out, 0, sizeof *out);
    ga_dev_sample *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    ga_dev_verdict *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    json_t *dtypes = json_array();
    for (int d = 0; s && v && d < GA_DTYPE_COUNT; d++)
        if (p->dtypes & (1u << d))
            json_array_append_new(
                dtypes, analyse_dtype(all, n, d, p, report, f, s, v, &out->dtypes[out->n_dtypes++]));
    free(s);
    free(v);
    for (int i = 0; i < n; i++)
        if (all[i].hdr.status != 0)
            ga_findings_add(f, GA_SEV_FAIL, "GEMM_RANK_FAILED", ga_record_where(&all[i].hdr),
                            "node %d (%s) rank %d: %s", all[i].hdr.node_index, all[i].hdr.host,
                            all[i].hdr.world_rank, all[i].hdr.message);
    json_t *summary = json_pack(
        "{s:s, s:I, s:I, s:I, s:o, s:f, s:o}", "backend", backend, "m", (json_int_t)(n ? all[0].m : 0), "n",
        (json_int_t)(n ? all[0].n : 0), "k", (json_int_t)(n ? all[0].k : 0), "dtypes", dtypes, "tolerance",
        p->tolerance, "min_efficiency", p->min_efficiency > 0 ? json_real(p->min_efficiency) : json_null());
    json_object_set_new(summary, "burn", analyse_burn(all, n, p, report, f, out));
    json_object_set_new(report, "summary", summary);
    /* What the figures depend on: a GEMM of another shape or library is another figure (compare). */
    json_object_set_new(report, "conditions",
                        json_pack("{s:s, s:I, s:I, s:I}", "backend", backend, "m",
                                  (json_int_t)(n ? all[0].m : 0), "n", (json_int_t)(n ? all[0].n : 0), "k",
                                  (json_int_t)(n ? all[0].k : 0)));
}
