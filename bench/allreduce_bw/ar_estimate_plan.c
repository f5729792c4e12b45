/* allreduce_bw's plan on a virtual clock, for `gpuaccept run --dry-run` (ar_estimate.h): the program's own
 * option parser and budget rules (ar_opts.c, ar_budget.c), and the order of its phases as main.c, ar_world.c,
 * ar_node_run.c, ar_pairs_run.c, ar_bench.c and ar_gate.c run them, each operation timed by the alpha-beta
 * model (est_op_s, ga_estimate.h). What the model leaves out: noise (every healthy group measures alike, so
 * nothing healthy is flagged or measured again), and the time a rank takes to print. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_budget.h"
#include "ar_coll.h"
#include "ar_opts.h"
#include "ga_pairs.h" /* the pairs schedule */
#include "ar_record.h"
#include "ar_sweep.h"
#include "ar_estimate.h"
#include "ga_cli.h"

/* The groups that sweep at once, of one kind: the healthy ones, or the one whose links cross the slow node.
 */
typedef struct {
    int count;
    bool slow;
    bool one_op, judged; /* the gate's answers for it */
    int far_count;       /* far below at sizes from the judging size on */
    int far_seen;        /* far below at any size: twice makes it one operation per size */
} kind_state;

/* The figures earlier sweeps of a gate left at one size (their peers in later rounds). */
typedef struct {
    long long healthy, slow; /* groups over every round: 99,999 rounds of 50,000 pairs outgrow an int */
    double healthy_fig, slow_fig;
} size_history;

/* One sweep of groups at once (ar_bench_sweep with its gate). */
typedef struct {
    const ga_est_figures *f;
    const ar_opts *o;
    ar_dtype type;
    ar_op op;
    int ranks, nodes, world;   /* each group's communicator; the world (the gate's allgather) */
    kind_state kind[2];        /* [0] healthy, [1] through the slow node */
    bool gated, cut_on_judged; /* ar_group_gate */
    int judge_from;
    bool per_size_gather; /* world: every size's samples to rank 0 and printed */
    double deadline;      /* the sweep's, shared out over its sizes; 0: none */
    double gate_deadline; /* the gate's (the screen's gate has none) */
    int warmup, iters, check;
    bool first_is_figure; /* the answer is known (a slow fabric): each size's first operation is its figure */
    size_history *hist;   /* AR_MAX_SIZES entries, kept across the sweeps of one gate; NULL without a gate */
    uint64_t max_bytes;   /* the largest size: the device check poisons the whole receive buffer */
} sweep_sim;

typedef struct {
    int n_run, stopped_at, unchecked;
    bool stopped_late, late, slow_judged;
    double last_fig[2]; /* busbw of each kind at the last size run */
} sweep_out;

/* Where the plan is: the virtual clock and what it has cut. */
typedef struct {
    const ga_est_figures *f;
    const ar_opts *o;
    ar_dtype type; /* the first combination's (node and pairs run it alone) */
    ar_op op;
    const uint64_t *sizes;
    int n_sizes, nodes, rpn, world, members;
    bool by_rank, slow, fabric_slow;
    double now, deadline, run_timeout;
    char cut[512];
    int rounds_asked, rounds_run;
    /* the time the pairs had when they started (0: no limit), and their slowest round */
    double pairs_share_s, round_s;
    long long pairs_tested, ring_tested;
    double pair_fig[2]; /* busbw of a healthy pair and of the slow one at the rounds' last size */
} ar_sim;

/* What the plan cut, as the program's not_covered says it; several joined by "; ". */
static void note_cut(ar_sim *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_cut(ar_sim *a, const char *fmt, ...)
{
    size_t len = strlen(a->cut);
    if (len && len + 2 < sizeof a->cut)
        len += (size_t)snprintf(a->cut + len, sizeof a->cut - len, "; ");
    va_list ap;
    va_start(ap, fmt);
    if (len < sizeof a->cut)
        vsnprintf(a->cut + len, sizeof a->cut - len, fmt, ap);
    va_end(ap);
}

static double gather_s(const ga_est_figures *f, int ranks, size_t bytes_each)
{
    return ga_est_mpi_small_s(f, ranks) + (double)ranks * (double)bytes_each / (f->mpi_GBps * 1e9);
}

static double busbw_of(const sweep_sim *w, uint64_t size, double op_s)
{
    ar_counts c;
    ar_coll_counts(w->o->coll, size, w->type, w->ranks, &c);
    double alg = 0, bus = 0;
    ar_coll_bandwidth(w->o->coll, ar_coll_bytes(&c, w->type), op_s, w->ranks, &alg, &bus);
    return bus;
}

/* One check: the operation, then the fill and the compare. On the GPU path on the device (ar_check.cu): the
 * receive buffer poisoned, the input written, the output read, at the device check's rate, plus its launches
 * and the counter's copy; on the host path on one CPU core per rank. */
static double check_cost_s(const sweep_sim *w, uint64_t size, double op_s)
{
    if (w->f->gpu && w->f->dev_check_GBps > 0)
        return op_s + (double)(2 * size + w->max_bytes) / (w->f->dev_check_GBps * 1e9) + w->f->dev_check_s;
    double copies = w->f->gpu ? 2.0 * (double)size / (w->f->copy_GBps * 1e9) : 0;
    return op_s + (double)size * w->f->check_per_byte + copies;
}

/* One size and placement of a group of kind k from now (ar_bench.c's measure, fit_size and plan_size):
 * its duration; *late when its share of the deadline was gone, *unchecked when the check was skipped. */
static double sim_measure(const sweep_sim *w, const kind_state *k, int s, int pl, int n_sizes, uint64_t size,
                          double op, double now, bool *late, bool *unchecked)
{
    const ar_opts *o = w->o;
    int agg = o->agg_iters > 0 ? o->agg_iters : 1;
    double small = ga_est_mpi_small_s(w->f, w->ranks), first = op * agg, t = 0;
    bool checkable = w->check > 0 && !(ar_coll_get(o->coll)->reduces && ar_check_skip_reason(w->type, w->op));
    bool fitted = (w->deadline > 0 || o->timeout_s > 0) && w->warmup > 0 && !o->per_iter;
    int warm = w->warmup, iters = w->iters;
    bool skip = false;
    *late = false;
    if (fitted) {
        t += small + first + small; /* the barrier, the first operation, the agreement */
        int left = (n_sizes - s) * AR_PLACEMENTS - pl;
        double share = w->deadline > 0 ? (w->deadline - (now + t)) / (left > 0 ? left : 1) : INFINITY;
        double check_s = checkable ? first * w->check : 0;
        double loop = o->timeout_s > 0 ? 0.25 * o->timeout_s : INFINITY;
        *late = share <= 0;
        warm = w->warmup - 1;
        if (*late || share < first + check_s) {
            warm = iters = 0;
            skip = checkable && (*late || share < first);
        } else {
            double avail = isinf(share) ? loop : 0.8 * (share - check_s);
            avail = avail < loop ? avail : loop;
            warm = ar_budget_warmups(first, avail, w->warmup);
            iters = ar_budget_iters(first, avail, w->iters);
        }
        if (k->one_op || w->first_is_figure) {
            warm = iters = 0;
            skip = checkable && k->judged; /* a judged group is not checked at every size */
        }
    }
    t += warm * first;
    if (iters > 0)
        t += small + iters * first;
    if (checkable && !skip)
        t += w->check * check_cost_s(w, size, op);
    *unchecked = checkable && skip;
    return t;
}

/* The median of a two-valued multiset: a copies of x, b of y. */
static double median2(double x, long long a, double y, long long b)
{
    double lo = x < y ? x : y, hi = x < y ? y : x;
    long long n_lo = x < y ? a : b, n = a + b;
    if (n <= 0)
        return 0;
    if (n % 2)
        return n / 2 < n_lo ? lo : hi;
    double m1 = n / 2 - 1 < n_lo ? lo : hi, m2 = n / 2 < n_lo ? lo : hi;
    return 0.5 * (m1 + m2);
}

/* ar_gate.c's after_size for the slow kind: far below the median of its peers (this sweep's healthy groups
 * and the earlier sweeps' figures at this size). */
static bool slow_far(const sweep_sim *w, int s, const double fig[2])
{
    const size_history *h = &w->hist[s];
    long long healthy = w->kind[0].count + h->healthy;
    double peers_healthy = w->kind[0].count ? fig[0] : h->healthy_fig;
    double med = median2(peers_healthy, healthy, h->slow_fig, h->slow);
    return fig[1] > 0 && fig[1] * AR_FAR_FACTOR < med;
}

/* The gate after size s: returns whether the sweep stops; the slow kind's judgement on the way. */
static bool sim_gate(sweep_sim *w, int s, int n_sizes, const uint64_t *sizes, const double fig[2],
                     const double end[2], const double per_op[2], sweep_out *r)
{
    bool late = false;
    for (int k = 0; k < 2; k++) {
        if (!w->kind[k].count)
            continue;
        double next = s + 1 < n_sizes ? per_op[k] * (double)sizes[s + 1] / (double)(sizes[s] ? sizes[s] : 1) *
                                            AR_PLACEMENTS
                                      : 0;
        late = late || (w->gate_deadline > 0 && end[k] + next > w->gate_deadline);
    }
    kind_state *sk = &w->kind[1];
    if (sk->count && slow_far(w, s, fig)) {
        if (++sk->far_seen >= AR_FAR_TIMES)
            sk->one_op = true;
        if (s >= w->judge_from && ++sk->far_count >= AR_FAR_TIMES)
            sk->judged = true;
    }
    size_history *h = &w->hist[s];
    if (w->kind[0].count)
        h->healthy += w->kind[0].count, h->healthy_fig = fig[0];
    if (sk->count)
        h->slow += sk->count, h->slow_fig = fig[1];
    bool stop = late || (w->cut_on_judged && sk->judged) || s == n_sizes - 1;
    if (stop && r->stopped_at < 0 && s < n_sizes - 1) {
        r->stopped_at = s;
        r->stopped_late = late;
    }
    r->slow_judged = sk->judged;
    return stop;
}

/* Before size s of a sweep with a deadline and no gate (ar_bench.c's size_fits). */
static bool sim_size_fits(const sweep_sim *w, int s, const uint64_t *sizes, double prev_per_op, double *now)
{
    if (w->deadline <= 0 || w->gated || s == 0)
        return true;
    *now += ga_est_mpi_small_s(w->f, w->ranks);
    double est = prev_per_op * (double)sizes[s] / (double)(sizes[s - 1] ? sizes[s - 1] : 1) * AR_PLACEMENTS;
    return *now + est <= w->deadline;
}

/* The sweep from now; returns when it ends (every group, the gate's last exchange included). */
static double sim_sweep(sweep_sim *w, const uint64_t *sizes, int n_sizes, double now, sweep_out *r)
{
    memset(r, 0, sizeof *r);
    r->stopped_at = -1;
    double prev = 0;
    bool stop = false;
    for (int s = 0; s < n_sizes && !stop; s++) {
        if (!sim_size_fits(w, s, sizes, prev, &now))
            break;
        double fig[2] = {0, 0}, end[2] = {now, now}, per_op[2] = {0, 0}, t_end = now;
        for (int k = 0; k < 2; k++) {
            if (!w->kind[k].count)
                continue;
            double op = est_op_s(w->f, w->o->coll, w->type, sizes[s], w->ranks, w->nodes, w->kind[k].slow);
            for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
                bool late, unchecked;
                end[k] +=
                    sim_measure(w, &w->kind[k], s, pl, n_sizes, sizes[s], op, end[k], &late, &unchecked);
                r->late = r->late || late;
                r->unchecked += unchecked;
            }
            fig[k] = busbw_of(w, sizes[s], op);
            per_op[k] = op;
            t_end = end[k] > t_end ? end[k] : t_end;
        }
        now = t_end;
        r->n_run = s + 1;
        r->last_fig[0] = fig[0], r->last_fig[1] = fig[1];
        if (w->per_size_gather)
            now += gather_s(w->f, w->ranks, sizeof(ar_sample));
        if (w->gated) {
            now += gather_s(w->f, w->world, 3 * sizeof(double));
            stop = sim_gate(w, s, n_sizes, sizes, fig, end, per_op, r);
        } else {
            stop = r->late;
        }
        prev = per_op[0] > per_op[1] ? per_op[0] : per_op[1];
    }
    return now;
}

static sweep_sim sweep_of(const ar_sim *a, int ranks, int nodes, double deadline)
{
    sweep_sim w = {.f = a->f,
                   .o = a->o,
                   .type = a->type,
                   .op = a->op,
                   .ranks = ranks,
                   .nodes = nodes,
                   .world = a->world};
    w.deadline = w.gate_deadline = deadline;
    w.warmup = a->o->warmup, w.iters = a->o->iters, w.check = a->o->check;
    w.max_bytes = a->n_sizes > 0 ? a->sizes[a->n_sizes - 1] : 0;
    return w;
}

/* A communicator of ranks ranks: NCCL's init on the GPU path (the host path's MPI needs none). */
static double comm_open_s(const ga_est_figures *f, int ranks)
{
    return f->comm_init_s + f->comm_init_per_rank * ranks;
}

static double split_s(const ga_est_figures *f, int ranks)
{
    return f->split_s + f->split_per_rank * ranks;
}

static double record_gather_s(const ar_sim *a)
{
    return gather_s(a->f, a->world, sizeof(ar_record));
}

/* --min-busbw: the world's largest size measured again while below the floor (ar_world.c). */
static void sim_world_remeasure(ar_sim *a, sweep_sim *w, double fig)
{
    const ar_opts *o = a->o;
    if (o->min_busbw <= 0 || o->remeasure <= 0)
        return;
    sweep_sim one = *w;
    one.deadline = 0, one.per_size_gather = false;
    const uint64_t *largest = &a->sizes[a->n_sizes - 1];
    int far = 0;
    for (int pass = 0; pass < o->remeasure; pass++) {
        far += ar_far_below_floor(fig, o->min_busbw);
        a->now += ga_est_mpi_small_s(a->f, a->world);
        bool late = a->deadline > 0 && a->now > a->deadline;
        if (fig >= o->min_busbw || far >= AR_FAR_TIMES || late)
            return;
        sweep_out r;
        a->now = sim_sweep(&one, largest, 1, a->now, &r) + gather_s(a->f, a->world, sizeof(ar_sample));
    }
}

static void sim_world(ar_sim *a)
{
    const ar_opts *o = a->o;
    int n = a->fabric_slow ? ar_judge_size_index(a->sizes, a->n_sizes) + 1 : a->n_sizes;
    a->now += comm_open_s(a->f, a->world) + gather_s(a->f, a->world, 64);
    sweep_sim w = sweep_of(a, a->world, a->nodes, a->deadline);
    w.kind[a->slow].count = 1;
    w.kind[a->slow].slow = a->slow;
    w.per_size_gather = true;
    w.first_is_figure = a->fabric_slow; /* its answer is known: one operation per size */
    int combos = 0;
    for (int t = 0; t < AR_NTYPES; t++)
        for (int p = 0; p < AR_NOPS; p++)
            combos +=
                (o->type_mask >> t & 1) && (o->op_mask >> p & 1) && (p == 0 || ar_coll_get(o->coll)->reduces);
    int cycles = o->cycles > 0 ? o->cycles : 1;
    bool stopped = false;
    for (int cycle = 0; cycle < cycles && !stopped; cycle++)
        for (int c = 0; c < combos && !stopped; c++) {
            w.warmup = cycle > 0 ? 0 : o->warmup;
            sweep_out r;
            a->now = sim_sweep(&w, a->sizes, n, a->now, &r);
            if (r.unchecked)
                note_cut(a, "world: %s %s: %d size%s not checked: out of time", ar_dtype_get(a->type)->name,
                         ar_op_name(a->op), r.unchecked, r.unchecked == 1 ? "" : "s");
            if (r.n_run < n) {
                stopped = true;
                note_cut(a, "world: %s %s sizes above %llu B not measured: out of time",
                         ar_dtype_get(a->type)->name, ar_op_name(a->op),
                         (unsigned long long)a->sizes[r.n_run > 0 ? r.n_run - 1 : 0]);
            }
            if (cycle == cycles - 1 && c == 0 && r.n_run == a->n_sizes)
                sim_world_remeasure(a, &w, r.last_fig[a->slow]);
            if (cycle == cycles - 1 || stopped)
                a->now += record_gather_s(a);
        }
    a->now += ga_est_mpi_small_s(a->f, a->world); /* -M's agreement */
}

static void sim_node(ar_sim *a)
{
    const ar_opts *o = a->o;
    a->now += split_s(a->f, a->world) + comm_open_s(a->f, a->rpn);
    sweep_sim w = sweep_of(a, a->rpn, 1, a->deadline);
    size_history hist[AR_MAX_SIZES] = {{0}};
    w.hist = hist;
    w.gated = true;
    w.judge_from = ar_judge_size_index(a->sizes, a->n_sizes);
    w.kind[0].count = a->nodes; /* a slow node's links are outside it: its own sweep is healthy */
    w.first_is_figure = a->fabric_slow && a->nodes == 1; /* one node: the world's communicator */
    sweep_out r;
    a->now = sim_sweep(&w, a->sizes, a->n_sizes, a->now, &r) + record_gather_s(a);
    if (r.stopped_at >= 0)
        note_cut(a, "node: sizes above %llu B not measured: out of time",
                 (unsigned long long)a->sizes[r.n_run - 1]);
    /* --min-node-busbw above what the model gives: every node measures the largest size again */
    for (int pass = 0; o->min_node_busbw > r.last_fig[0] && pass < o->remeasure; pass++) {
        a->now += ga_est_mpi_small_s(a->f, a->world);
        if (a->deadline > 0 && a->now > a->deadline)
            break;
        sweep_sim one = w;
        one.gated = false, one.hist = NULL;
        sweep_out r1;
        a->now = sim_sweep(&one, a->sizes + r.n_run - 1, 1, a->now, &r1) + record_gather_s(a);
    }
    a->now += ga_est_mpi_small_s(a->f, a->world);
}

/* One round of pairs (ar_pairs_run.c's run_pair_round) of the plan whose ring neighbours come before circle
 * round at (ga_pairs.h): *n_sizes shrinks to the size a cut stopped at. The slow member is the last; whether
 * it has a partner and how many pairs the round has take constant time: a plan of 100,000 ranks has as many
 * rounds (issue 45, item 6). */
static bool sim_round(ar_sim *a, sweep_sim *w, int at, int r, int *n_sizes)
{
    int np = ga_pairs_plan_count(a->members, at, r);
    bool slow_in = a->slow && ga_pairs_plan_partner(a->members, at, r, a->members - 1) >= 0;
    w->kind[0].count = np - slow_in;
    w->kind[1].count = slow_in;
    w->kind[0].one_op = w->kind[1].one_op = w->kind[1].judged = false;
    w->kind[0].far_count = w->kind[1].far_count = 0;
    w->kind[0].far_seen = w->kind[1].far_seen = 0;
    a->now += split_s(a->f, a->world) + comm_open_s(a->f, w->ranks);
    sweep_out out;
    a->now = sim_sweep(w, a->sizes, *n_sizes, a->now, &out) + record_gather_s(a);
    if (out.stopped_at >= 0)
        *n_sizes = out.stopped_at + 1;
    for (int k = 0; k < 2; k++)
        if (w->kind[k].count)
            a->pair_fig[k] = out.last_fig[k];
    a->pairs_tested += np;
    a->ring_tested += ga_pairs_plan_ring_count(a->members, at, r);
    return out.slow_judged;
}

/* The pairs that would make a finding measured again (remeasure_pairs): with one slow member, the pairs
 * through it when they are below the median pair by more than --tolerance (ga_pairs.c: the slow member is a
 * suspect in two such pairs, a single one is a slow link); those judged while a second one through it was
 * judged too are beyond doubt. */
static void sim_pairs_remeasure(ar_sim *a, sweep_sim *w, int slow_pairs, int judged, int n_sizes)
{
    long long healthy = a->pairs_tested - slow_pairs;
    double median = median2(a->pair_fig[0], healthy, a->pair_fig[1], slow_pairs);
    bool flagged = a->pairs_tested >= 2 && a->pair_fig[1] < median * (1.0 - a->o->tolerance);
    int again = !flagged ? 0 : judged >= 2 ? slow_pairs - judged : slow_pairs;
    for (int pass = 0; again > 0 && pass < a->o->remeasure; pass++) {
        a->now += ga_est_mpi_small_s(a->f, a->world);
        if (a->deadline > 0 && a->now > a->deadline) {
            note_cut(a, "pairs: the pairs that would make a finding were not measured again: out of time");
            return;
        }
        sweep_sim one = *w;
        one.gated = false, one.hist = NULL;
        one.kind[0].count = 0, one.kind[1].count = 1, one.kind[1].one_op = false;
        for (int b = 0; b < again; b++) { /* every such pair has the slow member: one per batch */
            sweep_out r;
            a->now += split_s(a->f, a->world) + comm_open_s(a->f, w->ranks);
            a->now = sim_sweep(&one, a->sizes + n_sizes - 1, 1, a->now, &r) + record_gather_s(a);
        }
    }
}

static void sim_pairs(ar_sim *a)
{
    int n_sizes = a->n_sizes;
    const uint64_t *all_sizes = a->sizes;
    if (a->fabric_slow && n_sizes > 1) { /* 1-16 MiB, one operation per size (ar_pairs_run.c) */
        int first;
        n_sizes = ar_isolation_sizes(a->sizes, n_sizes, &first);
        a->sizes += first;
    }
    sweep_sim w = sweep_of(a, a->by_rank ? 2 : 2 * a->rpn, a->by_rank ? 1 : 2, a->deadline);
    size_history hist[AR_MAX_SIZES] = {{0}};
    w.hist = hist;
    w.gated = w.cut_on_judged = true;
    w.first_is_figure = a->fabric_slow;
    w.judge_from = ar_judge_size_index(a->sizes, n_sizes);
    w.kind[1].slow = true;
    double slowest = 0;
    int slow_pairs = 0, judged = 0, r = 0;
    a->pairs_share_s = a->deadline > 0 ? a->deadline - a->now : 0;
    /* the ring neighbours' rounds first when not every round is asked for, else where the rounds left stop
     * fitting (ar_pairs_run.c's round_fits) */
    int circle = a->rounds_asked, extra = ga_pairs_neighbour_rounds(a->members);
    int at = extra > 0 && circle < ga_pairs_max_rounds(a->members) ? 0 : -1;
    for (; r < ga_pairs_plan_rounds(a->members, at, circle); r++) {
        a->now += ga_est_mpi_small_s(a->f, a->world);
        if (r > 0 && a->deadline > 0 && at < 0 && extra > 0 && r < circle &&
            a->now + slowest * (circle - r) > a->deadline)
            at = r;
        a->rounds_asked = ga_pairs_plan_rounds(a->members, at, circle);
        if (r > 0 && a->deadline > 0 && a->now + slowest > a->deadline)
            break;
        double t0 = a->now;
        judged += sim_round(a, &w, at, r, &n_sizes);
        slow_pairs += w.kind[1].count;
        slowest = a->now - t0 > slowest ? a->now - t0 : slowest;
    }
    a->rounds_run = r;
    a->round_s = slowest;
    if (r < a->rounds_asked)
        note_cut(a, "pairs: rounds %d-%d of %d not run: out of time", r + 1, a->rounds_asked,
                 a->rounds_asked);
    sim_pairs_remeasure(a, &w, slow_pairs, judged, n_sizes);
    a->now += ga_est_mpi_small_s(a->f, a->world);
    a->sizes = all_sizes;
}

/* The screen before the world sweep (ar_pairs_screen): two rounds of pairs at least (four pairs at least), at
 * the judging size, AR_SCREEN_OPS operations each on one placement; a member in two pairs far below the
 * others makes the fabric slow. */
static void sim_screen(ar_sim *a)
{
    if (a->members < 4)
        return;
    ar_opts one = *a->o;
    one.iters = 1, one.warmup = 1, one.check = 0;
    uint64_t twice[AR_SCREEN_OPS]; /* the screen's operations, one "size" each */
    for (int k = 0; k < AR_SCREEN_OPS; k++)
        twice[k] = a->sizes[ar_judge_size_index(a->sizes, a->n_sizes)];
    ar_sim s = *a;
    s.o = &one;
    int ppr = a->members / 2, rounds = (4 + ppr - 1) / ppr;
    rounds = rounds < 2 ? 2 : rounds;
    rounds = rounds > ga_pairs_max_rounds(a->members) ? ga_pairs_max_rounds(a->members) : rounds;
    int slow_pairs = 0;
    for (int r = 0; r < rounds; r++) {
        sweep_sim w = sweep_of(&s, a->by_rank ? 2 : 2 * a->rpn, a->by_rank ? 1 : 2, a->deadline);
        w.first_is_figure = true;
        w.gate_deadline = 0;
        w.gated = true;
        size_history hist[AR_MAX_SIZES] = {{0}};
        w.hist = hist;
        int np = ga_pairs_plan_count(a->members, -1, r);
        bool slow_in =
            a->slow && !a->by_rank && ga_pairs_plan_partner(a->members, -1, r, a->members - 1) >= 0;
        w.kind[0].count = np - slow_in;
        w.kind[1].count = slow_in, w.kind[1].slow = true;
        slow_pairs += slow_in;
        a->now += split_s(a->f, a->world) + comm_open_s(a->f, w.ranks);
        /* one placement: half of what the sweep of two placements takes */
        double t0 = a->now;
        sweep_out out;
        double end = sim_sweep(&w, twice, AR_SCREEN_OPS, a->now, &out);
        a->now = t0 + 0.5 * (end - t0) + record_gather_s(a);
    }
    a->fabric_slow = slow_pairs >= 2;
}

/* main.c's order: each pattern gets its share of what --timeout leaves, less the reserve. */
static void sim_patterns(ar_sim *a, est_ar_plan *out)
{
    const ar_opts *o = a->o;
    double run_end = a->run_timeout, reserve = run_end > 0 ? ar_budget_reserve(run_end - a->now) : 0;
    bool pairs_later = false;
    for (int i = 0; i < o->n_patterns; i++) {
        double left = run_end > 0 ? run_end - reserve - a->now : 0;
        a->deadline =
            run_end > 0 ? a->now + (left > 0 ? ar_budget_phase(o->patterns, o->n_patterns, i, left) : 0) : 0;
        for (int k = i + 1; k < o->n_patterns; k++)
            pairs_later = pairs_later || o->patterns[k] == AR_PATTERN_PAIRS;
        double t0 = a->now;
        if (o->patterns[i] == AR_PATTERN_WORLD && pairs_later) {
            sim_screen(a);
            out->screen_s += a->now - t0;
            t0 = a->now;
        }
        if (o->patterns[i] == AR_PATTERN_PAIRS) {
            sim_pairs(a);
            out->pairs_s += a->now - t0;
        } else if (o->patterns[i] == AR_PATTERN_NODE) {
            sim_node(a);
            out->node_s += a->now - t0;
        } else {
            sim_world(a);
            out->world_s += a->now - t0;
        }
    }
}

/* The first combination main.c's plan_combos makes: the node and pairs patterns run it alone. */
static void first_combo(const ar_opts *o, ar_dtype *type, ar_op *op)
{
    static const ar_op op_order[AR_NOPS] = {AR_SUM, AR_PROD, AR_MAX, AR_MIN, AR_AVG};
    *type = AR_FLOAT, *op = AR_SUM;
    for (int t = AR_NTYPES - 1; t >= 0; t--)
        if (o->type_mask >> t & 1)
            *type = (ar_dtype)t;
    for (int k = AR_NOPS - 1; k >= 0; k--)
        if (o->op_mask >> op_order[k] & 1)
            *op = op_order[k];
}

/* The options as allreduce_bw reads them; 0, or -1 with its message. */
static int parse_args(int argc, char **argv, bool gpu, ar_opts *o, ga_common_opts *common, uint64_t *sizes,
                      int *n_sizes, char *err, size_t errlen)
{
    const ga_program_spec spec = {
        .name = "allreduce_bw", .options = ar_options, .n_options = AR_N_OPTIONS, .on_option = ar_on_option};
    ar_opts_defaults(o);
    if (ga_cli_parse(&spec, argc, argv, common, o, false) != GA_CLI_RUN) {
        snprintf(err, errlen, "allreduce_bw would refuse its arguments (run it with them for the message)");
        return -1;
    }
    *n_sizes = ar_opts_finish(o, gpu, common->quick, sizes, err, errlen);
    return *n_sizes > 0 ? 0 : -1;
}

int est_allreduce_bw(const ga_est_figures *f, int argc, char **argv, int nodes, int ranks_per_node,
                     double timeout_s, bool slow, int rounds_override, est_ar_plan *out, char *err,
                     size_t errlen)
{
    ar_opts o;
    ga_common_opts common;
    uint64_t sizes[AR_MAX_SIZES];
    memset(out, 0, sizeof *out);
    if (parse_args(argc, argv, f->gpu, &o, &common, sizes, &out->n_sizes, err, errlen) != 0)
        return -1;
    if (rounds_override > 0)
        o.rounds = rounds_override;
    if (nodes < 1 || ranks_per_node < 1 || (long long)nodes * ranks_per_node > AR_EST_MAX_RANKS) {
        snprintf(err, errlen, "%d nodes of %d ranks: the estimate plans 1 to %d ranks", nodes, ranks_per_node,
                 AR_EST_MAX_RANKS);
        return -1;
    }
    ar_sim a = {
        .f = f, .o = &o, .sizes = sizes, .n_sizes = out->n_sizes, .nodes = nodes, .rpn = ranks_per_node};
    a.world = nodes * ranks_per_node;
    a.by_rank = nodes < 2;
    a.members = a.by_rank ? a.world : nodes;
    a.slow = slow && nodes >= 2; /* one node has no link of its own to be slow */
    a.run_timeout = common.timeout_given && timeout_s > 0 ? common.timeout_s : timeout_s;
    first_combo(&o, &a.type, &a.op);
    bool pairs = false;
    for (int i = 0; i < o.n_patterns; i++)
        pairs = pairs || o.patterns[i] == AR_PATTERN_PAIRS;
    if (pairs && a.members < 2) {
        snprintf(err, errlen, "--pattern pairs needs at least 2 nodes, or 2 ranks on one node");
        return -1;
    }
    if (pairs) {
        int max_rounds = ga_pairs_max_rounds(a.members);
        a.rounds_asked = o.rounds == AR_ROUNDS_ALL ? max_rounds : o.rounds > 0 ? o.rounds : 3;
        a.rounds_asked = a.rounds_asked > max_rounds ? max_rounds : a.rounds_asked;
    }
    /* the backend, the GPU, the split: a few small collectives */
    a.now = 3 * ga_est_mpi_small_s(f, a.world);
    sim_patterns(&a, out);
    a.now += f->report_s;
    out->total_s = a.now;
    out->rounds_asked = a.rounds_asked;
    out->rounds_run = a.rounds_run;
    out->pairs_share_s = a.pairs_share_s;
    out->round_s = a.round_s;
    out->pairs_tested = a.pairs_tested;
    out->ring_tested = a.ring_tested;
    out->members = a.members;
    out->by_rank = a.by_rank;
    out->pairs_total = (long long)a.members * (a.members - 1) / 2;
    snprintf(out->cut, sizeof out->cut, "%s", a.cut);
    out->timeout_s = a.run_timeout;
    return 0;
}
