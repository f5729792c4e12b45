/* allreduce_bw --pattern pairs: rounds of pairs of members, each pair its own communicator, every pair of a
 * round at once; the pairs that would make a finding measured again; rank 0 hands what they measured to the
 * report (ar_report.c: the analysis, ga_pairs.c, and its findings). */
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
#include "ar_budget.h"
#include "ar_screen.h"
#include "ar_gate.h"
#include "ga_stats.h"
#include "ga_time.h"

/* ---- pairs mode ---- */

typedef struct {
    int members;
    bool by_rank; /* one node: pairs of ranks */
    int at;       /* the ring neighbours' rounds come before circle round `at` (-1: none; ga_pairs.h) */
} pair_plan;

/* The pairs phase as it runs: the sizes shrink to the size where a round was cut (so that every pair is
 * compared at one size), rounds stop when the phase's time is spent. */
typedef struct {
    const ga_ctx *ctx;
    const ar_opts *o;
    ga_backend kind;
    combo c;
    pair_plan plan;
    const uint64_t *sizes;
    int n_sizes;        /* the rounds' sizes now: the phase's, or up to the size a round was cut at */
    double deadline;    /* ga_now() by which the phase ends (0: none) */
    double round_bound; /* a wait that can last a round (a rank sitting out, the gather after a round) */
    double size_bound;  /* a wait that can last one size of the slowest pair (ar_gate.h) */
    ar_group_gate gate;
    bool screen;      /* the screen before the world sweep (ar_pairs_screen) */
    bool isolation;   /* the fabric is slow: each size's first operation is its figure */
    bool cpus_shared; /* some node has more ranks than CPUs (ga_pairs_analyse) */
} pairs_run;

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
                       ga_pair *out)
{
    int(*sched)[2] = malloc((size_t)(plan->members / 2 + 1) * sizeof *sched);
    if (!sched)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    int np = ga_pairs_plan_round(plan->members, plan->at, round, sched);
    for (int p = 0; p < np; p++) {
        ga_pair *pr = &out[p];
        memset(pr, 0, sizeof *pr);
        pr->round = round;
        for (int s = 0; s < 2; s++) {
            pr->member[s] = sched[p][s];
            member_identity(all, n, plan, sched[p][s], pr->host[s], sizeof pr->host[s], &pr->rank[s]);
        }
        ga_pairs_add_measurement(pr, ar_group_busbw(all, n, p, d, &pr->iters),
                                 ar_group_cpu_wait(all, n, p, d));
    }
    free(sched);
    return np;
}

/* Collective: the ranks whose color is not MPI_UNDEFINED run the sweep with the others of their color, on a
 * communicator of their own, and rank 0 gathers every rank's record into *records (group: the color, -1 for
 * the ranks that sat out). With a gate, every rank (the ones sitting out too) answers it after each size. */
static void run_groups(const pairs_run *pr, const uint64_t *sizes, int n_sizes, int color, const char *what,
                       ar_gate *gate, ar_record *mine, ar_record **records)
{
    const ga_ctx *ctx = pr->ctx;
    /* The gather that ended the previous round returns on a rank as soon as its record is sent, so the ranks
     * of fast pairs wait in the split for the slowest pair of that round: the round's bound, not one wait's.
     */
    MPI_Comm pc = ar_split_groups(ctx, color, mine, pr->round_bound, "pairs", what);
    char label[96];
    snprintf(label, sizeof label, "pair %d %s", color, what); /* names the NCCL communicator too */
    ar_sweep_cfg cfg = ar_cfg_of(pr->o, pr->c, sizes, n_sizes, label);
    cfg.deadline = pr->deadline;
    cfg.gate = gate;
    cfg.first_is_figure = cfg.out_of_place_only = pr->screen; /* one operation per size, one placement */
    /* isolation of a slow fabric: one operation per size in the rounds and in each remeasurement (the best of
     * them is kept): the fabric is known slow, and -n operations through its slowest link would cost minutes
     */
    cfg.first_is_figure = cfg.first_is_figure || pr->isolation;
    if (pc != MPI_COMM_NULL)
        ar_sweep_group(pr->kind, &pc, &cfg, mine, label);
    else if (gate)
        ar_bench_sit_out(&cfg);
    ar_gather_records(ctx, mine, records, pr->round_bound, what);
}

/* One round: this rank's pair (if it has one), then the round's records at rank 0, which appends the round's
 * pairs to pairs and returns how many; judged[] (rank 0) marks the pairs the gate judged far below their
 * peers. A round cut by the gate leaves pr->n_sizes at the size it stopped at, for the rounds that follow. */
static int run_pair_round(pairs_run *pr, int r, int rounds, int (*sched)[2], ar_record *mine,
                          ar_record **round_records, ga_pair *pairs, bool *judged)
{
    const ga_ctx *ctx = pr->ctx;
    int np = ga_pairs_plan_round(pr->plan.members, pr->plan.at, r, sched), color = MPI_UNDEFINED,
        me = member_of_rank(ctx, &pr->plan);
    for (int p = 0; p < np; p++)
        if (sched[p][0] == me || sched[p][1] == me)
            color = p;
    char what[64];
    snprintf(what, sizeof what, "round %d", r);
    ar_group_gate_begin(&pr->gate, np, color == MPI_UNDEFINED ? -1 : color);
    pr->gate.n_sizes = pr->n_sizes;
    pr->gate.size_bound = pr->size_bound;
    pr->gate.what = "pair";
    run_groups(pr, pr->sizes, pr->n_sizes, color, what, &pr->gate.base, mine, round_records);
    int cut = pr->gate.stopped_at;
    bool cut_judged = pr->gate.stopped_judged;
    if (cut >= 0)
        pr->n_sizes = cut + 1;
    if (ctx->world_rank != 0)
        return 0;
    ar_sweep_desc d = ar_desc_of(pr->o, pr->c, pr->sizes, pr->n_sizes);
    int got = round_pairs(*round_records, ctx->world_size, r, &pr->plan, &d, pairs);
    double lo = 0;
    int lo_i = 0;
    for (int p = 0; p < got; p++) {
        judged[p] = ar_group_gate_judged(&pr->gate, p);
        if (p == 0 || pairs[p].figure < lo)
            lo = pairs[p].figure, lo_i = p;
    }
    if (rounds > 0 && got > 0) /* 0: the screen, which says what it found itself */
        ga_log("COMM",
               "round %d/%d: %d pairs, busbw at %llu B: lowest %.2f GB/s (%s rank %d <-> %s rank %d)%s",
               r + 1, rounds, got, (unsigned long long)pr->sizes[pr->n_sizes - 1], lo, pairs[lo_i].host[0],
               pairs[lo_i].rank[0], pairs[lo_i].host[1], pairs[lo_i].rank[1],
               cut < 0      ? ""
               : cut_judged ? "; a pair far below its peers twice: sizes above this one not measured"
                            : "; out of time: sizes above this one not measured");
    return got;
}

/* Rank 0: the pairs beyond doubt, which are not measured again: judged far below their peers twice (the
 * gate), with a member in two such pairs or more, so that two partners saw the same slowness. */
static void mark_beyond_doubt(const ga_pair *pairs, int n, const bool *judged, bool *doubtless)
{
    for (int i = 0; i < n; i++) {
        doubtless[i] = false;
        if (!judged[i])
            continue;
        for (int s = 0; s < 2 && !doubtless[i]; s++) {
            int with = 0;
            for (int j = 0; j < n; j++)
                with += judged[j] && (pairs[j].member[0] == pairs[i].member[s] ||
                                      pairs[j].member[1] == pairs[i].member[s]);
            doubtless[i] = with >= 2;
        }
    }
}

/* Rank 0, when the screen found a member low in every pair it was in: if the rounds show the same member low
 * in every pair it is in again (ar_screen.h, two moments, four partners at least), its pairs are beyond doubt
 * too and are not measured again: the evidence is already repeated. */
static void mark_low_member(const ga_pair *pairs, int n, int members, bool *doubtless)
{
    ar_screen_pair *sp = malloc((size_t)(n > 0 ? n : 1) * sizeof *sp);
    ar_screen_verdict v = {.member = -1};
    if (!sp)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int i = 0; i < n; i++)
        sp[i] = (ar_screen_pair){{pairs[i].member[0], pairs[i].member[1]}, pairs[i].round, pairs[i].figure};
    if (ar_screen_judge(sp, n, members, &v) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    free(sp);
    if (v.kind == AR_SCREEN_NONE)
        return;
    for (int i = 0; i < n; i++)
        doubtless[i] = doubtless[i] || pairs[i].member[0] == v.member || pairs[i].member[1] == v.member;
    ga_log("COMM",
           "pairs: member %d low in all its %d pairs of the rounds as in the screen (its lowest %.3fx of its "
           "round's others): its pairs are not measured again",
           v.member, v.pairs, v.worst);
}

/* Rank 0: the pairs of this pass (batch_of[i] >= 0) and head: how many, in how many batches, and whether
 * the phase is out of time. */
static void plan_remeasure_pass(const pairs_run *pr, ga_pair *pairs, int n_pairs, const bool *doubtless,
                                int *batch_of, int head[3])
{
    ga_pairs_verdict v;
    if (ga_pairs_analyse(pairs, n_pairs, pr->o->tolerance, pr->cpus_shared, &v) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    head[1] = ga_pairs_remeasure_batches(pairs, n_pairs, &v, 1 + pr->o->remeasure, batch_of);
    ga_pairs_verdict_free(&v);
    for (int i = 0; i < n_pairs; i++) {
        if (doubtless[i])
            batch_of[i] = -1;
        head[0] += batch_of[i] >= 0;
    }
    head[2] = head[0] > 0 && pr->deadline > 0 && ga_now() > pr->deadline;
}

/* Collective: the pass's list from rank 0, list[k] = members a, b, batch, and (rank 0) the pair's index. */
static int (*share_remeasure_list(const ga_pair *pairs, int n_pairs, const int *batch_of, int count))[4]
{
    int(*list)[4] = malloc((size_t)count * sizeof *list);
    if (!list)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    if (batch_of)
        ar_remeasure_list_fill(pairs, n_pairs, batch_of, list);
    ga_deadline_arm("sharing the pairs to measure again");
    GA_MPI_CHECK(MPI_Bcast(list, 4 * count, MPI_INT, 0, MPI_COMM_WORLD));
    ga_deadline_disarm();
    return list;
}

/* Collective: the pass's batches one after the other; rank 0 adds each pair's new figure to it. */
static void run_remeasure_batches(pairs_run *pr, ga_pair *pairs, int (*list)[4], const int head[3], int pass,
                                  ar_record *mine)
{
    const ga_ctx *ctx = pr->ctx;
    const uint64_t *last = pr->sizes + pr->n_sizes - 1;
    ar_sweep_desc d1 = ar_desc_of(pr->o, pr->c, last, 1);
    int me = member_of_rank(ctx, &pr->plan);
    for (int b = 0; b < head[1]; b++) {
        int color = ar_remeasure_color(list, head[0], b, me);
        char what[64];
        snprintf(what, sizeof what, "remeasure %d batch %d", pass + 1, b + 1);
        ar_record *all = NULL;
        run_groups(pr, last, 1, color, what, NULL, mine, &all);
        if (ctx->world_rank != 0)
            continue;
        for (int k = 0; k < head[0]; k++)
            if (list[k][2] == b) {
                double bwx = ar_group_busbw(all, ctx->world_size, k, &d1, NULL);
                double wx = ar_group_cpu_wait(all, ctx->world_size, k, &d1);
                ga_pairs_add_measurement(&pairs[list[k][3]], bwx, wx);
            }
        free(all);
    }
}

/* Collective: the pairs that would make a finding measured again at the rounds' last size, batch after batch
 * of pairs with no member in common, each pair keeping the best of its figures; then the analysis again,
 * until every pair that would make a finding was measured 1 + --remeasure times (a pass that changes the
 * median can make a new candidate, which is measured again in its turn). A pair slowed by a moment of
 * contention recovers; a slow node or link stays slow. Pairs beyond doubt (doubtless, rank 0) are not
 * measured again, and no pass starts past the phase's deadline (*out_of_time). */
static void remeasure_pairs(pairs_run *pr, ga_pair *pairs, int n_pairs, const bool *doubtless,
                            ar_record *mine, bool *out_of_time)
{
    bool root = pr->ctx->world_rank == 0;
    int *batch_of = root ? malloc((size_t)(n_pairs > 0 ? n_pairs : 1) * sizeof *batch_of) : NULL;
    if (root && !batch_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    *out_of_time = false;
    for (int pass = 0; pr->o->remeasure > 0; pass++) {
        int head[3] = {0, 0, 0}; /* pairs to measure again, batches, out of time */
        if (root)
            plan_remeasure_pass(pr, pairs, n_pairs, doubtless, batch_of, head);
        ga_deadline_arm_for(pr->round_bound, "sharing the pairs to measure again"); /* after a round */
        GA_MPI_CHECK(MPI_Bcast(head, 3, MPI_INT, 0, MPI_COMM_WORLD));
        ga_deadline_disarm();
        if (head[2]) {
            *out_of_time = true;
            if (root)
                ga_log("COMM",
                       "pairs: %d pair%s would make a finding, but the time for pairs is spent: not "
                       "measured again",
                       head[0], head[0] == 1 ? "" : "s");
            break;
        }
        if (head[0] == 0)
            break;
        int(*list)[4] = share_remeasure_list(pairs, n_pairs, batch_of, head[0]);
        if (root)
            ga_log(
                "COMM",
                "pairs: %d pair%s would make a finding: measuring them again at %llu B (pass %d; each pair "
                "at most %d times)",
                head[0], head[0] == 1 ? "" : "s", (unsigned long long)pr->sizes[pr->n_sizes - 1], pass + 1,
                pr->o->remeasure);
        run_remeasure_batches(pr, pairs, list, head, pass, mine);
        free(list);
    }
    free(batch_of);
}

/* Rank 0, after the rounds: the results (every pair of every round, each its own communicator) and the pairs
 * with who their members are, handed to the report (ar_report_pairs). Takes rounds_all[1..] (the first
 * round's records stay as the ones the report shows under "nodes" when pairs is the first pattern). */
static void report_pairs(const pairs_run *pr, const ar_sweep_desc *d, ar_record **rounds_all, int rounds,
                         ga_pair *pairs, int n_pairs, run_state *st, json_t *report)
{
    const ga_ctx *ctx = pr->ctx;
    const ar_opts *o = pr->o;
    const pair_plan *plan = &pr->plan;
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

    ar_member_id *ids = calloc((size_t)plan->members, sizeof *ids);
    if (!ids)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int m = 0; m < plan->members; m++)
        member_identity(rounds_all[0], ctx->world_size, plan, m, ids[m].host, sizeof ids[m].host,
                        &ids[m].rank);
    ar_pairs_outcome outcome = {.pairs = pairs,
                                .n_pairs = n_pairs,
                                .rounds = rounds,
                                .members = plan->members,
                                .by_rank = plan->by_rank,
                                .cpus_shared = pr->cpus_shared,
                                .ids = ids,
                                .world_far_busbw = st->world_far_busbw,
                                .screen_busbw = st->screen_pairs_busbw,
                                .screen = st->screen};
    if (ar_report_pairs(o, &outcome, st->findings, report, &st->out) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    free(ids);
    ar_keep_first_records(st, rounds_all, rounds);
}

/* Rank 0: the pairs whose sizes went unchecked (far below their peers, or out of time), for not_covered. */
static void note_unchecked(run_state *st, ar_record **rounds_all, int rounds, int world)
{
    int pairs = 0, sizes = 0;
    char *counted =
        calloc((size_t)(world > 0 ? world : 1), 1); /* one rank per pair: the first of its group */
    if (!counted)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int r = 0; r < rounds; r++) {
        memset(counted, 0, (size_t)world);
        for (int i = 0; i < world; i++) {
            const ar_record *rec = &rounds_all[r][i];
            if (rec->group < 0 || rec->group >= world || rec->unchecked <= 0 || counted[rec->group])
                continue;
            counted[rec->group] = 1;
            pairs++;
            sizes += rec->unchecked;
        }
    }
    free(counted);
    if (pairs)
        ar_run_not_covered(
            st, "pairs: %d size%s of %d pair%s not checked (judged far below their peers, or out of time)",
            sizes, sizes == 1 ? "" : "s", pairs, pairs == 1 ? "" : "s");
}

/* How many rounds the options ask for among members. */
static int rounds_asked(const ar_opts *o, int members)
{
    int max_rounds = ga_pairs_max_rounds(members);
    int rounds = o->rounds == AR_ROUNDS_ALL ? max_rounds : o->rounds > 0 ? o->rounds : 3;
    return rounds > max_rounds ? max_rounds : rounds;
}

static pair_plan plan_of(const ga_ctx *ctx)
{
    return (pair_plan){ctx->node_count >= 2 ? ctx->node_count : ctx->world_size, ctx->node_count < 2, -1};
}

/* Collective, rank 0 deciding: whether round r may start, from the time the slowest earlier round took, and,
 * the first time the circle's remaining rounds (of `circle`) no longer fit at that pace, that the ring
 * neighbours' rounds come next (pr->plan.at = r, ga_pairs.h): the pairs the world's ring used, which its
 * figures speak for, are then all tested. One decision, broadcast: every rank runs the same plan. */
static bool round_fits(pairs_run *pr, int r, double slowest_round, int circle)
{
    int v[2] = {1, pr->plan.at};
    if (pr->ctx->world_rank == 0 && r > 0 && pr->deadline > 0) {
        double now = ga_now();
        v[0] = now + slowest_round <= pr->deadline;
        if (v[1] < 0 && ga_pairs_neighbour_rounds(pr->plan.members) > 0 && r < circle &&
            now + slowest_round * (circle - r) > pr->deadline) {
            v[1] = r;
            ga_log("COMM",
                   "pairs: the %d rounds left do not fit the time left at %.1f s a round: the ring "
                   "neighbours' %d rounds come next",
                   circle - r, slowest_round, ga_pairs_neighbour_rounds(pr->plan.members));
        }
    }
    ga_deadline_arm_for(pr->round_bound, "deciding whether pairs round %d fits the time left", r + 1);
    GA_MPI_CHECK(MPI_Bcast(v, 2, MPI_INT, 0, MPI_COMM_WORLD));
    ga_deadline_disarm();
    pr->plan.at = v[1];
    return v[0] != 0;
}

/* Once the fabric is known to be slow, isolation looks at 1 to 16 MiB, one operation per size: enough to see
 * a member 10x slower, quick on the slowest link; the pairs that would make a finding and are not beyond
 * doubt are measured again at -n. */
static void plan_isolation(pairs_run *pr, const uint64_t *sizes, int n_sizes, run_state *st)
{
    if (!(st->fabric_slow || st->member_low) || n_sizes <= 1)
        return;
    int first;
    pr->n_sizes = ar_isolation_sizes(sizes, n_sizes, &first);
    pr->sizes = sizes + first;
    pr->isolation = true;
    if (pr->ctx->world_rank == 0 && pr->n_sizes < n_sizes)
        ar_run_not_covered(st, "pairs: sizes %llu-%llu B only, one operation each (isolation of %s)",
                           (unsigned long long)pr->sizes[0], (unsigned long long)pr->sizes[pr->n_sizes - 1],
                           st->fabric_slow ? "a slow fabric" : "a member low in every screened pair");
}

/* Collective: whether a node has more ranks than CPUs, said in the log (ga_pairs_analyse). */
static bool note_cpus_shared(const ga_ctx *ctx)
{
    double per_cpu = ga_ranks_per_cpu(ctx);
    if (ctx->world_rank == 0 && per_cpu > 1)
        ga_log("COMM",
               "pairs: a node has %.1f ranks per CPU: a pair whose ranks waited for a CPU for %.0f%% of its "
               "measurement or more is not judged",
               per_cpu, 100 * GA_PAIRS_CPU_WAIT_CONTENDED);
    return per_cpu > 1;
}

/* The pairs phase's buffers: this rank's record and round schedule; at rank 0, the pairs measured so far with
 * what the gate judged of them and which are beyond doubt, and each round's records. */
typedef struct {
    int (*sched)[2];
    ar_record *mine;
    ga_pair *pairs;
    bool *judged, *doubtless;
    ar_record **rounds_all;
    int n_pairs; /* pairs measured so far (rank 0) */
    int ran;     /* rounds run */
} pairs_bufs;

static void pairs_bufs_alloc(pairs_bufs *bf, int members, int max_rounds)
{
    size_t cap = (size_t)(max_rounds * (members / 2) + 1);
    *bf = (pairs_bufs){.sched = malloc((size_t)(members / 2 + 1) * sizeof *bf->sched),
                       .mine = calloc(1, sizeof *bf->mine),
                       .pairs = calloc(cap, sizeof *bf->pairs),
                       .judged = calloc(cap, sizeof *bf->judged),
                       .doubtless = calloc(cap, sizeof *bf->doubtless),
                       .rounds_all = calloc((size_t)max_rounds, sizeof *bf->rounds_all)};
    if (!bf->sched || !bf->mine || !bf->pairs || !bf->judged || !bf->doubtless || !bf->rounds_all)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
}

static void pairs_bufs_free(pairs_bufs *bf)
{
    free(bf->rounds_all);
    free(bf->pairs);
    free(bf->judged);
    free(bf->doubtless);
    free(bf->mine);
    free(bf->sched);
}

/* The circle's rounds asked for (*circle) and the ring neighbours' (*extra), said in the log; returns how
 * many rounds the plan has. */
static int plan_pair_rounds(pairs_run *pr, int *circle, int *extra)
{
    *circle = rounds_asked(pr->o, pr->plan.members);
    *extra = ga_pairs_neighbour_rounds(pr->plan.members);
    if (*extra > 0 && *circle < ga_pairs_max_rounds(pr->plan.members))
        pr->plan.at = 0; /* not every round asked for: the ring neighbours first */
    ga_log("COMM", "pairs: %d %s, %d round%s of %d pairs%s, tolerance %.0f%% below the median",
           pr->plan.members, pr->plan.by_rank ? "ranks of one node" : "nodes", *circle,
           *circle == 1 ? "" : "s", pr->plan.members / 2,
           pr->plan.at == 0 ? " after the ring neighbours' rounds" : "", pr->o->tolerance * 100);
    return ga_pairs_plan_rounds(pr->plan.members, pr->plan.at, *circle);
}

/* The waits' bounds and the gate; n_sizes: the phase's sizes before isolation. */
static void init_round_bounds(pairs_run *pr, int n_sizes)
{
    /* A rank sitting out waits for the whole round: bound it by the waits the round can make (each timed loop
     * fits a quarter of -T, see ar_bench.c). */
    pr->round_bound =
        ga_deadline_wait_timeout() * (4.0 + (double)n_sizes * AR_PLACEMENTS * (3.0 + pr->o->check));
    pr->size_bound = ga_deadline_wait_timeout() * AR_PLACEMENTS * (4.0 + pr->o->check);
    ar_group_gate_init(&pr->gate, pr->o->coll, pr->c.type, pr->sizes, pr->n_sizes,
                       ar_judge_size_index(pr->sizes, pr->n_sizes), true, pr->deadline);
}

/* Collective: the rounds while they fit the time left (bf->ran of them); returns how many the plan has now.
 */
static int run_pair_rounds(pairs_run *pr, pairs_bufs *bf, int rounds, int circle)
{
    double slowest = 0;
    for (int r = 0; r < rounds && round_fits(pr, r, slowest, circle); r++, bf->ran++) {
        rounds = ga_pairs_plan_rounds(pr->plan.members, pr->plan.at, circle);
        double t0 = ga_now();
        bf->n_pairs += run_pair_round(pr, r, rounds, bf->sched, bf->mine, &bf->rounds_all[r],
                                      &bf->pairs[bf->n_pairs], &bf->judged[bf->n_pairs]);
        slowest = ga_now() - t0 > slowest ? ga_now() - t0 : slowest;
    }
    return rounds;
}

/* Rank 0: what the rounds did not cover, every pair at the one size all rounds reached, and the pairs beyond
 * doubt. */
static void settle_pair_rounds(const pairs_run *pr, pairs_bufs *bf, int rounds, run_state *st)
{
    int world = pr->ctx->world_size;
    if (bf->ran < rounds)
        ar_run_not_covered(st, "pairs: rounds %d-%d of %d not run: out of time", bf->ran + 1, rounds, rounds);
    note_unchecked(st, bf->rounds_all, bf->ran, world);
    ar_sweep_desc d = ar_desc_of(pr->o, pr->c, pr->sizes, pr->n_sizes);
    for (int r = 0, k = 0; r < bf->ran; r++)
        k += round_pairs(bf->rounds_all[r], world, r, &pr->plan, &d, &bf->pairs[k]);
    mark_beyond_doubt(bf->pairs, bf->n_pairs, bf->judged, bf->doubtless);
    if (st->member_low)
        mark_low_member(bf->pairs, bf->n_pairs, pr->plan.members, bf->doubtless);
}

void ar_run_pairs(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                  int n_sizes, run_state *st, json_t *report)
{
    bool root = ctx->world_rank == 0;
    pairs_run pr = {.ctx = ctx,
                    .o = o,
                    .kind = kind,
                    .c = c,
                    .plan = plan_of(ctx),
                    .sizes = sizes,
                    .n_sizes = n_sizes,
                    .deadline = st->phase_deadline};
    plan_isolation(&pr, sizes, n_sizes, st);
    pr.cpus_shared = note_cpus_shared(ctx);
    int circle, extra, rounds = plan_pair_rounds(&pr, &circle, &extra);
    pairs_bufs bf;
    pairs_bufs_alloc(&bf, pr.plan.members, circle + extra);
    init_round_bounds(&pr, n_sizes);
    rounds = run_pair_rounds(&pr, &bf, rounds, circle);
    /* every pair at the one size all rounds reached, then the pairs that would make a finding again */
    if (root)
        settle_pair_rounds(&pr, &bf, rounds, st);
    bool late = false;
    remeasure_pairs(&pr, bf.pairs, bf.n_pairs, bf.doubtless, bf.mine, &late);
    if (root && late)
        ar_run_not_covered(st,
                           "pairs: the pairs that would make a finding were not measured again: out of time");
    /* every rank leaves together, so that the next pattern's first wait is not the slowest pair's last round
     */
    ga_deadline_arm_for(pr.round_bound, "the last round of pairs");
    GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (root && bf.ran > 0) {
        ar_sweep_desc d = ar_desc_of(o, c, pr.sizes, pr.n_sizes);
        report_pairs(&pr, &d, bf.rounds_all, bf.ran, bf.pairs, bf.n_pairs, st, report);
    }
    ar_group_gate_free(&pr.gate);
    pairs_bufs_free(&bf);
}

/* Rank 0: each pair's best busbw over the screen's operations (its records hold one per "size"). Contention
 * only ever slows an operation: the best is the pair's link. */
static void screen_best(const ar_record *all, int world, const pair_plan *plan, const ar_opts *o, combo c,
                        const uint64_t *sizes, int times, int round, ga_pair *pairs, double *best)
{
    int(*sched)[2] = malloc((size_t)(plan->members / 2 + 1) * sizeof *sched);
    if (!sched)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    int np = ga_pairs_plan_round(plan->members, plan->at, round, sched);
    for (int k = 0; k < times; k++) {
        ar_sweep_desc d = ar_desc_of(o, c, sizes, k + 1);
        round_pairs(all, world, round, plan, &d, pairs);
        for (int q = 0; q < np; q++)
            best[q] = k == 0 || pairs[q].figure > best[q] ? pairs[q].figure : best[q];
    }
    free(sched);
}

/* Rank 0: the screen's verdict (ar_screen.h) on its pairs, each at its best; said in the log and, when the
 * fabric is slow, in not_covered (the world sweep stops at size). */
static ar_screen_verdict screen_verdict(const ga_pair *pairs, const double *best, int n,
                                        const pair_plan *plan, uint64_t size, double t0, run_state *st)
{
    ar_screen_pair *sp = malloc((size_t)(n > 0 ? n : 1) * sizeof *sp);
    ar_screen_verdict v;
    if (!sp)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int i = 0; i < n; i++) {
        sp[i] = (ar_screen_pair){{pairs[i].member[0], pairs[i].member[1]}, pairs[i].round, best[i]};
        ga_debug("COMM", "screen: round %d pair %d-%d: best %.3f GB/s", pairs[i].round + 1,
                 pairs[i].member[0], pairs[i].member[1], best[i]);
    }
    if (ar_screen_judge(sp, n, plan->members, &v) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    free(sp);
    char host[GA_PAIRS_HOST_MAX] = "?";
    for (int i = 0; i < n && v.member >= 0; i++)
        if (pairs[i].member[0] == v.member || pairs[i].member[1] == v.member)
            snprintf(host, sizeof host, "%s", pairs[i].host[pairs[i].member[0] == v.member ? 0 : 1]);
    const char *who = plan->by_rank ? "rank" : "node";
    unsigned long long at = (unsigned long long)size;
    if (v.kind == AR_SCREEN_FAR) {
        ga_log(
            "COMM",
            "screen: %s %s %d in %d pairs more than %.0fx below the other pairs of their rounds at %llu B "
            "(its lowest %.3fx of them, median pair %.3f GB/s): the fabric is slow; the world sweep stops at "
            "this size and isolation follows (%.1f s)",
            host, who, v.member, v.below, AR_FAR_FACTOR, at, v.worst, v.median, ga_now() - t0);
        ar_run_not_covered(st,
                           "world: sizes above %llu B not measured: %s was far below its peers at that size "
                           "(screen)",
                           at, host);
    } else if (v.kind == AR_SCREEN_LOW) {
        ga_log(
            "COMM",
            "screen: %s %s %d more than %.0fx below the other pairs of their rounds in all its %d pairs at "
            "%llu B (its lowest %.3fx, median pair %.3f GB/s): the pairs isolate it at small sizes (%.1f s)",
            host, who, v.member, AR_LOW_FACTOR, v.pairs, at, v.worst, v.median, ga_now() - t0);
    } else {
        ga_log("COMM",
               "screen: no member low in every pair or far below its peers at %llu B (median pair "
               "%.3f GB/s, %.1f s)",
               at, v.median, ga_now() - t0);
    }
    return v;
}

bool ar_pairs_screen(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                     int n_sizes, run_state *st)
{
    enum { TIMES = AR_SCREEN_OPS };
    pair_plan plan = plan_of(ctx);
    if (plan.members < 4)
        return false; /* one pair a round: no peers to be far below */
    bool root = ctx->world_rank == 0;
    int j = ar_judge_size_index(sizes, n_sizes), ppr = plan.members / 2;
    /* two rounds at least, so that every member has two partners, and four pairs at least, so that the
     * others' median is not one pair's (a pair that shares one core of a loaded host is slow every time) */
    int rounds = (4 + ppr - 1) / ppr;
    rounds = rounds < 2 ? 2 : rounds;
    rounds = rounds > ga_pairs_max_rounds(plan.members) ? ga_pairs_max_rounds(plan.members) : rounds;
    uint64_t at[TIMES];
    for (int k = 0; k < TIMES; k++)
        at[k] = sizes[j];
    ar_opts one = *o;
    one.iters = 1, one.warmup = 1, one.check = 0;
    pairs_run pr = {.ctx = ctx,
                    .o = &one,
                    .kind = kind,
                    .c = c,
                    .plan = plan,
                    .sizes = at,
                    .n_sizes = TIMES,
                    .deadline = st->phase_deadline,
                    .screen = true};
    pr.round_bound = ga_deadline_wait_timeout() * 8.0;
    pr.size_bound = ga_deadline_wait_timeout() * 4.0;
    ar_group_gate_init(&pr.gate, o->coll, c.type, at, TIMES, 0, false, 0);
    int cap = rounds * ppr + 1;
    int(*sched)[2] = malloc((size_t)(ppr + 1) * sizeof *sched);
    ar_record *mine = calloc(1, sizeof *mine);
    ga_pair *pairs = calloc((size_t)cap, sizeof *pairs);
    bool *judged = calloc((size_t)cap, sizeof *judged);
    double *best = calloc((size_t)cap, sizeof *best);
    if (!sched || !mine || !pairs || !judged || !best)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    double t0 = ga_now();
    if (root)
        ga_log("COMM", "screen: %d round%s of pairs at %llu B, %d operations each, before the world sweep",
               rounds, rounds == 1 ? "" : "s", (unsigned long long)sizes[j], TIMES);
    int n = 0;
    for (int r = 0; r < rounds; r++) {
        ar_record *all = NULL;
        int got = run_pair_round(&pr, r, 0, sched, mine, &all, pairs + n, judged + n);
        if (root)
            screen_best(all, ctx->world_size, &plan, &one, c, at, TIMES, r, pairs + n, best + n);
        n += got;
        free(all);
    }
    double found[2] = {AR_SCREEN_NONE, 0}; /* the verdict's kind, the median pair */
    if (root) {
        ar_screen_verdict v = screen_verdict(pairs, best, n, &plan, sizes[j], t0, st);
        found[0] = v.kind, found[1] = v.median;
        st->screen = v;
    }
    ga_deadline_arm("sharing what the screen found");
    GA_MPI_CHECK(MPI_Bcast(found, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    ga_deadline_disarm();
    st->member_low = found[0] == AR_SCREEN_LOW;
    st->screen_pairs_busbw = found[1];
    ar_group_gate_free(&pr.gate);
    free(sched);
    free(mine);
    free(pairs);
    free(judged);
    free(best);
    return found[0] == AR_SCREEN_FAR;
}
