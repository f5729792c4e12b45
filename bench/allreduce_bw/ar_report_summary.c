/* allreduce_bw's report (ar_report.h): the summary, conditions, metrics and headlines at the end of the run,
 * from what the patterns concluded. */
#include "ar_report.h"

#include <math.h>
#include <stdio.h>

#include "ga_headline.h"
#include "ga_report.h"
#include "ga_text.h"

/* The summary object: the first combination's figures at the top (a report of one pattern reads as it always
 * has), then every combination and each pattern's part. */
static json_t *summary_json(const ar_summary_facts *f, ar_outcome *out)
{
    const ar_opts *o = f->o;
    json_t *first = json_array_get(out->combos, 0);
    json_t *summary = json_pack(
        "{s:o, s:s, s:s, s:s, s:i, s:O, s:O, s:O, s:O, s:I, s:I, s:i, s:i, s:i, s:i, s:i, s:f}", "backend",
        ga_json_text(f->backend), "collective", ar_coll_get(o->coll)->name, "datatype",
        ar_dtype_get(f->type)->name, "op", ar_coll_get(o->coll)->reduces ? ar_op_name(f->op) : "none", "root",
        o->root, "results", json_object_get(first, "results"), "avg_busbw_GBps",
        json_object_get(first, "avg_busbw_GBps"), "busbw_at_max_GBps",
        json_object_get(first, "busbw_at_max_GBps"), "max_bytes", json_object_get(first, "max_bytes"),
        "wrong_total", (json_int_t)out->wrong_total, "out_of_bounds", (json_int_t)out->out_of_bounds, "iters",
        o->iters, "warmup_iters", o->warmup, "check", o->check, "average", o->average, "nranks",
        f->world_size, "timeout_s", o->timeout_s);
    /* "pattern": the first asked for; "patterns": all, in order */
    json_t *patterns = json_array();
    for (int i = 0; i < o->n_patterns; i++)
        json_array_append_new(patterns, json_string(ar_pattern_name(o->patterns[i])));
    json_object_set_new(summary, "pattern", json_string(ar_pattern_name(o->patterns[0])));
    json_object_set_new(summary, "patterns", patterns);
    json_object_set_new(summary, "pairs", out->pairs ? out->pairs : json_null());
    json_object_set_new(summary, "node", out->node ? out->node : json_null());
    json_object_set_new(summary, "combinations", out->combos ? out->combos : json_array());
    json_object_set_new(summary, "phases", out->phases ? out->phases : json_array());
    out->pairs = out->node = out->combos = out->phases = NULL;
    return summary;
}

/* The metrics and headlines of each pattern that ran. */
static void headlines(json_t *report, const ar_summary_facts *f, const ar_outcome *out)
{
    const char *cname = ar_coll_get(f->o->coll)->name;
    char label[96];
    if (out->ran[AR_PATTERN_WORLD]) {
        ga_report_add_metric(report, "busbw_at_max", out->first_fig.busbw_at_max, "GB/s", true,
                             GA_WHERE_CLUSTER);
        ga_report_add_metric(report, "avg_busbw", out->first_fig.avg_busbw, "GB/s", true, GA_WHERE_CLUSTER);
        ar_figures_headlines(report, &out->first_fig, cname, f->world_size, f->node_count);
    }
    if (out->ran[AR_PATTERN_NODE]) {
        snprintf(label, sizeof label, "%s busbw of the slowest node (intra-node)", cname);
        ga_report_add_headline(
            report, &(ga_headline){.name = "node_busbw_min",
                                   .label = label,
                                   .value = out->node_busbw_min,
                                   .unit = "GB/s",
                                   .higher_is_better = true,
                                   .reference = f->o->min_node_busbw > 0 ? f->o->min_node_busbw : NAN,
                                   .reference_label = "--min-node-busbw"});
    }
    if (out->ran[AR_PATTERN_PAIRS]) {
        snprintf(label, sizeof label, "%s busbw of the median pair", cname);
        ga_report_add_headline(report, &(ga_headline){.name = "pair_busbw_median",
                                                      .label = label,
                                                      .value = out->pair_median_busbw,
                                                      .unit = "GB/s",
                                                      .higher_is_better = true,
                                                      .reference = NAN});
        ga_report_add_headline(report, &(ga_headline){.name = "pairs_flagged",
                                                      .label = "pairs flagged below the median",
                                                      .value = out->pairs_flagged,
                                                      .unit = "pairs",
                                                      .reference = NAN});
    }
}

void ar_summary_fill(json_t *report, const ar_summary_facts *f, ar_outcome *out)
{
    json_t *summary = summary_json(f, out);
    const char *dtype = json_string_value(json_object_get(summary, "datatype"));
    const char *op = json_string_value(json_object_get(summary, "op"));
    json_object_set_new(report, "summary", summary);
    json_object_set_new(report, "conditions", ar_conditions_json(f->o, f->backend, dtype, op));
    headlines(report, f, out);
    json_object_set_new(report, "not_covered", out->not_covered ? out->not_covered : json_array());
    out->not_covered = NULL;
}
