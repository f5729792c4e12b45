/* allreduce_bw --pattern pairs: rounds of pairs of members, each pair its own communicator, every pair of a
 * round at once; the pairs that would make a finding measured again; the analysis (ar_pairs.c) at rank 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ar_run.h"
#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_report.h"
#include "ar_pairs.h"

/* ---- pairs mode ---- */

typedef struct {
    int members;
    bool by_rank; /* one node: pairs of ranks */
} pair_plan;

static int member_of_rank(const ga_ctx *ctx, const pair_plan *p)
{
    return p->by_rank ? ctx->world_rank : ctx->node_index;
}

/* Rank 0: the host and first world rank of a member, from any round's records. */
static void member_identity(const ar_record *all, int n, const pair_plan *plan, int member, char *host,
                            size_t len, int *rank)
{
    snprintf(host, len, "?");
    *rank = -1;
    for (int i = 0; i < n; i++) {
        int mem = plan->by_rank ? all[i].hdr.world_rank : all[i].hdr.node_index;
        if (mem == member && (plan->by_rank || all[i].hdr.local_rank == 0)) {
            snprintf(host, len, "%s", all[i].hdr.host);
            *rank = all[i].hdr.world_rank;
        }
    }
}

/* Rank 0: the pairs of one round from its records. */
static int round_pairs(const ar_record *all, int n, int round, const pair_plan *plan, const ar_sweep_desc *d,
                       ar_pair *out)
{
    int(*sched)[2] = malloc((size_t)(plan->members / 2 + 1) * sizeof *sched);
    if (!sched)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    int np = ar_pairs_schedule(plan->members, round, sched);
    for (int p = 0; p < np; p++) {
        ar_pair *pr = &out[p];
        memset(pr, 0, sizeof *pr);
        pr->round = round;
        for (int s = 0; s < 2; s++) {
            pr->member[s] = sched[p][s];
            member_identity(all, n, plan, sched[p][s], pr->host[s], sizeof pr->host[s], &pr->rank[s]);
        }
        ar_pairs_add_measurement(pr, ar_group_busbw(all, n, p, d, &pr->iters));
    }
    free(sched);
    return np;
}

static json_t *pairs_json(const ar_pair *pairs, int n, const ar_pairs_verdict *v, int rounds,
                          double tolerance, bool by_rank, json_t *coverage)
{
    json_t *arr = json_array(), *sus = json_array();
    for (int i = 0; i < n; i++) {
        const ar_pair *p = &pairs[i];
        json_array_append_new(arr, json_pack("{s:i, s:[s,s], s:[i,i], s:f, s:b, s:i, s:i}", "round", p->round,
                                             "hosts", p->host[0], p->host[1], "ranks", p->rank[0], p->rank[1],
                                             "busbw_GBps", p->busbw, "flagged", p->flagged, "measured",
                                             p->measured, "iters", p->iters));
    }
    for (int i = 0; i < v->n_members; i++)
        if (v->members[i].suspect)
            json_array_append_new(sus, json_pack("{s:s, s:i, s:i, s:i}", "host", v->members[i].host,
                                                 "flagged_pairs", v->members[i].flagged_pairs, "pairs",
                                                 v->members[i].pairs, "rank", v->members[i].rank));
    return json_pack("{s:i, s:s, s:f, s:f, s:o, s:o, s:o}", "rounds", rounds, "unit",
                     by_rank ? "rank" : "node", "tolerance", tolerance, "median_busbw_GBps", v->median_busbw,
                     "pairs", arr, "suspects", sus, "coverage", coverage);
}

/* Collective: the ranks whose color is not MPI_UNDEFINED run the sweep with the others of their color, on a
 * communicator of their own, and rank 0 gathers every rank's record into *records (group: the color, -1 for
 * the ranks that sat out). */
static void run_groups(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                       int n_sizes, int color, const char *what, double bound, ar_record *mine,
                       ar_record **records)
{
    memset(mine, 0, sizeof *mine);
    ga_record_header_init(ctx, &mine->hdr);
    mine->group = color == MPI_UNDEFINED ? -1 : color;
    MPI_Comm pc = MPI_COMM_NULL;
    /* The gather that ended the previous round returns on a rank as soon as its record is sent, so the ranks
     * of fast pairs wait here for the slowest pair of that round: the round's bound, not one wait's. */
    ga_deadline_arm_for(bound, "splitting the world into the pairs of %s", what);
    GA_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, ctx->world_rank, &pc));
    ga_deadline_disarm();
    if (pc != MPI_COMM_NULL) {
        char label[96];
        snprintf(label, sizeof label, "pair %d %s", color, what); /* names the NCCL communicator too */
        ar_sweep_cfg cfg = ar_cfg_of(o, c, sizes, n_sizes, label);
        int pn;
        MPI_Comm_size(pc, &pn);
        ar_backend *b = ar_backend_open(kind, pc, ar_bench_max_bytes(&cfg, pn), label);
        ar_bound_iterations(b, &cfg);
        ar_bench_sweep(b, &cfg, mine, NULL, NULL);
        b->destroy(b);
        MPI_Comm_free(&pc);
    }
    ar_gather_records(ctx, mine, records, bound, what);
}

/* One round: this rank's pair (if it has one), then the round's records at rank 0, which appends the round's
 * pairs to pairs and returns how many. */
static int run_pair_round(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c,
                          const uint64_t *sizes, int n_sizes, const pair_plan *plan, int r, int rounds,
                          double round_bound, int (*sched)[2], ar_record *mine, ar_record **round_records,
                          ar_pair *pairs)
{
    int np = ar_pairs_schedule(plan->members, r, sched), color = MPI_UNDEFINED,
        me = member_of_rank(ctx, plan);
    for (int p = 0; p < np; p++)
        if (sched[p][0] == me || sched[p][1] == me)
            color = p;
    char what[64];
    snprintf(what, sizeof what, "round %d", r);
    run_groups(ctx, o, kind, c, sizes, n_sizes, color, what, round_bound, mine, round_records);
    if (ctx->world_rank != 0)
        return 0;
    ar_sweep_desc d = ar_desc_of(o, c, sizes, n_sizes);
    int got = round_pairs(*round_records, ctx->world_size, r, plan, &d, pairs);
    double lo = 0;
    int lo_i = 0;
    for (int p = 0; p < got; p++)
        if (p == 0 || pairs[p].busbw < lo)
            lo = pairs[p].busbw, lo_i = p;
    ga_log("COMM", "round %d/%d: %d pairs, busbw at %llu B: lowest %.2f GB/s (%s rank %d <-> %s rank %d)",
           r + 1, rounds, got, (unsigned long long)sizes[n_sizes - 1], lo, pairs[lo_i].host[0],
           pairs[lo_i].rank[0], pairs[lo_i].host[1], pairs[lo_i].rank[1]);
    return got;
}

/* Collective: the pairs that would make a finding measured again at the largest size, batch after batch of
 * pairs with no member in common, each pair keeping the best of its figures; then the analysis again, until
 * every pair that would make a finding was measured 1 + --remeasure times (a pass that changes the median can
 * make a new candidate, which is measured again in its turn). A pair slowed by a moment of contention
 * recovers; a slow node or link stays slow. */
static void remeasure_pairs(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c,
                            const uint64_t *sizes, int n_sizes, const pair_plan *plan, double bound,
                            ar_pair *pairs, int n_pairs, ar_record *mine)
{
    bool root = ctx->world_rank == 0;
    const uint64_t *last = sizes + n_sizes - 1;
    ar_sweep_desc d1 = ar_desc_of(o, c, last, 1);
    int *batch_of = root ? malloc((size_t)(n_pairs > 0 ? n_pairs : 1) * sizeof *batch_of) : NULL;
    if (root && !batch_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int pass = 0; o->remeasure > 0; pass++) {
        int head[2] = {0, 0}; /* pairs to measure again, batches */
        if (root) {
            ar_pairs_verdict v;
            if (ar_pairs_analyse(pairs, n_pairs, o->tolerance, &v) != 0)
                GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
            head[1] = ar_pairs_remeasure_batches(pairs, n_pairs, &v, 1 + o->remeasure, batch_of);
            ar_pairs_verdict_free(&v);
            for (int i = 0; i < n_pairs; i++)
                head[0] += batch_of[i] >= 0;
        }
        ga_deadline_arm_for(bound, "sharing the pairs to measure again"); /* after a round: its bound */
        GA_MPI_CHECK(MPI_Bcast(head, 2, MPI_INT, 0, MPI_COMM_WORLD));
        ga_deadline_disarm();
        if (head[0] == 0)
            break;
        /* list[k]: members a, b, batch, and (rank 0) the pair's index */
        int(*list)[4] = malloc((size_t)head[0] * sizeof *list);
        if (!list)
            GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
        if (root)
            for (int i = 0, k = 0; i < n_pairs; i++)
                if (batch_of[i] >= 0) {
                    list[k][0] = pairs[i].member[0], list[k][1] = pairs[i].member[1];
                    list[k][2] = batch_of[i], list[k][3] = i;
                    k++;
                }
        ga_deadline_arm("sharing the pairs to measure again");
        GA_MPI_CHECK(MPI_Bcast(list, 4 * head[0], MPI_INT, 0, MPI_COMM_WORLD));
        ga_deadline_disarm();
        if (root)
            ga_log("COMM",
                   "pairs: %d pair%s would make a finding: measuring them again (pass %d; each pair at most "
                   "%d times)",
                   head[0], head[0] == 1 ? "" : "s", pass + 1, o->remeasure);
        int me = member_of_rank(ctx, plan);
        for (int b = 0; b < head[1]; b++) {
            int color = MPI_UNDEFINED;
            for (int k = 0; k < head[0]; k++)
                if (list[k][2] == b && (list[k][0] == me || list[k][1] == me))
                    color = k;
            char what[64];
            snprintf(what, sizeof what, "remeasure %d batch %d", pass + 1, b + 1);
            ar_record *all = NULL;
            run_groups(ctx, o, kind, c, last, 1, color, what, bound, mine, &all);
            if (root) {
                for (int k = 0; k < head[0]; k++)
                    if (list[k][2] == b)
                        ar_pairs_add_measurement(&pairs[list[k][3]],
                                                 ar_group_busbw(all, ctx->world_size, k, &d1, NULL));
                free(all);
            }
        }
        free(list);
    }
    free(batch_of);
}

/* Rank 0: how many pairs of how many were tested, and which were not (the report and one stdout line). */
static json_t *coverage_json(const ar_record *all, int n, const pair_plan *plan, const ar_pair *pairs,
                             int n_pairs)
{
    int total = plan->members * (plan->members - 1) / 2;
    int untested = ar_pairs_untested(plan->members, pairs, n_pairs, NULL, 0);
    int(*list)[2] = malloc((size_t)(untested > 0 ? untested : 1) * sizeof *list);
    if (!list)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ar_pairs_untested(plan->members, pairs, n_pairs, list, untested);
    json_t *arr = json_array();
    char line[1024];
    size_t len = (size_t)snprintf(line, sizeof line, "pairs: %d of %d pairs tested", total - untested, total);
    for (int i = 0; i < untested; i++) {
        char h[2][GA_HOST_MAX];
        int rk[2];
        for (int s = 0; s < 2; s++)
            member_identity(all, n, plan, list[i][s], h[s], sizeof h[s], &rk[s]);
        json_array_append_new(arr, json_pack("{s:[i,i], s:[s,s], s:[i,i]}", "members", list[i][0], list[i][1],
                                             "hosts", h[0], h[1], "ranks", rk[0], rk[1]));
        if (len < sizeof line - 64) {
            len += (size_t)snprintf(line + len, sizeof line - len, "%s%s %d-%d", i == 0 ? "; untested:" : ",",
                                    plan->by_rank ? " rank" : " node", list[i][0], list[i][1]);
            if (len >= sizeof line)
                len = sizeof line - 1;
        } else if (len < sizeof line - 5) {
            len += (size_t)snprintf(line + len, sizeof line - len, " ...");
            len = sizeof line; /* nothing more fits */
        }
    }
    free(list);
    ga_log("COMM", "%s%s", line, untested ? " (--rounds all tests every pair)" : "");
    return json_pack("{s:i, s:i, s:o}", "tested", total - untested, "of", total, "untested", arr);
}

/* Rank 0, after the rounds: the results (every pair of every round, each its own communicator), the pairs
 * verdict, its findings, metrics and report part. Takes rounds_all[1..] (the first round's records stay as
 * the ones the report shows under "nodes" when pairs is the first pattern). */
static void analyse_pairs(const ga_ctx *ctx, const ar_opts *o, const ar_sweep_desc *d, const pair_plan *plan,
                          ar_record **rounds_all, int rounds, ar_pair *pairs, int n_pairs, run_state *st,
                          json_t *report)
{
    rec_set set = {malloc((size_t)(rounds * ctx->world_size) * sizeof *set.recs),
                   malloc((size_t)(rounds * ctx->world_size) * sizeof *set.group_of), 0, 0};
    if (!set.recs || !set.group_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    int base = 0;
    for (int r = 0; r < rounds; r++) {
        int most = -1;
        for (int i = 0; i < ctx->world_size; i++)
            if (rounds_all[r][i].group >= 0) {
                set.recs[set.n] = &rounds_all[r][i];
                set.group_of[set.n++] = base + rounds_all[r][i].group;
                most = rounds_all[r][i].group > most ? rounds_all[r][i].group : most;
            }
        base += most + 1;
    }
    set.n_groups = base;
    /* --min-busbw is the world's figure; without a world sweep it holds the pairs' (as pairs mode always did)
     */
    bool world_too = false;
    for (int i = 0; i < o->n_patterns; i++)
        world_too = world_too || o->patterns[i] == AR_PATTERN_WORLD;
    ar_account_sweep(st, d, &set, o->min_busbw, !world_too, false, "pairs");
    ar_rec_set_free(&set);

    ar_pairs_verdict v;
    if (ar_pairs_analyse(pairs, n_pairs, o->tolerance, &v) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ar_pairs_findings(pairs, n_pairs, &v, o->tolerance, plan->by_rank, &st->findings);
    json_t *coverage = coverage_json(rounds_all[0], ctx->world_size, plan, pairs, n_pairs);
    st->pairs = pairs_json(pairs, n_pairs, &v, rounds, o->tolerance, plan->by_rank, coverage);
    int remeasured = 0;
    for (int i = 0; i < n_pairs; i++)
        remeasured += pairs[i].measured > 1;
    ga_log("COMM", "pairs: median %.2f GB/s, %d of %d pairs flagged (%d measured again), %d suspect%s",
           v.median_busbw, v.flagged, n_pairs, remeasured, v.n_suspects, v.n_suspects == 1 ? "" : "s");
    for (int i = 0; i < v.n_members; i++) {
        const ar_member_stat *m = &v.members[i];
        ga_where w = {m->host, plan->by_rank ? -1 : m->member, plan->by_rank ? m->member : m->rank, -1};
        ga_report_add_metric(report, "pair_busbw_min", m->min_busbw, "GB/s", true, w);
    }
    ga_report_add_metric(report, "pair_busbw_median", v.median_busbw, "GB/s", true, GA_WHERE_CLUSTER);
    st->pair_median_busbw = v.median_busbw;
    st->pairs_flagged = v.flagged;
    st->pairs_tested = n_pairs;
    ar_pairs_verdict_free(&v);
    if (!st->node_records)
        st->node_records = rounds_all[0];
    else
        free(rounds_all[0]);
    for (int r = 1; r < rounds; r++)
        free(rounds_all[r]);
}

void ar_run_pairs(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                  int n_sizes, run_state *st, json_t *report)
{
    pair_plan plan = {ctx->node_count >= 2 ? ctx->node_count : ctx->world_size, ctx->node_count < 2};
    int max_rounds = ar_pairs_max_rounds(plan.members);
    int rounds = o->rounds == AR_ROUNDS_ALL ? max_rounds : o->rounds > 0 ? o->rounds : 3;
    if (rounds > max_rounds)
        rounds = max_rounds;
    ga_log("COMM", "pairs: %d %s, %d rounds of %d pairs, tolerance %.0f%% below the median", plan.members,
           plan.by_rank ? "ranks of one node" : "nodes", rounds, plan.members / 2, o->tolerance * 100);

    ar_sweep_desc d = ar_desc_of(o, c, sizes, n_sizes);
    int(*sched)[2] = malloc((size_t)(plan.members / 2 + 1) * sizeof *sched);
    ar_record *mine = calloc(1, sizeof *mine);
    ar_pair *pairs = calloc((size_t)(rounds * (plan.members / 2) + 1), sizeof *pairs);
    ar_record **rounds_all = calloc((size_t)rounds, sizeof *rounds_all);
    if (!sched || !mine || !pairs || !rounds_all)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    /* A rank sitting out waits for the whole round: bound it by the waits the round can make (the pairs'
     * iterations are bounded so that each wait stays within -T, see bound_iterations). */
    double round_bound =
        ga_deadline_wait_timeout() * (4.0 + (double)n_sizes * AR_PLACEMENTS * (3.0 + o->check));
    int n_pairs = 0;
    for (int r = 0; r < rounds; r++)
        n_pairs += run_pair_round(ctx, o, kind, c, sizes, n_sizes, &plan, r, rounds, round_bound, sched, mine,
                                  &rounds_all[r], &pairs[n_pairs]);
    remeasure_pairs(ctx, o, kind, c, sizes, n_sizes, &plan, round_bound, pairs, n_pairs, mine);
    /* every rank leaves together, so that the next pattern's first wait is not the slowest pair's last round
     */
    ga_deadline_arm_for(round_bound, "the last round of pairs");
    GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (ctx->world_rank == 0)
        analyse_pairs(ctx, o, &d, &plan, rounds_all, rounds, pairs, n_pairs, st, report);
    free(rounds_all);
    free(pairs);
    free(mine);
    free(sched);
}
