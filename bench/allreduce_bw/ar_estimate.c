/* allreduce_bw's run time for `gpuaccept run --dry-run` (ga_estimate.h): the registry's entry,
 * allreduce_bw_estimate, runs the plan on a virtual clock (ar_estimate_plan.c) under the step's --timeout and
 * without one, and says the model and the pairs' coverage; est_op_s times one operation. */
#include "ar_estimate.h"

#include <stdio.h>

#include "ar_coll.h"

ga_estimate_fn allreduce_bw_estimate; /* named by the registry, called through its generated table */

double est_op_s(const ga_est_figures *f, int coll, int type, size_t size_bytes, int ranks, int nodes,
                bool slow)
{
    ar_counts c;
    ar_coll_counts((ar_coll_id)coll, size_bytes, (ar_dtype)type, ranks, &c);
    size_t bytes = ar_coll_bytes(&c, (ar_dtype)type);
    /* busbw at a time of 1 s is the bytes the bus carries: busbw = that / time */
    double alg = 0, carried = 0;
    if (ranks > 1)
        ar_coll_bandwidth((ar_coll_id)coll, bytes, 1.0, ranks, &alg, &carried);
    return ga_est_bus_s(f, bytes, carried, ranks, nodes, slow);
}

static void ar_model_line(const ga_est_figures *f, const ga_est_cluster *c, const est_ar_plan *p, char *buf,
                          size_t len)
{
    char check[160];
    if (f->gpu && f->dev_check_GBps > 0)
        snprintf(check, sizeof check,
                 "check on the GPU: 2 B per byte + the receive buffer at %.0f GB/s + %.0f us (measured on "
                 "one H200)",
                 f->dev_check_GBps, f->dev_check_s * 1e6);
    else
        snprintf(check, sizeof check, "check %.0f ns/B on one core", f->check_per_byte * 1e9);
    snprintf(
        buf, len,
        "launch %.0f s + %.0f ms/node; alpha-beta t = a + f(n) S / busbw, busbw %.4g GB/s within a node%s, "
        "%.4g across nodes%s, a = %.0f us in a node, %.0f us + %.0f us per doubling across; %s %.1f s + "
        "%.0f ms/rank; %s; its plan (ar_budget.h) over %d sizes: world, node, "
        "pairs shares 0.35/0.15/0.50 of --timeout %.0f s less the reserve, the screen at the judging size, "
        "rounds cut where a pair is judged; slow node: its links %.0fx slower",
        f->launch_s, f->launch_per_node_s * 1e3, f->busbw_intra,
        f->gpu && c->node_busbw_GBps > 0 ? " (baseline)" : "", f->busbw_inter,
        f->gpu ? " (46 GB/s per NDR NIC, one per GPU)" : " (10 Gb/s Ethernet)", f->alpha_intra * 1e6,
        f->alpha_inter * 1e6, f->alpha_per_doubling * 1e6, f->gpu ? "NCCL init" : "communicator",
        f->comm_init_s, f->comm_init_per_rank * 1e3, check, p->n_sizes, p->timeout_s, GA_EST_SLOW_FACTOR);
}

/* The ranks of one pair's communicator: two nodes' ranks, or two ranks of one node. */
static int pair_ranks(const ga_est_cluster *c, const est_ar_plan *p)
{
    return p->by_rank ? 2 : 2 * c->ranks_per_node;
}

/* The pairs' coverage and what --rounds all and, where it is fewer, --rounds 3 cost (fault-free, no time
 * limit). */
static void ar_pairs_note(const ga_est_figures *f, const ga_est_cluster *c, int argc, char **argv,
                          const est_ar_plan *p, char *buf, size_t len)
{
    est_ar_plan all, three;
    char err[256];
    if (!p->rounds_asked ||
        est_allreduce_bw(f, argc, argv, c->nodes, c->ranks_per_node, 0, false, 1 << 30, &all, err,
                         sizeof err) ||
        est_allreduce_bw(f, argc, argv, c->nodes, c->ranks_per_node, 0, false, 3, &three, err, sizeof err))
        return;
    const char *unit = p->by_rank ? "rank" : "node";
    int ring_total = p->members < 2 ? 0 : p->members == 2 ? 1 : p->members;
    double partners = p->members > 0 ? 2.0 * (double)p->pairs_tested / p->members : 0;
    int n = snprintf(
        buf, len,
        "pairs: %lld of %lld pairs tested (%d of %d rounds of up to %d pairs of %ss; a round %.1f s, of "
        "which %.2f s its communicators' init; the pairs' share %.0f s); ring neighbours: %lld of %d tested; "
        "other pairs: %lld of %lld; a %s has %.0f of its %d partners on average (%.0f%%); --rounds all is %d "
        "round%s, %.0f s of pairs",
        p->pairs_tested, p->pairs_total, p->rounds_run, p->rounds_asked, p->members / 2, unit, p->round_s,
        f->gpu ? f->comm_init_s + f->comm_init_per_rank * pair_ranks(c, p) : 0, p->pairs_share_s,
        p->ring_tested, ring_total, p->pairs_tested - p->ring_tested, p->pairs_total - ring_total, unit,
        partners, p->members - 1, 100.0 * partners / (p->members > 1 ? p->members - 1 : 1), all.rounds_asked,
        all.rounds_asked == 1 ? "" : "s", all.pairs_s);
    if (all.rounds_asked > 3 && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n,
                 "; --rounds 3: %.0f s of pairs, %d rounds: the ring neighbours' and 3 of the circle (%lld "
                 "pairs)",
                 three.pairs_s, three.rounds_asked, three.pairs_tested);
}

int allreduce_bw_estimate(const ga_estimate_in *in, ga_estimate_out *out)
{
    const ga_est_cluster *c = in->c;
    int argc;
    char **argv = ga_est_argv("allreduce_bw", in->args, &argc);
    if (!argv)
        return -1;
    est_ar_plan plan, whole;
    int rc = est_allreduce_bw(in->f, argc, argv, c->nodes, c->ranks_per_node, c->program_timeout_s, in->slow,
                              0, &plan, out->model, sizeof out->model);
    rc = rc ? rc
            : est_allreduce_bw(in->f, argc, argv, c->nodes, c->ranks_per_node, 0, in->slow, 0, &whole,
                               out->model, sizeof out->model);
    if (rc == 0) {
        out->run_s = plan.total_s;
        out->whole_s = whole.total_s;
        snprintf(out->cut, sizeof out->cut, "%s", plan.cut);
        ar_model_line(in->f, c, &plan, out->model, sizeof out->model);
        if (!in->slow)
            ar_pairs_note(in->f, c, argc, argv, &plan, out->note, sizeof out->note);
    }
    ga_est_argv_free(argv, argc);
    return rc;
}
