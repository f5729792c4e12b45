#include "ar_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ga_headline.h"
#include "ga_stats.h"
#include "ga_text.h"

static const char *const placement_names[AR_PLACEMENTS] = {"out-of-place", "in-place"};

int ar_line_compute(const ar_sweep_desc *d, int size_index, const ar_sample *const *samples,
                    const int *group_of, int n, int n_groups, ar_line *out)
{
    memset(out, 0, sizeof *out);
    const ar_sample **members = malloc((size_t)(n > 0 ? n : 1) * sizeof *members);
    double *group_time = malloc((size_t)(n_groups > 0 ? n_groups : 1) * sizeof *group_time);
    if (!members || !group_time) {
        free(members);
        free(group_time);
        return -1;
    }
    int group_size = 0;
    for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
        ar_aggregate(samples, n, pl, AR_TIME_AVG, &out->agg[pl]);
        int used = 0;
        for (int g = 0; g < n_groups; g++) {
            int m = 0;
            for (int i = 0; i < n; i++)
                if (group_of[i] == g)
                    members[m++] = samples[i];
            if (m == 0)
                continue;
            if (group_size == 0)
                group_size = m;
            ar_agg ga;
            ar_aggregate(members, m, pl, d->mode, &ga);
            group_time[used++] = ga.time_s;
        }
        out->agg[pl].time_s = used == 1 ? group_time[0] : ga_median(group_time, (size_t)used);
    }
    free(members);
    free(group_time);

    ar_counts c;
    ar_coll_counts(d->coll, d->sizes[size_index], d->type, group_size > 0 ? group_size : 1, &c);
    out->bytes = ar_coll_bytes(&c, d->type);
    out->count = c.param_count;
    out->group_size = group_size;
    for (int pl = 0; pl < AR_PLACEMENTS; pl++)
        ar_coll_bandwidth(d->coll, out->bytes, out->agg[pl].time_s, group_size, &out->algbw[pl],
                          &out->busbw[pl]);
    return 0;
}

void ar_figures_add(ar_figures *f, const ar_line *l, int n_lines_so_far)
{
    int n = n_lines_so_far * AR_PLACEMENTS;
    double sum = f->avg_busbw * n;
    for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
        sum += l->busbw[pl];
        if (l->agg[pl].wrong > 0) {
            f->wrong_total += l->agg[pl].wrong;
            f->out_of_bounds++;
        }
    }
    f->avg_busbw = sum / (n + AR_PLACEMENTS);
    f->busbw_at_max = l->busbw[0];
    f->busbw_at_max_ip = l->busbw[1];
    f->max_bytes = l->bytes;
    if (n_lines_so_far < AR_MAX_SIZES) {
        f->bytes[n_lines_so_far] = (double)l->bytes;
        for (int pl = 0; pl < AR_PLACEMENTS; pl++)
            f->busbw[pl][n_lines_so_far] = l->busbw[pl];
        f->n_lines = n_lines_so_far + 1;
    }
}

void ar_figures_headlines(json_t *report, const ar_figures *fig, const char *what, int nranks, int nnodes)
{
    char label[96], title[160];
    snprintf(label, sizeof label, "%s busbw at the largest size", what);
    ga_report_add_headline(report, &(ga_headline){.name = "busbw_at_max",
                                                  .label = label,
                                                  .value = fig->n_lines ? fig->busbw_at_max : NAN,
                                                  .unit = "GB/s",
                                                  .higher_is_better = true,
                                                  .reference = NAN});
    snprintf(label, sizeof label, "%s busbw, average over sizes", what);
    ga_report_add_headline(report, &(ga_headline){.name = "avg_busbw",
                                                  .label = label,
                                                  .value = fig->n_lines ? fig->avg_busbw : NAN,
                                                  .unit = "GB/s",
                                                  .higher_is_better = true,
                                                  .reference = NAN});
    if (!fig->n_lines)
        return;
    snprintf(title, sizeof title, "%s busbw against message size (%d rank%s, %d node%s)", what, nranks,
             nranks == 1 ? "" : "s", nnodes, nnodes == 1 ? "" : "s");
    json_t *chart = ga_chart_new(title, "message size", "busbw (GB/s)", true);
    for (int pl = 0; pl < AR_PLACEMENTS; pl++)
        ga_chart_add_series(chart, placement_names[pl], fig->bytes, fig->busbw[pl], (size_t)fig->n_lines);
    ga_report_add_chart(report, chart);
}

/* ---- the report ---- */

json_t *ar_results_json(const ar_sweep_desc *d, const ar_record *const *recs, const int *group_of, int n,
                        int n_groups, ar_figures *fig)
{
    memset(fig, 0, sizeof *fig);
    json_t *results = json_array();
    const ar_sample **samples = malloc((size_t)(n > 0 ? n : 1) * sizeof *samples);
    if (!samples)
        return results;
    for (int s = 0; s < d->n_sizes; s++) {
        for (int i = 0; i < n; i++)
            samples[i] = &recs[i]->samples[s];
        ar_line l;
        if (ar_line_compute(d, s, samples, group_of, n, n_groups, &l) != 0)
            break;
        ar_figures_add(fig, &l, s);
        for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
            const ar_agg *a = &l.agg[pl];
            const ar_record *slow = recs[a->slowest];
            json_array_append_new(
                results,
                json_pack(
                    "{s:I, s:I, s:s, s:s, s:s, s:f, s:f, s:f, s:I, s:b, s:{s:f, s:f, s:f}, s:{s:i, s:o}}",
                    "bytes", (json_int_t)l.bytes, "count", (json_int_t)l.count, "placement",
                    placement_names[pl], "datatype", ar_dtype_get(d->type)->name, "op",
                    ar_coll_get(d->coll)->reduces ? ar_op_name(d->op) : "none", "time_us", a->time_s * 1e6,
                    "algbw_GBps", l.algbw[pl], "busbw_GBps", l.busbw[pl], "wrong",
                    (json_int_t)(a->wrong > 0 ? a->wrong : 0), "checked", a->wrong >= 0, "rank_time_us",
                    "min", a->min_s * 1e6, "mean", a->mean_s * 1e6, "max", a->max_s * 1e6, "slowest", "rank",
                    slow->hdr.world_rank, "host", ga_json_text(slow->hdr.host)));
        }
    }
    free(samples);
    return results;
}

void ar_sweep_findings(const ar_sweep_desc *d, const ar_record *const *recs, int n, const ar_figures *fig,
                       double min_busbw, bool check_busbw, ga_findings *f)
{
    const char *cname = ar_coll_get(d->coll)->name, *tname = ar_dtype_get(d->type)->name;
    const char *oname = ar_coll_get(d->coll)->reduces ? ar_op_name(d->op) : "none";
    if (fig->wrong_total > 0) {
        int worst = 0;
        int64_t worst_wrong = -1;
        uint64_t first_size = 0;
        const char *first_place = "";
        for (int i = 0; i < n; i++) {
            int64_t w = 0;
            for (int s = 0; s < recs[i]->n_sizes && s < d->n_sizes; s++)
                for (int pl = 0; pl < AR_PLACEMENTS; pl++)
                    if (recs[i]->samples[s].wrong[pl] > 0) {
                        w += recs[i]->samples[s].wrong[pl];
                        if (!*first_place || d->sizes[s] < first_size) {
                            first_size = d->sizes[s];
                            first_place = placement_names[pl];
                        }
                    }
            if (w > worst_wrong) {
                worst_wrong = w;
                worst = i;
            }
        }
        const ar_record *r = recs[worst];
        ga_where w = ga_record_where(&r->hdr);
        ga_findings_add(
            f, GA_SEV_FAIL, "COMM_WRONG_RESULT", w,
            "%s %s %s: %lld wrong elements in %d measurements (smallest size %llu B %s); rank %d on "
            "%s has the most (%lld)",
            cname, tname, oname, (long long)fig->wrong_total, fig->out_of_bounds,
            (unsigned long long)first_size, first_place, r->hdr.world_rank, r->hdr.host,
            (long long)worst_wrong);
    }
    if (check_busbw && min_busbw > 0 && fig->busbw_at_max < min_busbw)
        ga_findings_add(f, GA_SEV_FAIL, "COMM_BUSBW_LOW", GA_WHERE_CLUSTER,
                        "%s %s %s: bus bandwidth %.2f GB/s at %llu B is below --min-busbw %.2f GB/s", cname,
                        tname, oname, fig->busbw_at_max, (unsigned long long)fig->max_bytes, min_busbw);
}
