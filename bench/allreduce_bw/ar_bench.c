#include "ar_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ar_budget.h"
#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_runtime.h"
#include "ga_stats.h"
#include "ga_testhook.h"
#include "ga_time.h"

static const char *const placement_names[AR_PLACEMENTS] = {"out-of-place", "in-place"};

size_t ar_bench_max_bytes(const ar_sweep_cfg *cfg, int nranks)
{
    size_t max = 0;
    for (int i = 0; i < cfg->n_sizes; i++) {
        ar_counts c;
        ar_coll_counts(cfg->coll, cfg->sizes[i], cfg->type, nranks, &c);
        size_t bytes = ar_coll_bytes(&c, cfg->type);
        if (bytes > max)
            max = bytes;
    }
    return max;
}

/* Test hooks (ga_testhook.h), so that end-to-end tests can prove the check and the pairs analysis fail when
 * they should: GPUACCEPT_TEST_WRONG_RANK=r corrupts one output element on world rank r before it is checked;
 * GPUACCEPT_TEST_DELAY_RANK=r and GPUACCEPT_TEST_DELAY_US=us make rank r late by us per operation it takes
 * part in, timed or not (a slow node: every transfer through it is slow). Documented in docs/allreduce_bw.md.
 */
static void test_delay(int iters)
{
    static int rank = -2, us = 0;
    if (rank == -2) {
        rank = (int)ga_test_int("DELAY_RANK", -1);
        us = (int)ga_test_int("DELAY_US", 0);
    }
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (rank != me || us <= 0)
        return;
    double total_us = (double)us * iters;
    struct timespec ts = {(time_t)(total_us / 1e6),
                          (long)((total_us - (double)(time_t)(total_us / 1e6) * 1e6) * 1e3)};
    nanosleep(&ts, NULL);
}

/* GPUACCEPT_TEST_SLOW_RANK=r with GPUACCEPT_TEST_SLOW_FACTOR=F (ga_testhook): world rank r's transfers take F
 * times as long, as through a link F times slower, whatever the host's load: before each run of operations it
 * waits (F - 1) times what its recent runs took, scaled to this call's bytes, so the others wait for it in
 * the collective. For the tests of issue 24 (a node 60x slower); never set in production. */
static struct {
    int rank;
    double factor;
    double s_per_byte[8]; /* the slow rank's own last runs, its wait excluded */
    int n;
} slow = {.rank = -2, .factor = 1};

/* The median of the last runs: it follows the host's load as the other ranks' runs do (the least of them, a
 * quiet moment, made the rank only 4x slower than its peers on a host at load 10), and one burst of
 * contention moves it little. Seeded by ar_bench_slow_hook_calibrate. */
static double slow_estimate(void)
{
    if (slow.n == 0)
        return 1e-9; /* not calibrated: 1 ns per byte, a host's memory copy */
    double last[8];
    int m = slow.n < 8 ? slow.n : 8;
    memcpy(last, slow.s_per_byte, (size_t)m * sizeof *last);
    return ga_median(last, (size_t)m);
}

static double slow_wait(const ar_call *call, int ops)
{
    if (slow.rank == -2) { /* read once, by the one reader every program shares (ga_testhook) */
        int me;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        slow.factor = ga_test_slow_factor(me);
        slow.rank = slow.factor > 1 ? me : -1;
    }
    if (slow.rank < 0 || slow_estimate() <= 0)
        return 0;
    double s = (slow.factor - 1) * slow_estimate() * (double)ar_coll_bytes(&call->counts, call->type) * ops;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
    return s;
}

void ar_bench_slow_hook_calibrate(MPI_Comm world)
{
    int set = ga_test_int("SLOW_RANK", -1) >= 0, any = 0;
    ga_deadline_arm("agreeing on the test hooks");
    GA_MPI_CHECK(MPI_Allreduce(&set, &any, 1, MPI_INT, MPI_MAX, world)); /* every rank enters alike */
    ga_deadline_disarm();
    if (!any)
        return;
    enum { COUNT = 1 << 18, RUNS = 3 }; /* 1 MiB of floats: the size the screen and the judging use */
    float *in = calloc(COUNT, sizeof *in), *out = calloc(COUNT, sizeof *out);
    if (!in || !out)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory calibrating the slow-rank test hook");
    double per_byte[RUNS];
    ga_deadline_arm("calibrating the slow-rank test hook");
    for (int i = 0; i < RUNS; i++) {
        GA_MPI_CHECK(MPI_Barrier(world));
        double t0 = ga_now();
        GA_MPI_CHECK(MPI_Allreduce(in, out, COUNT, MPI_FLOAT, MPI_SUM, world));
        per_byte[i] = (ga_now() - t0) / ((double)COUNT * sizeof *in);
    }
    ga_deadline_disarm();
    free(in);
    free(out);
    slow.s_per_byte[0] = ga_median(per_byte, RUNS);
    slow.n = 1;
}

/* Runs ops operations with the test hooks around them (both do nothing unless set). */
static void run_ops(ar_backend *b, const ar_call *call, int ops, const char *what)
{
    test_delay(ops);
    double waited = slow_wait(call, ops), t0 = ga_now();
    b->run(b, call, ops, what);
    double bytes = (double)ar_coll_bytes(&call->counts, call->type) * ops;
    if (slow.rank >= 0 && bytes > 0)
        slow.s_per_byte[slow.n++ % 8] = (ga_now() - t0) / bytes;
    (void)waited;
}

static void test_corrupt(ar_backend *b, const ar_call *call, void *out)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (!ga_test_names_rank("WRONG_RANK", me) || call->counts.recv_count == 0)
        return;
    if (b->count_wrong)
        b->corrupt_first(b, call);
    else
        ar_store(call->type, out, 0, ar_load(call->type, out, 0) + 5);
}

static void barrier(ar_backend *b, const char *what)
{
    ga_deadline_arm("barrier before %s", what);
    GA_MPI_CHECK(MPI_Barrier(b->comm));
    ga_deadline_disarm();
}

/* The timed loop; returns the time per operation. The common case (no -z, no -I) is one run of every
 * operation and one wait, as nccl-tests enqueues them. With -z or -I each iteration of agg_iters operations
 * is waited for: -z 1 adds a barrier after each operation, -z 3 one after each iteration that is left out of
 * the time; -I records each iteration's time per operation in iter_times (the host clock: the GPU path waits
 * for each iteration). */
static double timed_loop(ar_backend *b, const ar_sweep_cfg *cfg, const ar_call *call, const char *what,
                         double *iter_times)
{
    int agg = cfg->agg_iters > 0 ? cfg->agg_iters : 1;
    double ops = (double)cfg->iters * agg;
    if (b->graph_capture) {
        /* -G (never with -z or -I, ar_opts_finish): as nccl-tests, the capture is not timed; after a barrier
         * the graph's launches are, and the time is per operation of one launch. */
        b->graph_capture(b, call, cfg->iters * agg, what);
        barrier(b, what);
        double t0 = ga_now();
        test_delay(cfg->iters);
        b->graph_launch(b, b->graph_launches, what);
        return (ga_now() - t0) / (ops * b->graph_launches);
    }
    if (cfg->blocking == 0 && !iter_times) {
        double t0 = ga_now();
        run_ops(b, call, cfg->iters * agg, what);
        return (ga_now() - t0) / ops;
    }
    double t0 = ga_now(), excluded = 0;
    for (int i = 0; i < cfg->iters; i++) {
        double ti = ga_now();
        if (cfg->blocking == 1)
            for (int k = 0; k < agg; k++) {
                run_ops(b, call, 1, what);
                barrier(b, what);
            }
        else
            run_ops(b, call, agg, what);
        double tend = ga_now();
        if (iter_times)
            iter_times[i] = (tend - ti) / agg;
        if (cfg->blocking == 3) {
            barrier(b, what);
            excluded += ga_now() - tend;
        }
    }
    return (ga_now() - t0 - excluded) / ops;
}

/* Runs the call `check` times on fresh inputs; the wrong elements of the first run with any, or 0. Every
 * rank runs every check whatever it found: a rank that stopped at its own wrong count would leave the others
 * waiting in a collective it never issues. */
static int64_t check(ar_backend *b, const ar_sweep_cfg *cfg, const ar_call *call, int size_index, void *in,
                     void *out, const char *what)
{
    ar_pattern p = {cfg->type, cfg->op, b->nranks, cfg->root, 0, call->counts};
    int64_t wrong = 0;
    for (int k = 0; k < cfg->check; k++) {
        p.seed = (uint32_t)(size_index * 7 + call->in_place * 3 + k);
        if (b->fill_input) { /* the device check: no copies, no host loop */
            b->fill_input(b, call, &p);
        } else {
            ar_fill_input(cfg->coll, &p, b->rank, in);
            b->put_input(b, call, in);
        }
        if (b->graph_capture) { /* nccl-tests checks what a graph of one operation leaves */
            b->graph_capture(b, call, 1, what);
            b->graph_launch(b, 1, what);
        } else {
            run_ops(b, call, 1, what);
        }
        int64_t w;
        if (b->count_wrong) {
            test_corrupt(b, call, NULL);
            w = b->count_wrong(b, call, &p, what);
        } else {
            b->get_output(b, call, out);
            test_corrupt(b, call, out);
            w = ar_count_wrong(cfg->coll, &p, b->rank, out);
        }
        if (wrong == 0)
            wrong = w;
    }
    return wrong;
}

/* What one size and placement does after its first (timed) operation. */
typedef struct {
    int warm, iters; /* further warm-ups; timed iterations (0: the first operation is the figure) */
    bool skip_check; /* no time left for the check */
    bool late;       /* the sweep's deadline has passed: this size is its last */
} size_plan;

/* The whole share of the sweep's time left that size s, placement pl may take: the deadline spread over the
 * sizes and placements still to run. Infinity without a deadline; 0 or less once it has passed. */
static double size_share(const ar_sweep_cfg *cfg, int s, int pl)
{
    if (cfg->deadline <= 0)
        return INFINITY;
    int left = (cfg->n_sizes - s) * AR_PLACEMENTS - pl;
    return (cfg->deadline - ga_now()) / (left > 0 ? left : 1);
}

/* For a timeout's message (ga_progress): where the sweep is, the rate, and what it would still need at -w, -n
 * and -c (an operation of a larger size taking proportionally longer). */
static void note_progress(const ar_sweep_cfg *cfg, int s, double first_s)
{
    double more = 0;
    for (int k = s; k < cfg->n_sizes; k++)
        more += first_s * (double)cfg->sizes[k] / (double)(cfg->sizes[s] ? cfg->sizes[s] : 1) *
                (cfg->warmup + cfg->iters + cfg->check) * AR_PLACEMENTS;
    ga_progress(
        "%s at %llu B, size %d of %d: one operation took %.3f s; the sweep needed about %.0f s more at "
        "-n %d",
        cfg->label, (unsigned long long)cfg->sizes[s], s + 1, cfg->n_sizes, first_s, more, cfg->iters);
}

/* The plan of a size once its first operation took first_s (agreed) with share seconds left for it (agreed):
 * the check first (correctness is not traded for iterations), then the warm-ups and the timed iterations in
 * what is left, each timed loop within a quarter of -T, being one wait. Without time even for one more
 * operation the first one is the figure; without time for the check either, the check is skipped. */
static size_plan plan_size(const ar_sweep_cfg *cfg, double first_s, double share, bool checkable)
{
    size_plan p = {cfg->warmup - 1, cfg->iters, false, share <= 0};
    double check_s = checkable ? first_s * cfg->check : 0;
    double loop = cfg->wait_bound > 0 ? 0.25 * cfg->wait_bound : INFINITY;
    if (p.late || share < first_s + check_s) {
        p.warm = 0;
        p.iters = 0;
        p.skip_check = checkable && (p.late || share < first_s);
        return p;
    }
    double avail = isinf(share) ? loop : 0.8 * (share - check_s);
    avail = avail < loop ? avail : loop;
    p.warm = ar_budget_warmups(first_s, avail, cfg->warmup);
    p.iters = ar_budget_iters(first_s, avail, cfg->iters);
    return p;
}

/* How long this rank's thread waited for a CPU over a timed section, as a share of it (-1 unknown). */
typedef struct {
    double wall, waited;
} cpu_wait_span;

static cpu_wait_span cpu_wait_begin(void)
{
    cpu_wait_span sp = {ga_now(), ga_run_queue_wait_now()};
    return sp;
}

static double cpu_wait_end(const cpu_wait_span *sp)
{
    double waited = ga_run_queue_wait_now(), wall = ga_now() - sp->wall;
    if (sp->waited < 0 || waited < 0 || wall <= 0)
        return -1;
    double share = (waited - sp->waited) / wall;
    return share < 0 ? 0 : share > 1 ? 1 : share;
}

/* The first warm-up operation, timed after a barrier; the communicator agrees on the slowest rank's time and
 * the smallest share of time left (every rank plans alike). Returns the plan; *first_s the agreed time. */
static size_plan fit_size(ar_backend *b, const ar_sweep_cfg *cfg, const ar_call *call, int s, int pl,
                          const char *what, bool checkable, double *first_s, double *first_wait)
{
    barrier(b, what);
    int agg = cfg->agg_iters > 0 ? cfg->agg_iters : 1;
    cpu_wait_span span = cpu_wait_begin();
    double t0 = ga_now();
    run_ops(b, call, 1, what);
    double first = ga_now() - t0;
    *first_wait = cpu_wait_end(&span); /* after the clock is read: /proc is not the operation's time */
    double share = size_share(cfg, s, pl);
    double v[2] = {first * agg, isinf(share) ? -1e300 : -share};
    ga_deadline_arm("agreeing on the iterations of %s", what);
    GA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, b->comm));
    ga_deadline_disarm();
    *first_s = v[0];
    note_progress(cfg, s, v[0]);
    size_plan p = plan_size(cfg, v[0], v[1] <= -1e299 ? INFINITY : -v[1], checkable);
    if (p.iters < cfg->iters && b->rank == 0)
        ga_debug("COMM", "%s: one operation takes %.3f s: %d timed iterations fit its share", what, v[0],
                 p.iters);
    return p;
}

/* One size and placement: warm-up, the timed loop, the check. gated: what the gate said after the sizes
 * before (AR_GATE_ONE_OP: the first operation is the figure; AR_GATE_JUDGED: no check). Returns true when the
 * sweep is out of time. */
static bool measure(ar_backend *b, const ar_sweep_cfg *cfg, int s, int pl, int gated, void *in, void *out,
                    double *iter_times, ar_sample *smp, int *unchecked)
{
    ar_call call = {cfg->coll, cfg->type, cfg->op, cfg->root, {0}, pl == 1, cfg->agg_iters};
    ar_coll_counts(cfg->coll, cfg->sizes[s], cfg->type, b->nranks, &call.counts);
    char what[200];
    snprintf(what, sizeof what, "%s %s %s %llu B %s (%s, rank %d of %d)", ar_coll_get(cfg->coll)->name,
             ar_dtype_get(cfg->type)->name, ar_op_name(cfg->op), (unsigned long long)cfg->sizes[s],
             placement_names[pl], cfg->label, b->rank, b->nranks);
    ga_phase("%s", what);
    bool checkable = cfg->check > 0 && (!call.in_place || b->inplace_checkable(cfg->coll)) &&
                     !(ar_coll_get(cfg->coll)->reduces && ar_check_skip_reason(cfg->type, cfg->op));

    /* Mapping a size's buffers is local work, not a wait on the others: the ranks meet after it under a bound
     * of its own, so that the next wait (bounded by -T) does not count one rank's page faults against it. */
    if (b->prepare && b->prepare(b, ar_coll_bytes(&call.counts, cfg->type))) {
        ga_deadline_arm_for(cfg->wait_bound > 30 ? cfg->wait_bound : 30, "mapping the buffers of %s", what);
        GA_MPI_CHECK(MPI_Barrier(b->comm));
        ga_deadline_disarm();
    }
    bool fitted = (cfg->deadline > 0 || cfg->wait_bound > 0) && cfg->warmup > 0 && !cfg->per_iter;
    size_plan p = {cfg->warmup, cfg->iters, false, false};
    double first_s = 0, first_wait = -1;
    if (fitted) {
        p = fit_size(b, cfg, &call, s, pl, what, checkable, &first_s, &first_wait);
        /* far below its peers (the gate) or known slow: one operation is the figure; a group judged (far
         * twice) is not checked at every size either (it fails anyway; the report says what was not checked)
         */
        if ((gated & AR_GATE_ONE_OP) || cfg->first_is_figure)
            p.warm = 0, p.iters = 0, p.skip_check = checkable && (gated & AR_GATE_JUDGED);
    }
    /* at least one untimed operation per size and placement (the first, timed for the plan, or a warm-up), as
     * nccl-tests' BenchTime runs one even with -w 0 */
    if (p.warm > 0 || !fitted)
        run_ops(b, &call, p.warm > 0 ? p.warm : 1, what);
    if (p.iters > 0) {
        barrier(b, what);
        ar_sweep_cfg run = *cfg;
        run.iters = p.iters;
        cpu_wait_span span = cpu_wait_begin();
        smp->time_s[pl] = timed_loop(b, &run, &call, what, iter_times);
        smp->cpu_wait[pl] = cpu_wait_end(&span);
    } else {
        smp->time_s[pl] = first_s / (cfg->agg_iters > 0 ? cfg->agg_iters : 1); /* the first is the figure */
        smp->cpu_wait[pl] = first_wait;
    }
    smp->iters[pl] = p.iters > 0 ? p.iters : 1;
    smp->warmups[pl] = p.warm + (fitted && p.iters > 0 ? 1 : 0);

    smp->wrong[pl] = -1;
    if (checkable && !p.skip_check)
        smp->wrong[pl] = check(b, cfg, &call, s, in, out, what);
    *unchecked += checkable && p.skip_check;
    return p.late;
}

/* Before size s of a sweep with a deadline and no gate: whether it can still start, from the last size's
 * first operation scaled to this size (one operation per placement at least). Agreed over the communicator.
 */
static bool size_fits(ar_backend *b, const ar_sweep_cfg *cfg, int s, const ar_sample *prev)
{
    if (cfg->deadline <= 0 || cfg->gate || s == 0)
        return true;
    double per_op = prev->time_s[0] > prev->time_s[1] ? prev->time_s[0] : prev->time_s[1];
    double est =
        per_op * (double)cfg->sizes[s] / (double)(cfg->sizes[s - 1] ? cfg->sizes[s - 1] : 1) * AR_PLACEMENTS;
    int late = ga_now() + est > cfg->deadline;
    ga_deadline_arm("agreeing whether %llu B fits the time left (%s)", (unsigned long long)cfg->sizes[s],
                    cfg->label);
    GA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &late, 1, MPI_INT, MPI_MAX, b->comm));
    ga_deadline_disarm();
    return !late;
}

void ar_bench_sweep(ar_backend *b, const ar_sweep_cfg *cfg, ar_record *rec, ar_size_done_fn on_size,
                    void *user)
{
    size_t max_bytes = ar_bench_max_bytes(cfg, b->nranks);
    void *in = malloc(max_bytes ? max_bytes : 1), *out = malloc(max_bytes ? max_bytes : 1);
    ar_sample *all = NULL;
    if (on_size && b->rank == 0)
        all = malloc((size_t)b->nranks * sizeof *all);
    /* -I: this rank's iteration times of both placements, and rank 0's copy of every rank's */
    size_t n_iter = cfg->per_iter ? (size_t)cfg->iters * AR_PLACEMENTS : 0;
    double *iters_mine = n_iter ? malloc(n_iter * sizeof(double)) : NULL;
    double *iters_all =
        n_iter && on_size && b->rank == 0 ? malloc(n_iter * (size_t)b->nranks * sizeof(double)) : NULL;
    if (!in || !out || (on_size && b->rank == 0 && !all) || (n_iter && !iters_mine) ||
        (n_iter && on_size && b->rank == 0 && !iters_all))
        GA_FATAL(GA_EXIT_ENV, "cannot allocate the check buffers (2 x %zu bytes)", max_bytes);

    rec->n_sizes = 0;
    rec->group_size = b->nranks;
    rec->iters = cfg->iters;
    int gated = 0;
    bool stop = false;
    for (int s = 0; s < cfg->n_sizes && !stop; s++) {
        ar_sample *smp = &rec->samples[s];
        if (!size_fits(b, cfg, s, s > 0 ? &rec->samples[s - 1] : NULL))
            break;
        for (int pl = 0; pl < (cfg->out_of_place_only ? 1 : AR_PLACEMENTS); pl++)
            stop |= measure(b, cfg, s, pl, gated, in, out,
                            n_iter ? iters_mine + (size_t)pl * cfg->iters : NULL, smp, &rec->unchecked);
        rec->n_sizes = s + 1;
        rec->iters = smp->iters[0];
        if (on_size) {
            ga_deadline_arm("gathering the times of %llu B (%s)", (unsigned long long)cfg->sizes[s],
                            cfg->label);
            GA_MPI_CHECK(MPI_Gather(smp, sizeof *smp, MPI_BYTE, all, sizeof *smp, MPI_BYTE, 0, b->comm));
            if (n_iter)
                GA_MPI_CHECK(MPI_Gather(iters_mine, (int)n_iter, MPI_DOUBLE, iters_all, (int)n_iter,
                                        MPI_DOUBLE, 0, b->comm));
            ga_deadline_disarm();
            if (b->rank == 0)
                on_size(user, s, all, iters_all, b->nranks);
        }
        if (cfg->gate) {
            int g = cfg->gate->after_size(cfg->gate, s, smp);
            gated |= g & (AR_GATE_ONE_OP | AR_GATE_JUDGED);
            stop = (g & AR_GATE_STOP) != 0; /* the gate decides for every group at once, time included */
        }
    }
    free(iters_mine);
    free(iters_all);
    free(all);
    free(in);
    free(out);
}

void ar_bench_sit_out(const ar_sweep_cfg *cfg)
{
    for (int s = 0; s < cfg->n_sizes; s++)
        if (cfg->gate->after_size(cfg->gate, s, NULL) & AR_GATE_STOP)
            return;
}
