/* summary: allreduce_bw's report assembled from what a run concluded (ar_summary_fill), the part of the
 * report that the patterns' own analyses (pairs, nodes) do not write: which headlines and metrics a run has,
 * and how the summary names its patterns. input.json: {"collective" (default "allreduce"), "datatype"
 * ("float"), "op" ("sum"), "backend" ("mpi"), "patterns": [names] (default ["world"]), "ran": [names]
 * (default: the patterns), "world_size" (4), "node_count" (1), "min_node_busbw" (0: none), "curve": [[bytes,
 * out-of-place busbw, in-place busbw], ...] (the first combination's lines), "node_busbw_min",
 * "pair_median_busbw", "pairs_flagged", "not_covered": [lines]} outcome: the report object: "summary",
 * "conditions", "metrics", "headlines", "charts", "not_covered". */
#include <stdio.h>
#include <string.h>

#include "ar_report.h"
#include "fixture_adapt.h"
#include "ga_report.h"

static int pattern_list(const json_t *names, ar_pattern_id *out, int *n, char *err, size_t err_len)
{
    size_t i;
    json_t *v;
    *n = 0;
    json_array_foreach(names, i, v) {
        int found = -1;
        for (int p = 0; p < AR_PATTERNS; p++)
            if (json_is_string(v) && strcmp(json_string_value(v), ar_pattern_name((ar_pattern_id)p)) == 0)
                found = p;
        if (found < 0 || *n >= AR_PATTERNS) {
            snprintf(err, err_len, "input.json: unknown or repeated pattern at %zu", i);
            return -1;
        }
        out[(*n)++] = (ar_pattern_id)found;
    }
    return 0;
}

static const char *str_or(const json_t *in, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(in, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static int read_opts(const json_t *in, ar_opts *o, ar_summary_facts *f, char *err, size_t err_len)
{
    memset(o, 0, sizeof *o);
    o->iters = 20;
    o->warmup = 5;
    o->check = 1;
    o->average = 1;
    o->min_node_busbw = json_number_value(json_object_get(in, "min_node_busbw"));
    json_t *names = json_object_get(in, "patterns");
    if (names ? pattern_list(names, o->patterns, &o->n_patterns, err, err_len) != 0 : (o->n_patterns = 1, 0))
        return -1;
    if (o->n_patterns == 0 || ar_coll_parse(str_or(in, "collective", "allreduce"), &o->coll) != 0 ||
        ar_dtype_parse(str_or(in, "datatype", "float"), &f->type) != 0 ||
        ar_op_parse(str_or(in, "op", "sum"), &f->op) != 0) {
        snprintf(err, err_len, "input.json: a pattern, and a known collective, datatype and op");
        return -1;
    }
    json_t *ws = json_object_get(in, "world_size"), *nc = json_object_get(in, "node_count");
    f->o = o;
    f->backend = str_or(in, "backend", "mpi");
    f->world_size = ws ? (int)json_integer_value(ws) : 4;
    f->node_count = nc ? (int)json_integer_value(nc) : 1;
    return 0;
}

/* The outcome the runners would have left: the first combination from the curve, the patterns that ran. */
static int read_outcome(const json_t *in, const ar_opts *o, ar_outcome *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    ar_pattern_id ran[AR_PATTERNS];
    int n_ran = o->n_patterns;
    memcpy(ran, o->patterns, sizeof ran);
    if (json_object_get(in, "ran") &&
        pattern_list(json_object_get(in, "ran"), ran, &n_ran, err, err_len) != 0)
        return -1;
    for (int i = 0; i < n_ran; i++)
        out->ran[ran[i]] = true;
    size_t i;
    json_t *line;
    json_array_foreach(json_object_get(in, "curve"), i, line) {
        ar_line l = {.bytes = (uint64_t)json_number_value(json_array_get(line, 0))};
        for (int pl = 0; pl < AR_PLACEMENTS; pl++)
            l.busbw[pl] = json_number_value(json_array_get(line, 1 + (size_t)pl));
        ar_figures_add(&out->first_fig, &l, (int)i);
    }
    json_t *results = json_array();
    out->combos = json_array();
    json_array_append_new(out->combos, json_pack("{s:o, s:f, s:f, s:I}", "results", results, "avg_busbw_GBps",
                                                 out->first_fig.avg_busbw, "busbw_at_max_GBps",
                                                 out->first_fig.busbw_at_max, "max_bytes",
                                                 (json_int_t)out->first_fig.max_bytes));
    out->node_busbw_min = json_number_value(json_object_get(in, "node_busbw_min"));
    out->pair_median_busbw = json_number_value(json_object_get(in, "pair_median_busbw"));
    out->pairs_flagged = (int)json_integer_value(json_object_get(in, "pairs_flagged"));
    json_t *nc = json_object_get(in, "not_covered");
    out->not_covered = nc ? json_deep_copy(nc) : NULL;
    return 0;
}

int fixture_adapt_summary(const char *case_dir, const json_t *in, json_t **outcome, char *err, size_t err_len)
{
    (void)case_dir;
    static const char *const keys[] = {"collective",    "datatype",       "op",
                                       "backend",       "patterns",       "ran",
                                       "world_size",    "node_count",     "min_node_busbw",
                                       "curve",         "node_busbw_min", "pair_median_busbw",
                                       "pairs_flagged", "not_covered",    NULL};
    if (fixture_check_keys(in, keys, "input.json", err, err_len) != 0)
        return -1;
    ar_opts o;
    ar_summary_facts facts;
    ar_outcome out;
    if (read_opts(in, &o, &facts, err, err_len) != 0 || read_outcome(in, &o, &out, err, err_len) != 0)
        return -1;
    json_t *report = json_object();
    ar_summary_fill(report, &facts, &out);
    json_decref(out.combos); /* taken by the summary; NULL here */
    *outcome = report;
    return 0;
}
