/* allreduce_bw's report (ar_report.h): each pattern's outcome turned into its findings, report part and
 * metrics. Pure: the runners hand their outcomes here at rank 0. */
#include "ar_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_budget.h"
#include "ga_log.h"
#include "ga_report.h"
#include "ga_text.h"

void ar_outcome_vnote(ar_outcome *out, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    if (!out->not_covered)
        out->not_covered = json_array();
    json_array_append_new(out->not_covered, ga_json_text(line)); /* may quote a NIC or env value */
    ga_log("COMM", "not covered: %s", line);
}

void ar_outcome_note(ar_outcome *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ar_outcome_vnote(out, fmt, ap);
    va_end(ap);
}

/* ---- sweeps ---- */

static json_t *combination_json(const ar_sweep_outcome *s, ar_figures *fig)
{
    const ar_sweep_desc *d = &s->desc;
    json_t *results = ar_results_json(d, s->recs, s->group_of, s->n, s->n_groups, fig);
    return json_pack("{s:s, s:s, s:o, s:f, s:f, s:I, s:I, s:i}", "datatype", ar_dtype_get(d->type)->name,
                     "op", ar_coll_get(d->coll)->reduces ? ar_op_name(d->op) : "none", "results", results,
                     "avg_busbw_GBps", fig->avg_busbw, "busbw_at_max_GBps", fig->busbw_at_max, "max_bytes",
                     (json_int_t)fig->max_bytes, "wrong_total", (json_int_t)fig->wrong_total, "out_of_bounds",
                     fig->out_of_bounds);
}

void ar_report_sweep(ar_outcome *out, ga_findings *f, const ar_sweep_outcome *s)
{
    ar_figures fig;
    json_t *entry = combination_json(s, &fig);
    json_object_set_new(entry, "pattern", ga_json_text(s->pattern));
    json_array_append_new(out->combos, entry);
    out->wrong_total += fig.wrong_total;
    out->out_of_bounds += fig.out_of_bounds;
    if (s->first)
        out->first_fig = fig;
    /* The floor holds the best measurement of the largest size; the figures reported stay the sweep's, as
     * its table and results show them. */
    ar_figures held = fig;
    if (s->first && s->measurements > 1) {
        if (s->best_busbw > held.busbw_at_max)
            held.busbw_at_max = s->best_busbw;
        json_object_set_new(entry, "busbw_at_max_measurements", json_integer(s->measurements));
        json_object_set_new(entry, "busbw_at_max_best_GBps", json_real(held.busbw_at_max));
    }
    ar_sweep_findings(&s->desc, s->recs, s->n, &held, s->min_busbw, s->check_busbw, f);
}

void ar_report_sweep_cut(ga_findings *f, const char *pattern, uint64_t reached, uint64_t asked)
{
    /* one warning for the run: the not-covered lines say which combination and pattern stopped where */
    if (ga_findings_has_code(f, "COMM_SWEEP_CUT"))
        return;
    ga_findings_add(f, GA_SEV_WARN, "COMM_SWEEP_CUT", GA_WHERE_CLUSTER,
                    "the %s sweep stopped at %llu B of the %llu B asked for: out of time (--timeout); the "
                    "bandwidth of the larger sizes was not measured",
                    pattern, (unsigned long long)reached, (unsigned long long)asked);
}

void ar_report_min_bw(ga_findings *f, double avg_busbw, double min_bw)
{
    if (min_bw >= 0 && avg_busbw < min_bw * 0.9)
        ga_findings_add(f, GA_SEV_FAIL, "COMM_BUSBW_LOW", GA_WHERE_CLUSTER,
                        "average bus bandwidth %.2f GB/s is below 90%% of NCCL_TESTS_MIN_BW %.2f GB/s",
                        avg_busbw, min_bw);
}

/* ---- the node pattern ---- */

void ar_nodes_findings(const ar_node_fig *nodes, int n, const ar_nodes_verdict *v, double min_busbw,
                       double tolerance, ga_findings *f)
{
    for (int i = 0; i < n; i++) {
        const ar_node_fig *nd = &nodes[i];
        if (!nd->below_min && !nd->below_median)
            continue;
        ga_where w = {nd->host, nd->node, -1, -1, NULL};
        char floor[96] = "", outlier[160] = "";
        if (nd->below_min)
            snprintf(floor, sizeof floor, "below --min-node-busbw %.2f GB/s", min_busbw);
        if (nd->below_median)
            snprintf(outlier, sizeof outlier,
                     "below %.2f GB/s, the other nodes' bound (more than %.0f%% and beyond their noise below "
                     "the median node %.2f GB/s)",
                     nd->bound, tolerance * 100, v->median_busbw);
        ga_findings_add(f, GA_SEV_FAIL, "COMM_NODE_BUSBW_LOW", w,
                        "%s node %d: intra-node busbw %.2f GB/s (best of %d) is %s%s%s", nd->host, nd->node,
                        nd->busbw, nd->measured, floor, floor[0] && outlier[0] ? " and " : "", outlier);
    }
    if (v->differ[0] >= 0) {
        const ar_node_fig *a = &nodes[v->differ[0]], *b = &nodes[v->differ[1]];
        const ar_node_fig *lo = a->busbw <= b->busbw ? a : b, *hi = lo == a ? b : a;
        ga_findings_add(
            f, GA_SEV_WARN, "COMM_NODE_PEERS_DIFFER", GA_WHERE_CLUSTER,
            "the two nodes differ: %s node %d %.2f GB/s (best of %d) is %.1f%% below %s node %d %.2f "
            "GB/s (best of %d), beyond the tolerance %.0f%%; two nodes cannot say which is slow "
            "(--pattern pairs with a third node, or --min-node-busbw, can)",
            lo->host, lo->node, lo->busbw, lo->measured, 100.0 * (1.0 - lo->busbw / hi->busbw), hi->host,
            hi->node, hi->busbw, hi->measured, tolerance * 100);
    }
}

static json_t *nodes_json(const ar_node_fig *nodes, int n, const ar_nodes_verdict *v, const ar_opts *o)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        const ar_node_fig *nd = &nodes[i];
        json_array_append_new(arr, json_pack("{s:i, s:o, s:i, s:i, s:f, s:i, s:b, s:b}", "node", nd->node,
                                             "host", ga_json_text(nd->host), "rank", nd->rank, "ranks",
                                             nd->ranks, "busbw_GBps", nd->busbw, "measured", nd->measured,
                                             "below_min", nd->below_min, "below_median", nd->below_median));
    }
    return json_pack("{s:o, s:f, s:f, s:f, s:i}", "nodes", arr, "median_busbw_GBps", v->median_busbw,
                     "min_node_busbw_GBps", o->min_node_busbw, "tolerance", o->tolerance, "flagged",
                     v->flagged);
}

int ar_report_nodes(const ar_opts *o, ar_nodes_outcome *no, ga_findings *f, json_t *report, ar_outcome *out)
{
    ar_node_fig *nodes = no->nodes;
    ar_nodes_verdict v;
    if (ar_nodes_analyse(nodes, no->n, o->min_node_busbw, o->tolerance, &v) != 0)
        return -1;
    ar_nodes_findings(nodes, no->n, &v, o->min_node_busbw, o->tolerance, f);
    out->node = nodes_json(nodes, no->n, &v, o);
    double lowest = 0;
    for (int k = 0; k < no->n; k++) {
        ga_where w = {nodes[k].host, k, nodes[k].rank, -1, NULL};
        ga_report_add_metric(report, "node_busbw", nodes[k].busbw, "GB/s", true, w);
        if (k == 0 || nodes[k].busbw < lowest)
            lowest = nodes[k].busbw;
    }
    out->node_busbw_min = lowest;
    ga_log("COMM",
           "node: %d node%s, intra-node busbw at %llu B: median %.2f GB/s, lowest %.2f GB/s, %d flagged",
           no->n, no->n == 1 ? "" : "s", (unsigned long long)no->size, v.median_busbw, lowest, v.flagged);
    return 0;
}

/* ---- the pairs ---- */

void ar_pairs_findings(const ga_pair *pairs, int n, const ga_pairs_verdict *v, double tolerance, bool by_rank,
                       ga_findings *f)
{
    const char *unit = by_rank ? " rank " : " node ";
    for (int i = 0; i < v->n_members; i++) {
        const ga_pair_member *m = &v->members[i];
        if (!m->suspect)
            continue;
        ga_where w = {m->host, by_rank ? -1 : m->member, by_rank ? m->member : -1, -1, NULL};
        ga_findings_add(f, GA_SEV_FAIL, "COMM_SLOW_NODE", w,
                        "%s%s%d is in %d slow pairs of %d (its %s %.2f GB/s, lowest %.2f GB/s; median "
                        "member %.2f GB/s, its bound %.2f GB/s; median of all pairs %.2f GB/s, "
                        "tolerance %.0f%%)",
                        m->host, unit, m->member, m->flagged_pairs, m->pairs,
                        v->cpus_shared ? "best" : "median", m->figure, m->min_figure, v->member_median,
                        m->bound, v->median, tolerance * 100);
    }
    for (int i = 0; i < n; i++) {
        const ga_pair *p = &pairs[i];
        if (!p->slow_link)
            continue;
        ga_where w = {p->host[0], by_rank ? -1 : p->member[0], by_rank ? p->member[0] : -1, -1, NULL};
        ga_findings_add(
            f, GA_SEV_FAIL, "COMM_SLOW_LINK", w,
            "pair %s%s%d <-> %s%s%d (round %d): %.2f GB/s (best of %d), below %.0f%% of the median "
            "%.2f GB/s and the other pairs' bound %.2f GB/s; neither end is slow with other "
            "partners: suspect the link or path between them",
            p->host[0], unit, p->member[0], p->host[1], unit, p->member[1], p->round, p->figure,
            p->measured > 0 ? p->measured : 1, (1.0 - tolerance) * 100, v->median, p->bound);
        ga_findings_set_peer(f,
                             p->host[1]); /* the other end, for the summary's link (suite/summary/links.c) */
    }
}

/* Appends " node a-b" (or "rank") to the coverage line while it has room, then " ..." once. */
static size_t coverage_line_add(char *line, size_t size, size_t len, bool first, const ar_pairs_outcome *p,
                                const int pair[2])
{
    if (len < size - 64) {
        len += (size_t)snprintf(line + len, size - len, "%s%s %d-%d", first ? "; untested:" : ",",
                                p->by_rank ? " rank" : " node", pair[0], pair[1]);
        return len >= size ? size - 1 : len;
    }
    if (len < size - 5) {
        snprintf(line + len, size - len, " ...");
        return size; /* nothing more fits */
    }
    return len;
}

/* How many pairs of how many were tested, and which were not (the report's part, and one log line). NULL
 * when memory runs out. */
static json_t *coverage_json(const ar_pairs_outcome *p)
{
    int total = p->members * (p->members - 1) / 2;
    int untested = ga_pairs_untested(p->members, p->pairs, p->n_pairs, NULL, 0);
    int(*list)[2] = malloc((size_t)(untested > 0 ? untested : 1) * sizeof *list);
    if (!list)
        return NULL;
    ga_pairs_untested(p->members, p->pairs, p->n_pairs, list, untested);
    json_t *arr = json_array();
    char line[1024];
    size_t len = (size_t)snprintf(line, sizeof line, "pairs: %d of %d pairs tested", total - untested, total);
    for (int i = 0; i < untested; i++) {
        const ar_member_id *a = &p->ids[list[i][0]], *b = &p->ids[list[i][1]];
        json_array_append_new(arr, json_pack("{s:[i,i], s:[o,o], s:[i,i]}", "members", list[i][0], list[i][1],
                                             "hosts", ga_json_text(a->host), ga_json_text(b->host), "ranks",
                                             a->rank, b->rank));
        len = coverage_line_add(line, sizeof line, len, i == 0, p, list[i]);
    }
    free(list);
    ga_log("COMM", "%s%s", line, untested ? " (--rounds all tests every pair)" : "");
    return json_pack("{s:i, s:i, s:o}", "tested", total - untested, "of", total, "untested", arr);
}

/* The coverage as the world's ring sees it (ga_pairs.h): one log line and the coverage's "ring_neighbours"
 * and "other_pairs"; when the world was far below the screen's pairs and no member is a suspect, which of
 * those pairs its slow link can be (said in the log, the report's "world_slow_link", and not_covered for
 * ring neighbours not tested). -1 when memory runs out. */
static int ring_coverage(const ar_pairs_outcome *p, const ga_pairs_verdict *v, json_t *coverage,
                         ar_outcome *out)
{
    ga_pairs_cover c;
    int(*miss)[2] = malloc((size_t)(p->members > 0 ? p->members : 1) * sizeof *miss);
    int n_miss = miss ? ga_pairs_coverage(p->members, p->pairs, p->n_pairs, &c, miss, p->members) : -1;
    if (n_miss < 0) {
        free(miss);
        return -1;
    }
    ga_log("COMM", "pairs: ring neighbours: %d of %d tested; other pairs: %lld of %lld", c.ring_tested,
           c.ring_total, c.other_tested, c.other_total);
    json_object_set_new(coverage, "ring_neighbours",
                        json_pack("{s:i, s:i}", "tested", c.ring_tested, "of", c.ring_total));
    json_object_set_new(
        coverage, "other_pairs",
        json_pack("{s:I, s:I}", "tested", (json_int_t)c.other_tested, "of", (json_int_t)c.other_total));
    if (p->world_far_busbw > 0 && v->n_suspects == 0) {
        const char *unit = p->by_rank ? "rank" : "node";
        char line[1024], *end = line + sizeof line, *at = line;
        at +=
            snprintf(at, (size_t)(end - at),
                     "world: %.3f GB/s, far below the screen's median pair (%.3f GB/s), and no %s named: its "
                     "slow link is among the ring-neighbour pairs (%s i with i + 1), %d of %d tested",
                     p->world_far_busbw, p->screen_busbw, unit, unit, c.ring_tested, c.ring_total);
        for (int i = 0; i < p->n_pairs && at < end - 48; i++)
            if (p->pairs[i].slow_link &&
                ga_pairs_ring_neighbours(p->members, p->pairs[i].member[0], p->pairs[i].member[1]))
                at += snprintf(at, (size_t)(end - at), "; slow: %s %d-%d", unit, p->pairs[i].member[0],
                               p->pairs[i].member[1]);
        for (int i = 0; i < n_miss && at < end - 48; i++)
            at += snprintf(at, (size_t)(end - at), "%s %s %d-%d", i ? "," : "; not tested:", unit, miss[i][0],
                           miss[i][1]);
        ga_log("COMM", "%s", line);
        json_object_set_new(coverage, "world_slow_link", ga_json_text(line));
        if (n_miss > 0)
            ar_outcome_note(
                out, "pairs: %d of %d ring-neighbour pairs, where the world's slow link is, not tested",
                n_miss, c.ring_total);
    }
    free(miss);
    return 0;
}

static json_t *pairs_json(const ar_pairs_outcome *p, const ga_pairs_verdict *v, double tolerance,
                          json_t *coverage)
{
    json_t *arr = json_array(), *sus = json_array();
    for (int i = 0; i < p->n_pairs; i++) {
        const ga_pair *pr = &p->pairs[i];
        json_t *each = json_array();
        for (int k = 0; k < pr->measured && k < GA_PAIR_MEASUREMENTS; k++)
            json_array_append_new(each, json_pack("{s:f, s:o}", "busbw_GBps", pr->figures[k], "cpu_wait",
                                                  pr->waits[k] >= 0 ? json_real(pr->waits[k]) : json_null()));
        json_array_append_new(arr, json_pack("{s:i, s:[o,o], s:[i,i], s:f, s:o, s:b, s:b, s:i, s:o, s:i}",
                                             "round", pr->round, "hosts", ga_json_text(pr->host[0]),
                                             ga_json_text(pr->host[1]), "ranks", pr->rank[0], pr->rank[1],
                                             "busbw_GBps", pr->figure, "cpu_wait",
                                             pr->cpu_wait >= 0 ? json_real(pr->cpu_wait) : json_null(),
                                             "flagged", pr->flagged, "contended", pr->contended, "measured",
                                             pr->measured, "measurements", each, "iters", pr->iters));
    }
    for (int i = 0; i < v->n_members; i++)
        if (v->members[i].suspect)
            json_array_append_new(sus,
                                  json_pack("{s:o, s:i, s:i, s:i}", "host", ga_json_text(v->members[i].host),
                                            "flagged_pairs", v->members[i].flagged_pairs, "pairs",
                                            v->members[i].pairs, "rank", v->members[i].rank));
    return json_pack("{s:i, s:s, s:f, s:b, s:f, s:o, s:o, s:o}", "rounds", p->rounds, "unit",
                     p->by_rank ? "rank" : "node", "tolerance", tolerance, "cpus_shared", v->cpus_shared,
                     "median_busbw_GBps", v->median, "pairs", arr, "suspects", sus, "coverage", coverage);
}

/* The pair_busbw metrics: each member's lowest pair, and the median pair. */
static void pairs_metrics(json_t *report, const ar_pairs_outcome *p, const ga_pairs_verdict *v)
{
    for (int i = 0; i < v->n_members; i++) {
        const ga_pair_member *m = &v->members[i];
        ga_where w = {m->host, p->by_rank ? -1 : m->member, p->by_rank ? m->member : m->rank, -1, NULL};
        ga_report_add_metric(report, "pair_busbw_min", m->min_figure, "GB/s", true, w);
    }
    ga_report_add_metric(report, "pair_busbw_median", v->median, "GB/s", true, GA_WHERE_CLUSTER);
}

/* The member the screen found far or low, when the pairs' own measurements (and their remeasurements) name
 * neither it nor a link of it: the two disagree, so it is not named, but not passed in silence either. */
static void screen_unconfirmed(const ar_pairs_outcome *p, const ga_pairs_verdict *v, double tolerance,
                               ga_findings *f, ar_outcome *out)
{
    int m = p->screen.member;
    if (p->screen.kind == AR_SCREEN_NONE || m < 0 || m >= p->members)
        return;
    for (int i = 0; i < v->n_members; i++)
        if (v->members[i].member == m && v->members[i].suspect)
            return;
    for (int i = 0; i < p->n_pairs; i++)
        if (p->pairs[i].slow_link && (p->pairs[i].member[0] == m || p->pairs[i].member[1] == m))
            return;
    const char *unit = p->by_rank ? " rank " : " node ", *host = p->ids ? p->ids[m].host : "?";
    ga_where w = {host, p->by_rank ? -1 : m, p->by_rank ? m : -1, -1, NULL};
    ga_findings_add(
        f, GA_SEV_WARN, "COMM_SLOW_UNCONFIRMED", w,
        "%s%s%d was more than %.0fx below the other pairs of its rounds in the screen (its lowest "
        "pair %.2fx of them), but its pairs, measured again, are within the tolerance (%.0f%%): not "
        "named; measure it again (allreduce_bw --pattern pairs --rounds all)",
        host, unit, m, p->screen.kind == AR_SCREEN_FAR ? AR_FAR_FACTOR : AR_LOW_FACTOR, p->screen.worst,
        tolerance * 100);
    ar_outcome_note(out, "pairs: %s not judged: %sbelow its peers in the screen, not in the pairs", host,
                    p->screen.kind == AR_SCREEN_FAR ? "far " : "");
}

int ar_report_pairs(const ar_opts *o, ar_pairs_outcome *p, ga_findings *f, json_t *report, ar_outcome *out)
{
    ga_pairs_verdict v;
    if (ga_pairs_analyse(p->pairs, p->n_pairs, o->tolerance, p->cpus_shared, &v) != 0)
        return -1;
    ar_pairs_findings(p->pairs, p->n_pairs, &v, o->tolerance, p->by_rank, f);
    screen_unconfirmed(p, &v, o->tolerance, f, out);
    json_t *coverage = coverage_json(p);
    if (coverage && ring_coverage(p, &v, coverage, out) != 0)
        json_decref(coverage), coverage = NULL;
    if (!coverage) {
        ga_pairs_verdict_free(&v);
        return -1;
    }
    out->pairs = pairs_json(p, &v, o->tolerance, coverage);
    int remeasured = 0;
    for (int i = 0; i < p->n_pairs; i++)
        remeasured += p->pairs[i].measured > 1;
    ga_log("COMM", "pairs: median %.2f GB/s, %d of %d pairs flagged (%d measured again), %d suspect%s",
           v.median, v.flagged, p->n_pairs, remeasured, v.n_suspects, v.n_suspects == 1 ? "" : "s");
    if (v.contended)
        ar_outcome_note(out,
                        "pairs: %d pair%s below the tolerance not judged: held up by the host (both ranks "
                        "waited for a CPU for %.0f%% or more of the measurement)",
                        v.contended, v.contended == 1 ? "" : "s", 100 * GA_PAIRS_CPU_WAIT_CONTENDED);
    pairs_metrics(report, p, &v);
    out->pair_median_busbw = v.median;
    out->pairs_flagged = v.flagged;
    ga_pairs_verdict_free(&v);
    return 0;
}
