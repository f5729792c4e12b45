/* allreduce_bw --pattern world: one sweep per combination over every rank (or each NCCL_TESTS_SPLIT_MASK
 * communicator), printed as nccl-tests prints it, the floor measured again before it fails. */
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
#include "ga_time.h"
#include "ar_budget.h"
#if GA_HAVE_CUDA
#include <nccl.h>
#endif

typedef struct {
    ar_sweep_desc desc;
    const char *hosts; /* world_size * GA_HOST_MAX, rank 0 only */
    ar_figures fig;
    nt_state *nt;
    const split_plan *split;
    int world_size;
} live_table;

/* -I: each placement's per-iteration rows (rank-major) and their max over ranks, from the gathered times. */
static int iter_summaries(const nt_state *nt, const double *iter_times, int n, ar_nt_iter it[AR_PLACEMENTS],
                          double **buf)
{
    int iters = nt->cfg.iters;
    size_t per_pl = (size_t)iters * (size_t)(n + 1);
    *buf = malloc(per_pl * AR_PLACEMENTS * sizeof **buf);
    if (!*buf)
        return -1;
    for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
        double *rows = *buf + per_pl * pl, *max = rows + (size_t)iters * n;
        for (int i = 0; i < iters; i++)
            max[i] = 0;
        for (int r = 0; r < n; r++)
            for (int i = 0; i < iters; i++) {
                double t = iter_times[((size_t)r * AR_PLACEMENTS + pl) * iters + i];
                rows[(size_t)r * iters + i] = t;
                max[i] = t > max[i] ? t : max[i];
            }
        it[pl] = (ar_nt_iter){
            .skipped = nt->cfg.per_iter_skip, .n = iters, .times = max, .per_proc = rows, .nprocs = n};
        ar_nt_iter_stats(&it[pl]);
    }
    return 0;
}

/* Split: every communicator's rank 0 sends its communicator's samples (and -I times) to world rank 0, which
 * gets them group after group. Returns false on the leaders that are not world rank 0. */
static bool gather_groups(const live_table *t, const ar_sample **samples, const double **iter_times, int *n,
                          ar_sample **all_samples, double **all_iters, int **group_of)
{
    const split_plan *sp = t->split;
    int me;
    MPI_Comm_rank(sp->leaders, &me);
    size_t per_iter = *iter_times ? (size_t)t->nt->cfg.iters * AR_PLACEMENTS : 0;
    if (me == 0) {
        *all_samples = malloc((size_t)t->world_size * sizeof **all_samples);
        *all_iters = per_iter ? malloc((size_t)t->world_size * per_iter * sizeof **all_iters) : NULL;
        *group_of = malloc((size_t)t->world_size * sizeof **group_of);
        if (!*all_samples || !*group_of || (per_iter && !*all_iters))
            GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    }
    /* groups are of equal size (checked at the start) */
    GA_MPI_CHECK(MPI_Gather(*samples, (int)(sizeof(ar_sample) * (size_t)*n), MPI_BYTE, *all_samples,
                            (int)(sizeof(ar_sample) * (size_t)*n), MPI_BYTE, 0, sp->leaders));
    if (per_iter)
        GA_MPI_CHECK(MPI_Gather(*iter_times, (int)(per_iter * (size_t)*n), MPI_DOUBLE, *all_iters,
                                (int)(per_iter * (size_t)*n), MPI_DOUBLE, 0, sp->leaders));
    if (me != 0)
        return false;
    for (int i = 0; i < t->world_size; i++)
        (*group_of)[i] = i / *n;
    *samples = *all_samples;
    *iter_times = *all_iters;
    *n = t->world_size;
    return true;
}

static void print_live_line(void *user, int s, const ar_sample *samples, const double *iter_times, int n)
{
    live_table *t = user;
    nt_state *nt = t->nt;
    ar_sample *all_samples = NULL;
    double *all_iters = NULL;
    int *split_group_of = NULL, n_groups = 1;
    if (t->split->leaders != MPI_COMM_NULL) {
        if (!gather_groups(t, &samples, &iter_times, &n, &all_samples, &all_iters, &split_group_of))
            return;
        n_groups = t->split->n_groups;
    }
    const ar_sample **ptrs = malloc((size_t)n * sizeof *ptrs);
    int *group_of = split_group_of ? split_group_of : calloc((size_t)n, sizeof *group_of);
    double *iter_buf = NULL;
    ar_nt_iter it[AR_PLACEMENTS];
    ar_line l;
    if (!ptrs || !group_of || (iter_times && iter_summaries(nt, iter_times, n, it, &iter_buf) != 0))
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int i = 0; i < n; i++)
        ptrs[i] = &samples[i];
    if (ar_line_compute(&t->desc, s, ptrs, group_of, n, n_groups, &l) == 0) {
        const ar_coll *c = ar_coll_get(t->desc.coll);
        const char *type = ar_dtype_get(t->desc.type)->name, *op = ar_coll_op_label(t->desc.coll, t->desc.op);
        int root = c->rooted ? t->desc.root : -1;
        char stamp[64], line[1024];
        if (nt->cfg.timestamps)
            ar_nt_now(stamp, sizeof stamp);
        ar_nt_line(line, sizeof line, &nt->cfg, type, op, root, &l, iter_times ? it : NULL,
                   nt->cfg.timestamps ? stamp : NULL, t->split->world_rank_of[l.agg[0].slowest],
                   t->hosts + (size_t)t->split->world_rank_of[l.agg[0].slowest] * GA_HOST_MAX);
        fputs(line, stdout);
        fflush(stdout);
        if (nt->json)
            ar_nt_json_result(nt->json, &nt->cfg, type, op, root, &l, iter_times ? it : NULL);
        for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
            nt->bw_sum += l.busbw[pl];
            nt->bw_count++;
            nt->out_of_bounds += l.agg[pl].wrong > 0;
        }
        ar_figures_add(&t->fig, &l, s);
    }
    free(iter_buf);
    free(ptrs);
    free(group_of);
    free(all_samples);
    free(all_iters);
}

/* -M: nccl-tests' three figures, the largest of any rank (collective over the world). false without -M. */
static bool memory_use(const ar_backend *b, int64_t used[3])
{
    int64_t mine[3] = {0, 0, 0};
    int any = b->memory_use != NULL, all = 0;
    if (b->memory_use)
        b->memory_use((ar_backend *)b, mine);
    ga_deadline_arm("gathering the GPU memory use");
    GA_MPI_CHECK(MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (all)
        GA_MPI_CHECK(MPI_Allreduce(mine, used, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
    ga_deadline_disarm();
    return all != 0;
}

/* This rank's "#  Rank" line: its GPU, or the host path's stand-in (device -1). */
static void device_of(const ga_ctx *ctx, int group, ar_nt_device *d)
{
    memset(d, 0, sizeof *d);
    d->rank = ctx->world_rank;
    d->group = group;
    d->pid = (int32_t)getpid();
    d->device = -1;
    snprintf(d->host, sizeof d->host, "%s", ctx->host);
    snprintf(d->name, sizeof d->name, "host memory (MPI)");
    const ga_gpu_info *g = ga_gpu_selected();
    if (g) {
        d->device = g->index;
        snprintf(d->name, sizeof d->name, "%s", g->name);
        if (ar_nt_parse_pci(g->pci_bus_id, &d->pci_domain, &d->pci_bus, &d->pci_device) != 0)
            d->pci_domain = d->pci_bus = d->pci_device = 0;
    }
}

/* Rank 0's busbw of a one-size sweep, without printing: the remeasure's figure (nccl-tests' table is not
 * touched, so its parsers see one table per run as before). */
static void measure_line(void *user, int s, const ar_sample *samples, const double *iter_times, int n)
{
    live_table *t = user;
    (void)iter_times;
    const ar_sample **ptrs = malloc((size_t)n * sizeof *ptrs);
    int *group_of = calloc((size_t)n, sizeof *group_of);
    ar_line l;
    if (!ptrs || !group_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int i = 0; i < n; i++)
        ptrs[i] = &samples[i];
    if (ar_line_compute(&t->desc, s, ptrs, group_of, n, 1, &l) == 0)
        ar_figures_add(&t->fig, &l, s);
    free(ptrs);
    free(group_of);
}

/* --min-busbw: a world busbw below the floor is measured again at the largest size, --remeasure times at
 * most (like nccl-tests' -N repeats), and the best measurement is held to the floor, so that one noisy
 * measurement does not fail the cluster. Rank 0 decides each pass and broadcasts it: every rank runs the same
 * number of sweeps. Not with a split mask (its communicators would each need their own decision). */
static void remeasure_world_max(const ga_ctx *ctx, const ar_opts *o, ar_backend *b, combo c,
                                const uint64_t *sizes, int n_sizes, const split_plan *split,
                                const live_table *t, run_state *st)
{
    st->world_measurements = 1;
    st->world_best_busbw = t->fig.busbw_at_max;
    if (o->min_busbw <= 0 || o->remeasure <= 0 || split->leaders != MPI_COMM_NULL)
        return;
    const uint64_t *largest = &sizes[n_sizes - 1];
    ar_sweep_cfg one = ar_cfg_of(o, c, largest, 1, "world remeasure");
    one.per_iter = false;
    ar_record *rec = calloc(1, sizeof *rec);
    if (!rec)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    int far = 0; /* measurements far below the floor (ar_budget.h): twice leaves no doubt to remove */
    for (int pass = 0; pass < o->remeasure; pass++) {
        far += ar_far_below_floor(pass == 0 ? t->fig.busbw_at_max : st->world_best_busbw, o->min_busbw);
        bool late = st->phase_deadline > 0 && ga_now() > st->phase_deadline;
        int again =
            ctx->world_rank == 0 && st->world_best_busbw < o->min_busbw && far < AR_FAR_TIMES && !late;
        if (ctx->world_rank == 0 && st->world_best_busbw < o->min_busbw && (late || far >= AR_FAR_TIMES))
            ga_log("COMM", "busbw %.2f GB/s at %llu B: %s", st->world_best_busbw,
                   (unsigned long long)*largest,
                   late ? "below --min-busbw, not measured again: out of time"
                        : "far below --min-busbw twice, beyond doubt: not measured again");
        ga_deadline_arm("deciding whether to measure the largest size again");
        GA_MPI_CHECK(MPI_Bcast(&again, 1, MPI_INT, 0, MPI_COMM_WORLD));
        ga_deadline_disarm();
        if (!again)
            break;
        if (ctx->world_rank == 0) {
            fprintf(stderr,
                    "[COMM] busbw %.2f GB/s at %llu B is below --min-busbw %.2f GB/s: measuring again (%d of "
                    "at most %d)\n",
                    st->world_best_busbw, (unsigned long long)*largest, o->min_busbw, pass + 1, o->remeasure);
            fflush(stderr);
        }
        live_table m = {.desc = ar_desc_of(o, c, largest, 1), .split = split, .world_size = ctx->world_size};
        memset(rec, 0, sizeof *rec);
        ar_bench_sweep(b, &one, rec, measure_line, &m);
        st->world_measurements++;
        if (ctx->world_rank == 0 && m.fig.busbw_at_max > st->world_best_busbw)
            st->world_best_busbw = m.fig.busbw_at_max;
    }
    free(rec);
}

/* Collective: every rank's host name at rank 0 (returned; NULL elsewhere), and nccl-tests' preamble there:
 * the devices (also into -J's file) and the table's header. */
static char *world_preamble(const ga_ctx *ctx, const split_plan *split, nt_state *nt)
{
    bool root = ctx->world_rank == 0;
    char *hosts = root ? malloc((size_t)ctx->world_size * GA_HOST_MAX) : NULL;
    ar_nt_device mine_dev, *devs = root ? malloc((size_t)ctx->world_size * sizeof *devs) : NULL;
    if (root && (!hosts || !devs))
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    device_of(ctx, split->color, &mine_dev);
    ga_deadline_arm("gathering host names");
    GA_MPI_CHECK(
        MPI_Gather(ctx->host, GA_HOST_MAX, MPI_CHAR, hosts, GA_HOST_MAX, MPI_CHAR, 0, MPI_COMM_WORLD));
    GA_MPI_CHECK(
        MPI_Gather(&mine_dev, sizeof mine_dev, MPI_BYTE, devs, sizeof mine_dev, MPI_BYTE, 0, MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (root) {
        ar_nt_preamble(stdout, &nt->cfg, devs, ctx->world_size);
        if (nt->json)
            json_object_set_new(json_object_get(nt->json, "config"), "devices",
                                ar_nt_json_devices(devs, ctx->world_size));
        ar_nt_header(stdout, &nt->cfg);
        fflush(stdout);
    }
    free(devs);
    return hosts;
}

/* Rank 0: the world sweep of combination c stopped at reached of asked, out of time: said under "not covered"
 * and as a warning (ar_report_sweep_cut). */
static void world_cut(run_state *st, combo c, uint64_t reached, uint64_t asked)
{
    ar_run_not_covered(st, "world: %s %s sizes above %llu B not measured: out of time",
                       ar_dtype_get(c.type)->name, ar_op_name(c.op), (unsigned long long)reached);
    ar_report_sweep_cut(st->findings, "world", reached, asked);
}

/* nccl-tests' footer (rank 0): the average bus bandwidth, NCCL_TESTS_MIN_BW held to it, -J's file written.
 * Collective (the memory use is asked of the backend on every rank). */
static void world_footer(const ga_ctx *ctx, ar_backend *b, nt_state *nt, run_state *st)
{
    int64_t mem_used[3];
    bool have_mem = memory_use(b, mem_used);
    if (ctx->world_rank == 0) {
        double avg = nt->bw_count ? nt->bw_sum / nt->bw_count : 0;
        ar_nt_footer(stdout, &nt->cfg, nt->out_of_bounds, avg, st->min_bw, have_mem ? mem_used : NULL);
        fflush(stdout);
        ar_report_min_bw(st->findings, avg, st->min_bw);
        if (nt->json) {
            char err[256];
            ar_nt_json_finish(nt->json, nt->out_of_bounds, avg, st->min_bw);
            if (ar_nt_json_write(nt->json, nt->json_path, err, sizeof err) != 0)
                GA_FATAL(GA_EXIT_ENV, "%s", err);
        }
    }
}

/* What every combination's sweep of one world run shares. */
typedef struct {
    const ga_ctx *ctx;
    const ar_opts *o;
    ar_backend *b;
    const combo *combos;
    const uint64_t *sizes;
    int n_sizes, asked; /* the sizes swept (fewer when the screen found the fabric slow), and asked for */
    const split_plan *split;
    nt_state *nt;
    run_state *st;
    char *hosts;
    ar_record *mine;
} world_run;

/* The last cycle of combination c, swept into t: the world's largest size measured again, the records
 * gathered and, on rank 0, accounted (the floor, the first combination's records kept for the nodes). */
static void judge_combo(const world_run *w, int c, live_table *t)
{
    bool root = w->ctx->world_rank == 0;
    if (root && c == 0)
        ga_debug("COMM", "busbw at the largest size (%llu B): %g GB/s out-of-place, %g GB/s in-place",
                 (unsigned long long)t->fig.max_bytes, t->fig.busbw_at_max, t->fig.busbw_at_max_ip);
    /* the floor holds the largest size asked for: a sweep cut short cannot be held to it */
    bool whole = t->desc.n_sizes == w->asked;
    if (c == 0 && whole)
        remeasure_world_max(w->ctx, w->o, w->b, w->combos[c], w->sizes, w->n_sizes, w->split, t, w->st);
    if (root && c == 0 && !whole && w->o->min_busbw > 0)
        ar_run_not_covered(w->st, "world: --min-busbw %.2f GB/s not held: the sweep did not reach %llu B",
                           w->o->min_busbw, (unsigned long long)w->sizes[w->asked - 1]);
    ar_record *all = NULL;
    ar_gather_records(w->ctx, w->mine, &all, ga_deadline_wait_timeout(), "the world sweep");
    if (!root)
        return;
    rec_set set = ar_rec_set_world(all, w->ctx->world_size);
    ar_account_sweep(w->st, &t->desc, &set, w->o->min_busbw, c == 0 && whole, c == 0, "world");
    ar_rec_set_free(&set);
    if (c == 0 && !w->st->node_records)
        w->st->node_records = all;
    else
        free(all);
}

/* The world sweep held to the screen's pairs (ar_world_far_below_pairs): after each size every rank agrees on
 * the slowest rank's time (and whether the next size would miss the deadline, as size_fits does without a
 * gate), computes the world's busbw from it, and stops once it is far below the screen's median pair at
 * AR_FAR_TIMES sizes that count: the world's slowest link is then far slower than the pairs' and its answer
 * is known (a node 12x slower cost a 403 s world sweep before the pairs named it). */
typedef struct {
    ar_gate base;
    const world_run *w;
    const ar_sweep_cfg *cfg;
    int far;          /* sizes far below the pairs so far */
    bool stopped_far; /* the sweep stopped for that */
    double far_busbw; /* the world's busbw at the last of them */
} world_gate;

static int world_after_size(ar_gate *base, int s, const ar_sample *mine)
{
    world_gate *g = (world_gate *)base;
    const ar_sweep_cfg *cfg = g->cfg;
    double per_op = mine->time_s[0] > mine->time_s[1] ? mine->time_s[0] : mine->time_s[1];
    double next = s + 1 < cfg->n_sizes ? per_op * (double)cfg->sizes[s + 1] /
                                             (double)(cfg->sizes[s] ? cfg->sizes[s] : 1) * AR_PLACEMENTS
                                       : 0;
    double v[2] = {mine->time_s[0], cfg->deadline > 0 && ga_now() + next > cfg->deadline};
    ga_deadline_arm("agreeing on the world's time at %llu B", (unsigned long long)cfg->sizes[s]);
    GA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, g->w->split->comm));
    ga_deadline_disarm();
    ar_counts counts;
    int n = g->w->split->size;
    ar_coll_counts(cfg->coll, cfg->sizes[s], cfg->type, n, &counts);
    double alg, bus;
    ar_coll_bandwidth(cfg->coll, ar_coll_bytes(&counts, cfg->type), v[0], n, &alg, &bus);
    if (s >= ar_judge_size_index(cfg->sizes, cfg->n_sizes) &&
        ar_world_far_below_pairs(bus, g->w->st->screen_pairs_busbw, cfg->sizes[s])) {
        g->far++;
        g->far_busbw = bus;
    }
    g->stopped_far = g->far >= AR_FAR_TIMES && s + 1 < cfg->n_sizes;
    return v[1] != 0 || g->stopped_far ? AR_GATE_STOP : AR_GATE_GO;
}

/* Whether the world sweep is held to the screen's pairs: there was a screen, one communicator (a split mask
 * makes several), a sweep that ends (-N 0 runs until stopped) and no slow fabric (that sweep is cut already).
 */
static bool world_gate_on(const world_run *w)
{
    const run_state *st = w->st;
    return st->screen_pairs_busbw > 0 && w->split->n_groups == 1 && w->o->cycles != 0 && !st->fabric_slow;
}

/* Rank 0: the sweep stopped far below the screen's pairs, said in the log and in not_covered. */
static void world_far_cut(const world_gate *g, combo c, uint64_t reached)
{
    ga_log(
        "COMM",
        "world: %.3f GB/s at %llu B, more than %.0fx below the screen's median pair (%.3f GB/s) at %d sizes: "
        "the world's slowest link is far slower than the pairs'; the sweep stops here and the pairs isolate "
        "it",
        g->far_busbw, (unsigned long long)reached, AR_WORLD_FAR_FACTOR, g->w->st->screen_pairs_busbw, g->far);
    ar_run_not_covered(
        g->w->st, "world: %s %s sizes above %llu B not measured: the world was far below the screen's pairs",
        ar_dtype_get(c.type)->name, ar_op_name(c.op), (unsigned long long)reached);
}

/* Combination c's sweep in cycle `cycle`; true when it was cut for want of time (every rank agreed). */
static bool sweep_combo(const world_run *w, int c, int cycle, bool last)
{
    bool root = w->ctx->world_rank == 0;
    const ar_opts *o = w->o;
    ar_sweep_cfg cfg = ar_cfg_of(o, w->combos[c], w->sizes, w->n_sizes, "world");
    cfg.deadline = o->cycles == 0 ? 0 : w->st->phase_deadline; /* -N 0: until stopped, as nccl-tests */
    cfg.first_is_figure = w->st->fabric_slow; /* its answer is known: one operation per size */
    if (cycle > 0)
        cfg.warmup = 0; /* nccl-tests warms up once, before its cycles */
    live_table t = {.desc = ar_desc_of(o, w->combos[c], w->sizes, w->n_sizes),
                    .hosts = w->hosts,
                    .nt = w->nt,
                    .split = w->split,
                    .world_size = w->ctx->world_size};
    world_gate wg = {.base = {world_after_size}, .w = w, .cfg = &cfg};
    if (world_gate_on(w))
        cfg.gate = &wg.base;
    memset(w->mine, 0, sizeof *w->mine);
    ga_record_header_init(w->ctx, &w->mine->hdr);
    w->mine->group = w->split->group;
    ar_bench_sweep(w->b, &cfg, w->mine, print_live_line, &t);
    if (wg.far > 0) /* every rank: the gate's figures are agreed (world_after_size) */
        w->st->world_far_busbw = wg.far_busbw;
    if (root && w->mine->unchecked)
        ar_run_not_covered(w->st, "world: %s %s: %d size%s not checked: out of time",
                           ar_dtype_get(w->combos[c].type)->name, ar_op_name(w->combos[c].op),
                           w->mine->unchecked, w->mine->unchecked == 1 ? "" : "s");
    bool stopped = w->mine->n_sizes < w->n_sizes; /* out of time: every rank agreed (ar_bench.c) */
    if (stopped) {
        if (root && wg.stopped_far)
            world_far_cut(&wg, w->combos[c], w->sizes[w->mine->n_sizes - 1]);
        else if (root)
            world_cut(w->st, w->combos[c], w->sizes[w->mine->n_sizes - 1], w->sizes[w->n_sizes - 1]);
        t.desc.n_sizes = w->mine->n_sizes;
    }
    if (last || stopped)
        judge_combo(w, c, &t);
    return stopped;
}

void ar_run_world(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, const combo *combos, int n_combos,
                  const uint64_t *sizes, int n_sizes, const split_plan *split, nt_state *nt, run_state *st)
{
    world_run w = {.ctx = ctx,
                   .o = o,
                   .combos = combos,
                   .sizes = sizes,
                   .n_sizes = n_sizes,
                   .asked = n_sizes,
                   .split = split,
                   .nt = nt,
                   .st = st};
    w.hosts = world_preamble(ctx, split, nt);
    size_t max_bytes = 0;
    for (int c = 0; c < n_combos; c++) {
        ar_sweep_cfg cfg = ar_cfg_of(o, combos[c], sizes, n_sizes, "world");
        size_t b = ar_bench_max_bytes(&cfg, split->size);
        max_bytes = b > max_bytes ? b : max_bytes;
    }
    w.b = ar_backend_open(kind, split->comm, max_bytes, "world");
    w.mine = calloc(1, sizeof *w.mine);
    if (!w.mine)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    /* the screen found the fabric slow: the sweep stops at the judging size, its answer known */
    if (st->fabric_slow)
        w.n_sizes = ar_judge_size_index(sizes, n_sizes) + 1;
    bool stopped = false;
    /* -N: the sweep again and again, each printed; the report holds the last cycle (-N 0 never ends) */
    for (int cycle = 0; (o->cycles == 0 || cycle < o->cycles) && !stopped; cycle++) {
        bool last = o->cycles > 0 && cycle == o->cycles - 1;
        for (int c = 0; c < n_combos && !stopped; c++)
            stopped = sweep_combo(&w, c, cycle, last);
    }
    world_footer(ctx, w.b, nt, st);
    w.b->destroy(w.b);
    free(w.mine);
    free(w.hosts);
}

/* ---- set-up and report ---- */

/* Collective: the communicators of NCCL_TESTS_SPLIT_MASK (hexadecimal, as nccl-tests reads it), or the world.
 * Returns 0, or -1 with a message when the groups differ in size (the table's bandwidths assume one size). */
int ar_split_world(const ga_ctx *ctx, split_plan *sp, char *err, size_t errlen)
{
    const char *env = getenv("NCCL_TESTS_SPLIT_MASK");
    unsigned long mask = env && *env ? strtoul(env, NULL, 16) : 0;
    int n = ctx->world_size;
    memset(sp, 0, sizeof *sp);
    sp->comm = MPI_COMM_WORLD;
    sp->leaders = MPI_COMM_NULL;
    sp->color = (int)((unsigned long)ctx->world_rank & mask);
    sp->n_groups = 1;
    sp->size = n;
    int *colors = malloc((size_t)n * sizeof *colors);
    sp->world_rank_of = malloc((size_t)n * sizeof *sp->world_rank_of);
    if (!colors || !sp->world_rank_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int i = 0; i < n; i++)
        sp->world_rank_of[i] = i;
    GA_MPI_CHECK(MPI_Allgather(&sp->color, 1, MPI_INT, colors, 1, MPI_INT, MPI_COMM_WORLD));
    /* dense group indices by color; world ranks listed group after group, as the leaders gather them */
    int k = 0, lo = 0, hi = 0;
    sp->n_groups = 0;
    for (int c = 0, seen = 0; seen < n; c++) {
        int count = 0;
        for (int i = 0; i < n; i++)
            if (colors[i] == c) {
                sp->world_rank_of[k++] = i;
                count++;
            }
        if (!count)
            continue;
        if (c == sp->color)
            sp->group = sp->n_groups;
        lo = sp->n_groups == 0 || count < lo ? count : lo;
        hi = count > hi ? count : hi;
        sp->n_groups++;
        seen += count;
    }
    free(colors);
    if (sp->n_groups == 1)
        return 0;
    GA_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, sp->color, ctx->world_rank, &sp->comm));
    MPI_Comm_size(sp->comm, &sp->size);
    int crank;
    MPI_Comm_rank(sp->comm, &crank);
    GA_MPI_CHECK(
        MPI_Comm_split(MPI_COMM_WORLD, crank == 0 ? 0 : MPI_UNDEFINED, ctx->world_rank, &sp->leaders));
    if (lo != hi) {
        snprintf(err, errlen,
                 "NCCL_TESTS_SPLIT_MASK=%s makes communicators of %d to %d ranks: use a mask that "
                 "splits the ranks evenly",
                 env, lo, hi);
        return -1;
    }
    return 0;
}

void ar_split_free(split_plan *sp)
{
    if (sp->comm != MPI_COMM_WORLD)
        MPI_Comm_free(&sp->comm);
    if (sp->leaders != MPI_COMM_NULL)
        MPI_Comm_free(&sp->leaders);
    free(sp->world_rank_of);
}
