/* outcomes: allreduce_bw's report (ar_report.c) from the outcomes its MPI runners fill, written as JSON: what
 * the node pattern and the pairs measured, the sweeps cut for lack of time, nccl-tests' NCCL_TESTS_MIN_BW.
 * input.json: {"tolerance": F (default 0.1), "min_node_busbw": GB/s (default 0: none),
 *   "node": {"size": bytes, "nodes": [{"ranks": N (default 8), "measurements": [GB/s, ...]}]},
 *   "pairs": {"members": M, "rounds": R, "by_rank": bool, "cpus_shared": bool, "world_far_busbw": GB/s and
 *             "screen_busbw": GB/s (the world sweep far below the screen's pairs; default 0: it was not),
 *             "screen": {"member": m, "worst": x, "far": bool} (the member the screen found; default none),
 *             "pairs": [{"round": r, "members": [a, b], "measurements": [GB/s, ...], "cpu_waits": [share,
 * ...] (default unknown), "iters": n}]}, "patterns": ["node", "pairs"] (the order they ran; default: node,
 * then pairs, those given), "sweep_cuts": [{"pattern", "reached", "asked"}], "min_bw": {"avg": GB/s, "min":
 * GB/s}} Node i is host "nodeII" with first rank 8 i; a member of pairs by_rank is rank i of host "node00".
 * Handed to the report in the order: sweeps, sweep_cuts, min_bw, patterns.
 * outcome: {"findings": [as added], "combinations": each sweep's entry, "wrong_total", "out_of_bounds",
 *           "node": the summary's "node", "pairs": the summary's "pairs", "metrics", "not_covered",
 *           "node_busbw_min", "pair_median_busbw", "pairs_flagged"} */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_report.h"
#include "fixture_adapt.h"

static int fail(char *err, size_t err_len, const char *why)
{
    snprintf(err, err_len, "%s", why);
    return -1;
}

static int read_nodes(const json_t *in, ar_nodes_outcome *no, char *err, size_t err_len)
{
    static const char *const keys[] = {"size", "nodes", NULL}, *const node_keys[] = {"ranks", "measurements",
                                                                                     NULL};
    if (fixture_check_keys(in, keys, "node", err, err_len) != 0)
        return -1;
    json_t *arr = json_object_get(in, "nodes");
    no->n = (int)json_array_size(arr);
    no->size = (uint64_t)json_integer_value(json_object_get(in, "size"));
    no->nodes = calloc((size_t)(no->n > 0 ? no->n : 1), sizeof *no->nodes);
    if (!no->nodes || no->n == 0)
        return fail(err, err_len, "node.nodes: a non-empty array");
    for (int i = 0; i < no->n; i++) {
        json_t *o = json_array_get(arr, (size_t)i), *r = json_object_get(o, "ranks");
        if (fixture_check_keys(o, node_keys, "node.nodes[]", err, err_len) != 0)
            return -1;
        ar_node_fig *nd = &no->nodes[i];
        nd->node = i;
        nd->rank = i * 8;
        nd->ranks = r ? (int)json_integer_value(r) : 8;
        snprintf(nd->host, sizeof nd->host, "node%02d", i);
        json_t *ms = json_object_get(o, "measurements");
        for (size_t k = 0; k < json_array_size(ms); k++)
            ar_nodes_add_measurement(nd, json_number_value(json_array_get(ms, k)));
    }
    return 0;
}

/* One pair: its members named by ids, each measurement added as the runner adds it. */
static int read_pair(const json_t *o, const ar_pairs_outcome *po, ga_pair *p, char *err, size_t err_len)
{
    static const char *const keys[] = {"round", "members", "measurements", "cpu_waits", "iters", NULL};
    if (fixture_check_keys(o, keys, "pairs.pairs[]", err, err_len) != 0)
        return -1;
    json_t *mem = json_object_get(o, "members"), *ms = json_object_get(o, "measurements"),
           *ws = json_object_get(o, "cpu_waits");
    p->round = (int)json_integer_value(json_object_get(o, "round"));
    p->iters = (int)json_integer_value(json_object_get(o, "iters"));
    for (int s = 0; s < 2; s++) {
        p->member[s] = (int)json_integer_value(json_array_get(mem, (size_t)s));
        if (json_array_size(mem) != 2 || p->member[s] < 0 || p->member[s] >= po->members)
            return fail(err, err_len, "pairs.pairs[].members: two member indices");
        snprintf(p->host[s], sizeof p->host[s], "%s", po->ids[p->member[s]].host);
        p->rank[s] = po->ids[p->member[s]].rank;
    }
    if (json_array_size(ms) == 0)
        return fail(err, err_len, "pairs.pairs[].measurements: a non-empty array");
    for (size_t k = 0; k < json_array_size(ms); k++) {
        json_t *w = json_array_get(ws, k);
        ga_pairs_add_measurement(p, json_number_value(json_array_get(ms, k)), w ? json_number_value(w) : -1);
    }
    return 0;
}

static int read_pairs(const json_t *in, ar_pairs_outcome *po, ar_member_id **ids, char *err, size_t err_len)
{
    static const char *const keys[] = {"members",      "rounds", "by_rank", "cpus_shared", "world_far_busbw",
                                       "screen_busbw", "screen", "pairs",   NULL};
    if (fixture_check_keys(in, keys, "pairs", err, err_len) != 0)
        return -1;
    json_t *arr = json_object_get(in, "pairs");
    po->members = (int)json_integer_value(json_object_get(in, "members"));
    po->rounds = (int)json_integer_value(json_object_get(in, "rounds"));
    po->by_rank = json_is_true(json_object_get(in, "by_rank"));
    po->cpus_shared = json_is_true(json_object_get(in, "cpus_shared"));
    po->world_far_busbw = json_number_value(json_object_get(in, "world_far_busbw"));
    po->screen_busbw = json_number_value(json_object_get(in, "screen_busbw"));
    const json_t *screen = json_object_get(in, "screen"); /* {"member": m, "worst": x, "far": bool} */
    if (screen) {
        po->screen.kind = json_is_true(json_object_get(screen, "far")) ? AR_SCREEN_FAR : AR_SCREEN_LOW;
        po->screen.member = (int)json_integer_value(json_object_get(screen, "member"));
        po->screen.worst = json_number_value(json_object_get(screen, "worst"));
    }
    po->n_pairs = (int)json_array_size(arr);
    *ids = calloc((size_t)(po->members > 0 ? po->members : 1), sizeof **ids);
    po->pairs = calloc((size_t)(po->n_pairs > 0 ? po->n_pairs : 1), sizeof *po->pairs);
    if (!*ids || !po->pairs || po->members < 2)
        return fail(err, err_len, "pairs.members: 2 or more");
    for (int m = 0; m < po->members; m++) {
        snprintf((*ids)[m].host, sizeof(*ids)[m].host, "node%02d", po->by_rank ? 0 : m);
        (*ids)[m].rank = po->by_rank ? m : 8 * m;
    }
    po->ids = *ids;
    for (int i = 0; i < po->n_pairs; i++)
        if (read_pair(json_array_get(arr, (size_t)i), po, &po->pairs[i], err, err_len) != 0)
            return -1;
    return 0;
}

/* One rank's record of a sweep: its time and wrong elements per size. */
static void read_rank(const json_t *o, int rank, int n_sizes, ar_record *r)
{
    snprintf(r->hdr.host, sizeof r->hdr.host, "node%02d", rank);
    r->hdr.world_rank = rank;
    r->hdr.node_index = rank;
    r->hdr.device_index = -1;
    r->n_sizes = n_sizes;
    r->iters = 1;
    json_t *times = json_object_get(o, "times_us"), *wrong = json_object_get(o, "wrong");
    for (int s = 0; s < n_sizes; s++)
        for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
            ar_sample *a = &r->samples[s];
            a->time_s[pl] =
                json_number_value(json_array_get(json_array_get(times, (size_t)s), (size_t)pl)) * 1e-6;
            a->wrong[pl] = json_integer_value(json_array_get(json_array_get(wrong, (size_t)s), (size_t)pl));
            a->iters[pl] = 1;
            a->cpu_wait[pl] = -1;
        }
}

/* One sweep's records, handed to the report as a runner hands them (ar_report_sweep). */
static int report_sweep(const json_t *in, ar_outcome *out, ga_findings *f, char *err, size_t err_len)
{
    static const char *const keys[] = {"pattern",   "datatype",     "sizes",      "first", "check_busbw",
                                       "min_busbw", "measurements", "best_busbw", "ranks", NULL};
    if (fixture_check_keys(in, keys, "sweeps[]", err, err_len) != 0)
        return -1;
    json_t *ranks = json_object_get(in, "ranks"), *sz = json_object_get(in, "sizes"),
           *dt = json_object_get(in, "datatype"), *pat = json_object_get(in, "pattern");
    int n = (int)json_array_size(ranks), n_sizes = (int)json_array_size(sz);
    uint64_t sizes[AR_MAX_SIZES];
    ar_sweep_desc d = {AR_ALLREDUCE, AR_FLOAT, AR_SUM, 0, sizes, n_sizes, AR_TIME_AVG};
    if (n == 0 || n_sizes == 0 || n_sizes > AR_MAX_SIZES ||
        (dt && ar_dtype_parse(json_string_value(dt), &d.type)))
        return fail(err, err_len, "sweeps[]: ranks, 1 to 64 sizes and a known datatype");
    for (int s = 0; s < n_sizes; s++)
        sizes[s] = (uint64_t)json_integer_value(json_array_get(sz, (size_t)s));
    ar_record *recs = calloc((size_t)n, sizeof *recs);
    const ar_record **ptrs = calloc((size_t)n, sizeof *ptrs);
    int *group_of = calloc((size_t)n, sizeof *group_of);
    if (!recs || !ptrs || !group_of) {
        free(recs), free(ptrs), free(group_of);
        return fail(err, err_len, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        read_rank(json_array_get(ranks, (size_t)i), i, n_sizes, &recs[i]);
        ptrs[i] = &recs[i];
    }
    json_t *m = json_object_get(in, "measurements");
    ar_sweep_outcome so = {.desc = d,
                           .recs = ptrs,
                           .group_of = group_of,
                           .n = n,
                           .n_groups = 1,
                           .pattern = pat ? json_string_value(pat) : "world",
                           .min_busbw = json_number_value(json_object_get(in, "min_busbw")),
                           .check_busbw = json_is_true(json_object_get(in, "check_busbw")),
                           .first = json_is_true(json_object_get(in, "first")),
                           .measurements = m ? (int)json_integer_value(m) : 1,
                           .best_busbw = json_number_value(json_object_get(in, "best_busbw"))};
    ar_report_sweep(out, f, &so);
    free(recs), free(ptrs), free(group_of);
    return 0;
}

/* The sweeps, those cut and nccl-tests' floor: what the runners hand over before the patterns' own. */
static int sweep_findings(const json_t *in, ar_outcome *out, ga_findings *f, char *err, size_t err_len)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(in, "sweeps"), i, c) {
        if (report_sweep(c, out, f, err, err_len) != 0)
            return -1;
    }
    json_array_foreach(json_object_get(in, "sweep_cuts"), i, c) {
        ar_report_sweep_cut(f, json_string_value(json_object_get(c, "pattern")),
                            (uint64_t)json_integer_value(json_object_get(c, "reached")),
                            (uint64_t)json_integer_value(json_object_get(c, "asked")));
    }
    json_t *mb = json_object_get(in, "min_bw");
    if (mb)
        ar_report_min_bw(f, json_number_value(json_object_get(mb, "avg")),
                         json_number_value(json_object_get(mb, "min")));
    return 0;
}

/* Each pattern given, in the order it ran, handed to the report. */
static int report_patterns(const json_t *in, const ar_opts *o, ga_findings *f, json_t *report,
                           ar_outcome *out, char *err, size_t err_len)
{
    json_t *order = json_object_get(in, "patterns");
    size_t n = order ? json_array_size(order) : 2;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *name = order ? json_string_value(json_array_get(order, i)) : i == 0 ? "node" : "pairs";
        json_t *part = name ? json_object_get(in, name) : NULL;
        if (!part) {
            rc = order ? fail(err, err_len, "patterns: each a part given (\"node\", \"pairs\")") : 0;
        } else if (strcmp(name, "node") == 0) {
            ar_nodes_outcome no = {0};
            rc = read_nodes(part, &no, err, err_len) != 0 || ar_report_nodes(o, &no, f, report, out) != 0;
            free(no.nodes);
        } else {
            ar_pairs_outcome po = {0};
            ar_member_id *ids = NULL;
            rc = read_pairs(part, &po, &ids, err, err_len) != 0 ||
                 ar_report_pairs(o, &po, f, report, out) != 0;
            free(ids);
            free(po.pairs);
        }
    }
    return rc ? -1 : 0;
}

/* What the report made of the outcomes; takes the outcome's JSON parts and metrics. */
static json_t *outcome_json(const ga_findings *f, ar_outcome *out, json_t *metrics)
{
    return json_pack("{s:o, s:o, s:I, s:i, s:o, s:o, s:o, s:o, s:f, s:f, s:i}", "findings",
                     fixture_findings_json(f, false), "combinations", out->combos, "wrong_total",
                     (json_int_t)out->wrong_total, "out_of_bounds", out->out_of_bounds, "node",
                     out->node ? out->node : json_null(), "pairs", out->pairs ? out->pairs : json_null(),
                     "metrics", metrics, "not_covered", out->not_covered ? out->not_covered : json_array(),
                     "node_busbw_min", out->node_busbw_min, "pair_median_busbw", out->pair_median_busbw,
                     "pairs_flagged", out->pairs_flagged);
}

int fixture_adapt_outcomes(const char *case_dir, const json_t *in, json_t **outcome, char *err,
                           size_t err_len)
{
    (void)case_dir;
    static const char *const keys[] = {"tolerance",  "min_node_busbw", "node",   "pairs", "patterns",
                                       "sweep_cuts", "min_bw",         "sweeps", NULL};
    if (fixture_check_keys(in, keys, "input.json", err, err_len) != 0)
        return -1;
    ar_opts o;
    memset(&o, 0, sizeof o);
    json_t *t = json_object_get(in, "tolerance");
    o.tolerance = t ? json_number_value(t) : 0.1;
    o.min_node_busbw = json_number_value(json_object_get(in, "min_node_busbw"));
    ga_findings f;
    ga_findings_init(&f);
    ar_outcome out = {.combos = json_array()};
    json_t *report = json_object();
    int rc = sweep_findings(in, &out, &f, err, err_len);
    if (rc == 0)
        rc = report_patterns(in, &o, &f, report, &out, err, err_len);
    json_t *metrics = json_object_get(report, "metrics");
    metrics = metrics ? json_incref(metrics) : json_array();
    if (rc == 0)
        *outcome = outcome_json(&f, &out, metrics);
    else {
        json_decref(metrics);
        json_decref(out.combos);
        json_decref(out.node);
        json_decref(out.pairs);
        json_decref(out.not_covered);
    }
    json_decref(report);
    ga_findings_free(&f);
    return rc;
}
