/* allreduce_bw --pattern rails: rounds of pairs of nodes (the pairs' schedule, ga_pairs.c); in a round, GPU i
 * of the two nodes of a pair make a communicator of their own (split by pair and local index), so that NCCL
 * routes through rail i, and every rail of every pair runs at once. The rail pairs that would make a finding
 * are measured again; rank 0 judges them (ar_rails.c) with the NIC each end used (its transport record). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ar_rails.h"
#include "ar_run.h"
#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_log.h"
#include "ga_time.h"
#include "ga_transport_capture.h"

typedef struct {
    const ga_ctx *ctx;
    const ar_opts *o;
    ga_backend kind;
    combo c;
    const uint64_t *sizes;
    int n_sizes;
    int nodes, locals;
    double deadline, round_bound;
    bool cpus_shared;
} rails_run;

/* Collective: every rank waits for the round's slowest rail pair asleep rather than polling: where ranks
 * share CPUs, the polling of the ranks sitting a round out (two of six on 3 nodes of 2) took the measuring
 * ranks' CPUs. */
static void idle_wait(const rails_run *rr, const char *what)
{
    MPI_Request req;
    int done = 0;
    ga_deadline_arm_for(rr->round_bound, "waiting for the rails of %s", what);
    GA_MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    while (!done) {
        GA_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (!done)
            nanosleep(&(struct timespec){0, 200000}, NULL);
    }
    ga_deadline_disarm();
}

/* Collective: the ranks of one color run the sweep together (MPI_UNDEFINED sits out); rank 0 gathers every
 * rank's record (group: the color). Labels start "rail " (the transport record's scope "other"). */
static void run_colors(const rails_run *rr, const uint64_t *sizes, int n_sizes, int color, const char *what,
                       ar_record *mine, ar_record **all)
{
    const ga_ctx *ctx = rr->ctx;
    MPI_Comm rc = ar_split_groups(ctx, color, mine, rr->round_bound, "rails", what);
    char label[96];
    snprintf(label, sizeof label, "rail %d %s", color, what);
    ar_sweep_cfg cfg = ar_cfg_of(rr->o, rr->c, sizes, n_sizes, label);
    cfg.deadline = rr->deadline;
    if (rc != MPI_COMM_NULL)
        ar_sweep_group(rr->kind, &rc, &cfg, mine, label);
    idle_wait(rr, what);
    ar_gather_records(ctx, mine, all, rr->round_bound, what);
}

/* Rank 0: the rail pair of group g (node pair g / locals, GPU g % locals) from its records. */
static void rail_pair(const rails_run *rr, const ar_record *all, int g, const int nodes[2], int round,
                      const ar_sweep_desc *d, ga_pair *out)
{
    memset(out, 0, sizeof *out);
    out->round = round;
    int local = g % rr->locals;
    for (int s = 0; s < 2; s++) {
        out->member[s] = ar_rail_member(nodes[s], local, rr->locals);
        snprintf(out->host[s], sizeof out->host[s], "?");
        out->rank[s] = -1;
        for (int i = 0; i < rr->ctx->world_size; i++)
            if (all[i].group == g && all[i].hdr.node_index == nodes[s]) {
                snprintf(out->host[s], sizeof out->host[s], "%s", all[i].hdr.host);
                out->rank[s] = all[i].hdr.world_rank;
            }
    }
    ga_pairs_add_measurement(out, ar_group_busbw(all, rr->ctx->world_size, g, d, &out->iters),
                             ar_group_cpu_wait(all, rr->ctx->world_size, g, d));
}

/* Collective: round r; rank 0 appends its rail pairs to pairs, keeps the round's records in *kept and
 * returns how many pairs. */
static int run_round(const rails_run *rr, int r, int (*sched)[2], ar_record *mine, ga_pair *pairs,
                     ar_record **kept)
{
    const ga_ctx *ctx = rr->ctx;
    int np = ga_pairs_schedule(rr->nodes, r, sched), color = MPI_UNDEFINED;
    for (int p = 0; p < np; p++)
        if (sched[p][0] == ctx->node_index || sched[p][1] == ctx->node_index)
            color = p * rr->locals + ctx->local_rank;
    char what[64];
    snprintf(what, sizeof what, "round %d", r);
    run_colors(rr, rr->sizes, rr->n_sizes, color, what, mine, kept);
    if (ctx->world_rank != 0)
        return 0;
    ar_sweep_desc d = ar_desc_of(rr->o, rr->c, rr->sizes, rr->n_sizes);
    int got = 0;
    for (int g = 0; g < np * rr->locals; g++)
        rail_pair(rr, *kept, g, sched[g / rr->locals], r, &d, &pairs[got++]);
    return got;
}

/* Rank 0: every rail communicator's sweep as the pattern's results (one group per rail pair of each round,
 * not held to --min-busbw: a rail is not the world); the first round's records become the report's "nodes"
 * when no earlier pattern gave them, the others are freed. */
static void account_rounds(const rails_run *rr, ar_record **rounds_all, int rounds, run_state *st)
{
    int world = rr->ctx->world_size;
    rec_set set = {malloc((size_t)(rounds * world) * sizeof *set.recs),
                   malloc((size_t)(rounds * world) * sizeof *set.group_of), 0, 0};
    if (!set.recs || !set.group_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int r = 0, base = 0; r < rounds; r++, base += world)
        for (int i = 0; i < world; i++)
            if (rounds_all[r][i].group >= 0) {
                set.recs[set.n] = &rounds_all[r][i];
                set.group_of[set.n++] = base + rounds_all[r][i].group;
            }
    set.n_groups = rounds * world;
    ar_sweep_desc d = ar_desc_of(rr->o, rr->c, rr->sizes, rr->n_sizes);
    ar_account_sweep(st, &d, &set, rr->o->min_busbw, false, false, "rails");
    ar_rec_set_free(&set);
    ar_keep_first_records(st, rounds_all, rounds);
}

/* Collective, one pass: the rail pairs that would make a finding (rank 0 decides) measured again at the
 * last size, batch after batch of pairs with no end in common. Returns how many were measured (0: done). */
static int remeasure_pass(const rails_run *rr, ga_pair *pairs, int n_pairs, int pass, ar_record *mine)
{
    bool root = rr->ctx->world_rank == 0;
    int head[2] = {0, 0}; /* pairs, batches */
    int *batch_of = calloc((size_t)(n_pairs > 0 ? n_pairs : 1), sizeof *batch_of);
    if (!batch_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    if (root && (rr->deadline <= 0 || ga_now() < rr->deadline)) {
        ga_pairs_verdict v;
        if (ga_pairs_analyse(pairs, n_pairs, rr->o->tolerance, rr->cpus_shared, &v) != 0)
            GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
        head[1] = ga_pairs_remeasure_batches(pairs, n_pairs, &v, 1 + rr->o->remeasure, batch_of);
        ga_pairs_verdict_free(&v);
        for (int i = 0; i < n_pairs; i++)
            head[0] += batch_of[i] >= 0;
    }
    ga_deadline_arm_for(rr->round_bound, "sharing the rails to measure again");
    GA_MPI_CHECK(MPI_Bcast(head, 2, MPI_INT, 0, MPI_COMM_WORLD));
    int(*list)[4] = calloc((size_t)head[0] + 1, sizeof *list);
    if (!list)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    if (root)
        ar_remeasure_list_fill(pairs, n_pairs, batch_of, list);
    GA_MPI_CHECK(MPI_Bcast(list, 4 * head[0], MPI_INT, 0, MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (root && head[0])
        ga_log("COMM", "rails: %d rail pair%s would make a finding: measuring again (pass %d)", head[0],
               head[0] == 1 ? "" : "s", pass + 1);
    const uint64_t *last = rr->sizes + rr->n_sizes - 1;
    ar_sweep_desc d1 = ar_desc_of(rr->o, rr->c, last, 1);
    int me = ar_rail_member(rr->ctx->node_index, rr->ctx->local_rank, rr->locals);
    for (int b = 0; b < head[1]; b++) {
        int color = ar_remeasure_color(list, head[0], b, me);
        char what[64];
        snprintf(what, sizeof what, "remeasure %d batch %d", pass + 1, b + 1);
        ar_record *all = NULL;
        run_colors(rr, last, 1, color, what, mine, &all);
        for (int k = 0; root && k < head[0]; k++)
            if (list[k][2] == b)
                ga_pairs_add_measurement(&pairs[list[k][3]],
                                         ar_group_busbw(all, rr->ctx->world_size, k, &d1, NULL),
                                         ar_group_cpu_wait(all, rr->ctx->world_size, k, &d1));
        free(all);
    }
    free(list);
    free(batch_of);
    return head[0];
}

/* Collective: each rank's NIC (the devices NCCL's network used on its rail communicators; "" on the host
 * path, where Open MPI does not say) and identity, at rank 0 (ends[], by member). */
static void gather_ends(const rails_run *rr, ar_rail_end *ends)
{
    const ga_ctx *ctx = rr->ctx;
    ar_rail_end mine = {.node = ctx->node_index, .local = ctx->local_rank, .rank = ctx->world_rank};
    snprintf(mine.host, sizeof mine.host, "%s", ctx->host);
    ga_record_header h;
    ga_record_header_init(ctx, &h);
    mine.gpu = h.device_node_index >= 0 ? h.device_node_index : ctx->local_rank;
    snprintf(mine.pci_bus_id, sizeof mine.pci_bus_id, "%s", h.device_pci_bus_id);
    const ga_transport_scope *s = ga_transport_scope_mine(GA_TR_OTHER);
    if (s)
        snprintf(mine.nic, sizeof mine.nic, "%s", s->ib_devices[0] ? s->ib_devices : s->devices);
    ar_rail_end *all = ctx->world_rank == 0 ? calloc((size_t)ctx->world_size, sizeof *all) : NULL;
    if (ctx->world_rank == 0 && !all)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ga_deadline_arm_for(rr->round_bound, "gathering the rails' NICs");
    GA_MPI_CHECK(
        MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD));
    ga_deadline_disarm();
    for (int i = 0; all && i < ctx->world_size; i++)
        ends[ar_rail_member(all[i].node, all[i].local, rr->locals)] = all[i];
    free(all);
}

/* Collective: whether the rails can run: two nodes or more with the same number of ranks each (GPU i must
 * exist on both nodes of every pair); else rank 0 says why in not_covered. */
static bool rails_fit(const ga_ctx *ctx, run_state *st)
{
    int mm[2] = {-ctx->local_size, ctx->local_size};
    ga_deadline_arm("agreeing on the ranks per node for the rails");
    GA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    ga_deadline_disarm();
    bool fit = ctx->node_count >= 2 && -mm[0] == mm[1];
    if (!fit && ctx->world_rank == 0)
        ar_run_not_covered(st, "rails: %s",
                           ctx->node_count < 2 ? "one node, no rail between nodes to measure"
                                               : "nodes with different numbers of ranks");
    return fit;
}

/* Rank 0: the judgement, its findings and the report's "rails". */
static void report_rails(const rails_run *rr, ga_pair *pairs, int n_pairs, int rounds,
                         const ar_rail_end *ends, run_state *st, json_t *report)
{
    ar_rails_outcome out = {.pairs = pairs,
                            .n_pairs = n_pairs,
                            .nodes = rr->nodes,
                            .locals = rr->locals,
                            .rounds = rounds,
                            .cpus_shared = rr->cpus_shared,
                            .ends = ends};
    json_t *part = NULL;
    int named = ar_rails_judge(&out, rr->o->tolerance, st->findings, &part);
    if (named < 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    json_object_set_new(report, "rails", part);
    if (n_pairs < AR_RAILS_LINK_MIN_PAIRS)
        ar_run_not_covered(
            st, "rails: %d rail pair%s: too few to judge a cable between two healthy ends (%d needed)",
            n_pairs, n_pairs == 1 ? "" : "s", AR_RAILS_LINK_MIN_PAIRS);
    ga_log("COMM", "rails: %d rail pairs over %d round%s of %d nodes x %d GPUs, %d finding%s", n_pairs,
           rounds, rounds == 1 ? "" : "s", rr->nodes, rr->locals, named, named == 1 ? "" : "s");
}

void ar_run_rails(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                  int n_sizes, run_state *st, json_t *report)
{
    if (!rails_fit(ctx, st))
        return;
    rails_run rr = {ctx,
                    o,
                    kind,
                    c,
                    sizes,
                    n_sizes,
                    ctx->node_count,
                    ctx->local_size,
                    st->phase_deadline,
                    0,
                    ga_ranks_per_cpu(ctx) > 1};
    rr.round_bound = ga_deadline_wait_timeout() * (4.0 + (double)n_sizes * AR_PLACEMENTS * (3.0 + o->check));
    int max_rounds = ga_pairs_max_rounds(rr.nodes);
    int rounds = o->rounds == AR_ROUNDS_ALL ? max_rounds : o->rounds > 0 ? o->rounds : 3;
    rounds = rounds > max_rounds ? max_rounds : rounds;
    if (ctx->world_rank == 0)
        ga_log("COMM", "rails: %d nodes x %d GPUs, %d round%s of %d node pairs", rr.nodes, rr.locals, rounds,
               rounds == 1 ? "" : "s", rr.nodes / 2);
    int(*sched)[2] = malloc((size_t)(rr.nodes / 2 + 1) * sizeof *sched);
    ar_record *mine = calloc(1, sizeof *mine);
    ga_pair *pairs = calloc((size_t)(rounds * (rr.nodes / 2) * rr.locals + 1), sizeof *pairs);
    ar_record **rounds_all = calloc((size_t)rounds, sizeof *rounds_all);
    ar_rail_end *ends = calloc((size_t)(rr.nodes * rr.locals), sizeof *ends);
    if (!sched || !mine || !pairs || !ends || !rounds_all)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    int n_pairs = 0, ran = 0;
    for (int r = 0; r < rounds; r++, ran++) {
        int go = ctx->world_rank != 0 || r == 0 || rr.deadline <= 0 || ga_now() < rr.deadline;
        ga_deadline_arm_for(rr.round_bound, "deciding whether rails round %d fits the time left", r + 1);
        GA_MPI_CHECK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
        ga_deadline_disarm();
        if (!go)
            break;
        n_pairs += run_round(&rr, r, sched, mine, pairs + n_pairs, &rounds_all[r]);
    }
    if (ctx->world_rank == 0 && ran < rounds)
        ar_run_not_covered(st, "rails: rounds %d-%d of %d not run: out of time", ran + 1, rounds, rounds);
    for (int pass = 0; pass < o->remeasure && remeasure_pass(&rr, pairs, n_pairs, pass, mine) > 0; pass++)
        ;
    gather_ends(&rr, ends);
    if (ctx->world_rank == 0 && ran > 0) {
        account_rounds(&rr, rounds_all, ran, st);
        report_rails(&rr, pairs, n_pairs, ran, ends, st, report);
    }
    free(rounds_all);
    free(ends);
    free(pairs);
    free(mine);
    free(sched);
}
