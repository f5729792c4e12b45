/* allreduce_bw --pattern node: every node sweeps on a communicator of its own ranks, all nodes at once. */
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
#include "ar_gate.h"
#include "ar_nodes.h"
#include "ga_time.h"

/* ---- node pattern: every node's own sweep, at once ---- */

/* Collective: a sweep on a communicator per node (the ranks sharing memory: MPI_COMM_TYPE_SHARED, and on the
 * GPU path an NCCL communicator over them), every node at once; the nodes below a bound make every node
 * measure the largest size again (--remeasure), each keeping its best; rank 0 analyses. */
/* Rank 0: each node's figure from the records of the node sweeps (all), with its host and first rank. */
static ar_node_fig *node_figures(const ga_ctx *ctx, const ar_record *all, const ar_sweep_desc *d)
{
    int n_nodes = ctx->node_count;
    ar_node_fig *nodes = calloc((size_t)n_nodes, sizeof *nodes);
    if (!nodes)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int k = 0; k < n_nodes; k++) {
        nodes[k].node = k;
        for (int i = 0; i < ctx->world_size; i++)
            if (all[i].hdr.node_index == k) {
                nodes[k].ranks++;
                if (all[i].hdr.local_rank == 0) {
                    snprintf(nodes[k].host, sizeof nodes[k].host, "%s", all[i].hdr.host);
                    nodes[k].rank = all[i].hdr.world_rank;
                }
            }
        ar_nodes_add_measurement(&nodes[k], ar_group_busbw(all, ctx->world_size, k, d, NULL));
    }
    return nodes;
}

/* Collective: while a node is below a bound (and not every such node beyond doubt), every node measures the
 * largest size again (again: that one size), up to --remeasure passes and the phase's deadline; rank 0 adds
 * each pass to nodes. */
static void remeasure_nodes(const ga_ctx *ctx, const ar_opts *o, run_state *st, ar_backend *b,
                            const ar_sweep_cfg *again, const ar_group_gate *gate, ar_node_fig *nodes,
                            const ar_sweep_desc *d1, double bound)
{
    bool root = ctx->world_rank == 0;
    int n_nodes = ctx->node_count;
    bool all_judged = true; /* every node below a bound is beyond doubt: nothing to measure again */
    for (int pass = 0; pass < o->remeasure; pass++) {
        ar_nodes_verdict v = {0};
        int flagged = 0, late = 0;
        if (root) {
            if (ar_nodes_analyse(nodes, n_nodes, o->min_node_busbw, o->tolerance, &v) != 0)
                GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
            flagged = v.flagged;
            for (int k = 0; k < n_nodes; k++)
                if (nodes[k].below_min || nodes[k].below_median)
                    all_judged = all_judged && ar_group_gate_judged(gate, k);
            if (flagged && all_judged)
                flagged = 0; /* far below the other nodes twice already: no doubt to remove */
            late = flagged && st->phase_deadline > 0 && ga_now() > st->phase_deadline;
            if (late)
                ar_run_not_covered(st, "node: %d node%s below a bound not measured again: out of time",
                                   flagged, flagged == 1 ? "" : "s");
        }
        int head[2] = {flagged, late};
        ga_deadline_arm_for(bound, "sharing the nodes to measure again"); /* after every node's sweep */
        GA_MPI_CHECK(MPI_Bcast(head, 2, MPI_INT, 0, MPI_COMM_WORLD));
        ga_deadline_disarm();
        flagged = head[0];
        if (!flagged || head[1])
            break;
        if (root)
            ga_log("COMM",
                   "node: %d node%s below a bound: every node measures the largest size again (pass %d "
                   "of at most %d)",
                   flagged, flagged == 1 ? "" : "s", pass + 1, o->remeasure);
        ar_record *rec = calloc(1, sizeof *rec), *got = NULL;
        if (!rec)
            GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
        ga_record_header_init(ctx, &rec->hdr);
        rec->group = ctx->node_index;
        ar_bench_sweep(b, again, rec, NULL, NULL);
        ar_gather_records(ctx, rec, &got, bound, "the node remeasurement");
        if (root)
            for (int k = 0; k < n_nodes; k++)
                ar_nodes_add_measurement(&nodes[k], ar_group_busbw(got, ctx->world_size, k, d1, NULL));
        free(got);
        free(rec);
    }
}

/* Rank 0: the node sweeps' records (all, ran sizes of sizes) and each node's figure handed to the report. */
static void report_nodes(const ga_ctx *ctx, const ar_opts *o, const ar_sweep_desc *d, const ar_record *all,
                         ar_node_fig *nodes, uint64_t size, run_state *st, json_t *report)
{
    rec_set set = ar_rec_set_world(all, ctx->world_size);
    ar_account_sweep(st, d, &set, 0, false, false,
                     "node"); /* --min-busbw is the world's figure, not a node's */
    ar_rec_set_free(&set);
    ar_nodes_outcome outcome = {nodes, ctx->node_count, size};
    if (ar_report_nodes(o, &outcome, st->findings, report, &st->out) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
}

/* One communicator per node, bounded. */
static MPI_Comm split_nodes(const ga_ctx *ctx)
{
    MPI_Comm nc;
    ga_deadline_arm("splitting the world into nodes");
    GA_MPI_CHECK(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx->world_rank, MPI_INFO_NULL, &nc));
    ga_deadline_disarm();
    return nc;
}

/* The sizes the nodes sweep. One node whose answer the screen knows (its communicator is the world's): one
 * operation per size up to the judging size, as the world sweep does, the rest said not covered. */
static int sizes_to_sweep(const ga_ctx *ctx, run_state *st, const uint64_t *sizes, int n_sizes, bool known)
{
    if (!known || ar_judge_size_index(sizes, n_sizes) + 1 >= n_sizes)
        return n_sizes;
    n_sizes = ar_judge_size_index(sizes, n_sizes) + 1;
    if (ctx->world_rank == 0)
        ar_run_not_covered(st, "node: sizes above %llu B not measured: one node, the world's answer (screen)",
                           (unsigned long long)sizes[n_sizes - 1]);
    return n_sizes;
}

/* Every node at once, judged against the others after each size (ar_gate.h); the phase's time shared out. */
static void node_gate(ar_group_gate *gate, const ga_ctx *ctx, const ar_opts *o, combo c,
                      const uint64_t *sizes, int n_sizes, const run_state *st)
{
    ar_group_gate_init(gate, o->coll, c.type, sizes, n_sizes, ar_judge_size_index(sizes, n_sizes), false,
                       st->phase_deadline);
    ar_group_gate_begin(gate, ctx->node_count, ctx->node_index);
    gate->size_bound = ga_deadline_wait_timeout() * AR_PLACEMENTS * (4.0 + o->check);
    gate->what = "node";
}

void ar_run_node(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                 int n_sizes, run_state *st, json_t *report)
{
    bool root = ctx->world_rank == 0;
    MPI_Comm nc = split_nodes(ctx);
    char label[64];
    snprintf(label, sizeof label, "node %d", ctx->node_index);
    bool known = st->fabric_slow && ctx->node_count == 1;
    n_sizes = sizes_to_sweep(ctx, st, sizes, n_sizes, known);
    ar_sweep_cfg cfg = ar_cfg_of(o, c, sizes, n_sizes, label);
    int nn;
    MPI_Comm_size(nc, &nn);
    ar_backend *b = ar_backend_open(kind, nc, ar_bench_max_bytes(&cfg, nn), label);
    ar_group_gate gate;
    node_gate(&gate, ctx, o, c, sizes, n_sizes, st);
    cfg.deadline = st->phase_deadline;
    cfg.gate = &gate.base;
    cfg.first_is_figure = known;
    ar_record *mine = calloc(1, sizeof *mine);
    if (!mine)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ga_record_header_init(ctx, &mine->hdr);
    mine->group = ctx->node_index;
    ar_bench_sweep(b, &cfg, mine, NULL, NULL);
    double bound = ga_deadline_wait_timeout() * (4.0 + (double)n_sizes * AR_PLACEMENTS * (3.0 + o->check));
    ar_record *all = NULL;
    ar_gather_records(ctx, mine, &all, bound, "the node sweeps");
    /* the gate stops every node at the same size: out of time, the nodes are compared where they stopped */
    int ran = mine->n_sizes;
    if (gate.stopped_at >= 0 && root) {
        ar_run_not_covered(st, "node: sizes above %llu B not measured: out of time",
                           (unsigned long long)sizes[ran - 1]);
        ar_report_sweep_cut(st->findings, "node", sizes[ran - 1], sizes[n_sizes - 1]);
    }

    ar_sweep_desc d = ar_desc_of(o, c, sizes, ran), d1 = ar_desc_of(o, c, sizes + ran - 1, 1);
    ar_node_fig *nodes = root ? node_figures(ctx, all, &d) : NULL;
    ar_sweep_cfg again = cfg;
    again.sizes = sizes + ran - 1;
    again.n_sizes = 1;
    again.gate = NULL;
    remeasure_nodes(ctx, o, st, b, &again, &gate, nodes, &d1, bound);
    b->destroy(b);
    MPI_Comm_free(&nc);
    ar_group_gate_free(&gate);
    free(mine);
    ga_deadline_arm_for(bound, "the last node sweep"); /* leave together, as the pairs do */
    GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (!root)
        return;

    report_nodes(ctx, o, &d, all, nodes, sizes[ran - 1], st, report);
    free(nodes);
    if (!st->node_records)
        st->node_records = all;
    else
        free(all);
}
