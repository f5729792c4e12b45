/* allreduce_bw: NCCL (or MPI host) collective bandwidth sweep, nccl-tests compatible, with a check of every
 * element and, in --pattern pairs, the isolation of a slow node or link. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if GA_HAVE_CUDA
#include <nccl.h>
#endif

#include "ar_bench.h"
#include "ar_nccltests.h"
#include "ga_deadline.h"
#include "ar_opts.h"
#include "ar_nodes.h"
#include "ar_pairs.h"
#include "ar_report.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gather.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_headline.h"
#include "ga_program.h"
#include "ga_report.h"

static const ga_program_spec spec = {
    .name = "allreduce_bw",
    .summary =
        "NCCL collective bandwidth sweep (nccl-tests compatible) with an exact check of every element and "
        "bad-link isolation by pairs; MPI on host memory where no GPU is visible.",
    .epilog =
        "-T/--wait-timeout bounds communicator init and every wait (nccl-tests' -T); --timeout bounds the\n"
        "whole run, as in every program (none unless given: each wait has its bound). docs/options.md\n"
        "Examples:\n"
        "  mpirun -np 16 --map-by ppr:8:node allreduce_bw -b 8 -e 1G -f 2 --min-busbw 150\n"
        "  mpirun -np 64 --map-by ppr:8:node allreduce_bw --pattern pairs --rounds 3 -b 1M -e 256M -f 4\n"
        "  mpirun -np 4 allreduce_bw --backend mpi -b 8 -e 64M -f 2 -d all -o all",
    .options = ar_options,
    .n_options = AR_N_OPTIONS,
    .on_option = ar_on_option,
    .default_timeout_s = 0, /* no whole-run bound unless --timeout: -T already bounds every wait */
};

typedef struct {
    ar_dtype type;
    ar_op op;
} combo;

/* ---- world mode: one sweep per combination over every rank, printed as nccl-tests prints it ---- */

/* What the nccl-tests output accumulates over every line of every combination and cycle (rank 0). */
typedef struct {
    ar_nt_config cfg;
    json_t *json; /* -J document, or NULL */
    char json_path[1024];
    double bw_sum; /* busbw of every line and placement: the footer's average */
    int bw_count, out_of_bounds;
} nt_state;

/* nccl-tests' NCCL_TESTS_SPLIT_MASK: world rank r joins communicator (r & mask), each running the sweep on
 * its own; the table's line of a size covers every communicator. */
typedef struct {
    MPI_Comm comm; /* this rank's communicator (MPI_COMM_WORLD without a mask) */
    int color;     /* r & mask: the Group column */
    int group;     /* dense index of the communicator, 0 .. n_groups-1, by color */
    int n_groups, size;
    MPI_Comm leaders;   /* rank 0 of each communicator, MPI_COMM_NULL elsewhere or without a mask */
    int *world_rank_of; /* world rank 0: the world rank of each gathered sample, in gathered order */
} split_plan;

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

/* nccl-tests' -u -G -R -x -y -M as ar_opts_finish left them for the backend that runs; set once in main. */
static ar_backend_setup backend_setup = {.cta_policy = -1};

static ar_backend *backend_new(ga_backend kind, MPI_Comm comm, size_t max_bytes, const char *what)
{
#if GA_HAVE_CUDA
    if (kind == GA_BACKEND_GPU)
        return ar_nccl_backend_new(comm, max_bytes, ga_deadline_wait_timeout(), what, &backend_setup);
#endif
    (void)kind;
    (void)what;
    return ar_host_backend_new(comm, max_bytes, &backend_setup);
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

static void gather(const ga_ctx *ctx, const ar_record *mine, ar_record **all, double bound, const char *what)
{
    ga_deadline_arm_for(bound, "gathering the records of %s", what);
    ga_gather_records(ctx, mine, sizeof *mine, (void **)all);
    ga_deadline_disarm();
}

/* Every rank's record, as pointers, with the group each belongs to. */
typedef struct {
    const ar_record **recs;
    int *group_of;
    int n, n_groups;
} rec_set;

static void rec_set_free(rec_set *s)
{
    free(s->recs);
    free(s->group_of);
}

/* Every rank's record in its communicator: one, or one per NCCL_TESTS_SPLIT_MASK group. */
static rec_set world_set(const ar_record *all, int n)
{
    rec_set s = {malloc((size_t)n * sizeof *s.recs), calloc((size_t)n, sizeof *s.group_of), n, 1};
    if (!s.recs || !s.group_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int i = 0; i < n; i++) {
        s.recs[i] = &all[i];
        s.group_of[i] = all[i].group;
        s.n_groups = all[i].group >= s.n_groups ? all[i].group + 1 : s.n_groups;
    }
    return s;
}

static json_t *combination_json(const ar_sweep_desc *d, const rec_set *set, ar_figures *fig)
{
    json_t *results = ar_results_json(d, set->recs, set->group_of, set->n, set->n_groups, fig);
    return json_pack("{s:s, s:s, s:o, s:f, s:f, s:I, s:I, s:i}", "datatype", ar_dtype_get(d->type)->name,
                     "op", ar_coll_get(d->coll)->reduces ? ar_op_name(d->op) : "none", "results", results,
                     "avg_busbw_GBps", fig->avg_busbw, "busbw_at_max_GBps", fig->busbw_at_max, "max_bytes",
                     (json_int_t)fig->max_bytes, "wrong_total", (json_int_t)fig->wrong_total, "out_of_bounds",
                     fig->out_of_bounds);
}

/* Rank 0 state of the whole run: the combinations' summaries, findings, the records shown under "nodes". */
typedef struct {
    json_t *combos;
    ga_findings findings;
    ar_record *node_records; /* first combination (world) or first round (pairs) */
    json_t *pairs;           /* pairs pattern: the "pairs" object */
    json_t *node;            /* node pattern: the "node" object */
    bool ran[AR_PATTERNS];
    double node_busbw_min;
    int64_t wrong_total;
    int out_of_bounds;
    ar_figures first_fig; /* the first combination's figures: the headline ones */
    double pair_median_busbw;
    int pairs_flagged, pairs_tested;
    double min_bw; /* NCCL_TESTS_MIN_BW, -1 when unset */
    /* --min-busbw on the world sweep: measurements of its largest size (1 + remeasures) and the best busbw */
    int world_measurements;
    double world_best_busbw;
} run_state;

static ar_sweep_desc desc_of(const ar_opts *o, combo c, const uint64_t *sizes, int n_sizes)
{
    return (ar_sweep_desc){o->coll, c.type, c.op, o->root, sizes, n_sizes, (ar_time_mode)o->average};
}

static ar_sweep_cfg cfg_of(const ar_opts *o, combo c, const uint64_t *sizes, int n_sizes, const char *label)
{
    return (ar_sweep_cfg){o->coll,
                          c.type,
                          c.op,
                          o->root,
                          o->iters,
                          o->warmup,
                          o->check,
                          sizes,
                          n_sizes,
                          label,
                          o->agg_iters,
                          o->blocking,
                          o->per_iter && !o->pairs};
}

/* Rank 0: what one sweep adds to the run: its combination entry, totals and findings. check_busbw: hold its
 * busbw to min_busbw; first: its figures are the world's headline ones. */
static void account_sweep(run_state *st, const ar_sweep_desc *d, const rec_set *set, double min_busbw,
                          bool check_busbw, bool first, const char *pattern)
{
    ar_figures fig;
    json_t *entry = combination_json(d, set, &fig);
    json_object_set_new(entry, "pattern", json_string(pattern));
    json_array_append_new(st->combos, entry);
    st->wrong_total += fig.wrong_total;
    st->out_of_bounds += fig.out_of_bounds;
    if (first)
        st->first_fig = fig;
    /* The floor holds the best measurement of the largest size (remeasure_world_max); the figures reported
     * stay the sweep's, as its table and results show them. */
    ar_figures held = fig;
    if (first && st->world_measurements > 1) {
        if (st->world_best_busbw > held.busbw_at_max)
            held.busbw_at_max = st->world_best_busbw;
        json_object_set_new(entry, "busbw_at_max_measurements", json_integer(st->world_measurements));
        json_object_set_new(entry, "busbw_at_max_best_GBps", json_real(held.busbw_at_max));
    }
    ar_sweep_findings(d, set->recs, set->n, &held, min_busbw, check_busbw, &st->findings);
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
    ar_sweep_cfg one = cfg_of(o, c, largest, 1, "world remeasure");
    one.per_iter = false;
    ar_record *rec = calloc(1, sizeof *rec);
    if (!rec)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    for (int pass = 0; pass < o->remeasure; pass++) {
        int again = ctx->world_rank == 0 && st->world_best_busbw < o->min_busbw;
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
        live_table m = {.desc = desc_of(o, c, largest, 1), .split = split, .world_size = ctx->world_size};
        memset(rec, 0, sizeof *rec);
        ar_bench_sweep(b, &one, rec, measure_line, &m);
        st->world_measurements++;
        if (ctx->world_rank == 0 && m.fig.busbw_at_max > st->world_best_busbw)
            st->world_best_busbw = m.fig.busbw_at_max;
    }
    free(rec);
}

static void run_world(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, const combo *combos, int n_combos,
                      const uint64_t *sizes, int n_sizes, const split_plan *split, nt_state *nt,
                      run_state *st)
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

    size_t max_bytes = 0;
    for (int c = 0; c < n_combos; c++) {
        ar_sweep_cfg cfg = cfg_of(o, combos[c], sizes, n_sizes, "world");
        size_t b = ar_bench_max_bytes(&cfg, split->size);
        max_bytes = b > max_bytes ? b : max_bytes;
    }
    ar_backend *b = backend_new(kind, split->comm, max_bytes, "world");
    ar_record *mine = calloc(1, sizeof *mine);
    if (!mine)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    /* -N: the sweep again and again, each printed; the report holds the last cycle (-N 0 never ends) */
    for (int cycle = 0; o->cycles == 0 || cycle < o->cycles; cycle++) {
        bool last = o->cycles > 0 && cycle == o->cycles - 1;
        for (int c = 0; c < n_combos; c++) {
            ar_sweep_cfg cfg = cfg_of(o, combos[c], sizes, n_sizes, "world");
            if (cycle > 0)
                cfg.warmup = 0; /* nccl-tests warms up once, before its cycles */
            live_table t = {.desc = desc_of(o, combos[c], sizes, n_sizes),
                            .hosts = hosts,
                            .nt = nt,
                            .split = split,
                            .world_size = ctx->world_size};
            memset(mine, 0, sizeof *mine);
            ga_record_header_init(ctx, &mine->hdr);
            mine->group = split->group;
            ar_bench_sweep(b, &cfg, mine, print_live_line, &t);
            if (!last)
                continue;
            if (root && c == 0)
                ga_debug("COMM", "busbw at the largest size (%llu B): %g GB/s out-of-place, %g GB/s in-place",
                         (unsigned long long)t.fig.max_bytes, t.fig.busbw_at_max, t.fig.busbw_at_max_ip);
            if (c == 0)
                remeasure_world_max(ctx, o, b, combos[c], sizes, n_sizes, split, &t, st);
            ar_record *all = NULL;
            gather(ctx, mine, &all, ga_deadline_wait_timeout(), "the world sweep");
            if (root) {
                rec_set set = world_set(all, ctx->world_size);
                account_sweep(st, &t.desc, &set, o->min_busbw, c == 0, c == 0, "world");
                rec_set_free(&set);
                if (c == 0 && !st->node_records)
                    st->node_records = all;
                else
                    free(all);
            }
        }
    }
    int64_t mem_used[3];
    bool have_mem = memory_use(b, mem_used);
    if (root) {
        double avg = nt->bw_count ? nt->bw_sum / nt->bw_count : 0;
        ar_nt_footer(stdout, &nt->cfg, nt->out_of_bounds, avg, st->min_bw, have_mem ? mem_used : NULL);
        fflush(stdout);
        if (st->min_bw >= 0 && avg < st->min_bw * 0.9)
            ga_findings_add(&st->findings, GA_SEV_FAIL, "COMM_BUSBW_LOW", GA_WHERE_CLUSTER,
                            "average bus bandwidth %.2f GB/s is below 90%% of NCCL_TESTS_MIN_BW %.2f GB/s",
                            avg, st->min_bw);
        if (nt->json) {
            char err[256];
            ar_nt_json_finish(nt->json, nt->out_of_bounds, avg, st->min_bw);
            if (ar_nt_json_write(nt->json, nt->json_path, err, sizeof err) != 0)
                GA_FATAL(GA_EXIT_ENV, "%s", err);
        }
    }
    b->destroy(b);
    free(mine);
    free(hosts);
    free(devs);
}

/* ---- bounded iterations (pairs and node patterns) ---- */

/* -T bounds each wait, and a sweep's timed loop is one wait for -n operations: a slow member (a slow node, a
 * slow link) would make its healthy partner wait -n times longer than one operation and turn a slow pair into
 * a timeout naming the healthy end. So one timed operation at the largest size goes first, and the slowest
 * rank's time sets how many iterations fit in a quarter of -T: a pair ten times slower runs fewer iterations
 * and is measured and named. Collective on b's communicator; does nothing without -T. */
static void bound_iterations(ar_backend *b, ar_sweep_cfg *cfg)
{
    double wait = ga_deadline_wait_timeout();
    if (wait <= 0 || cfg->iters <= 1)
        return;
    ar_sweep_cfg probe = *cfg;
    probe.sizes = cfg->sizes + cfg->n_sizes - 1;
    probe.n_sizes = 1;
    probe.iters = 1;
    probe.warmup = cfg->warmup > 0 ? 1 : 0;
    probe.check = 0;
    probe.per_iter = false;
    ar_record *scratch = calloc(1, sizeof *scratch);
    if (!scratch)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ar_bench_sweep(b, &probe, scratch, NULL, NULL);
    int agg = cfg->agg_iters > 0 ? cfg->agg_iters : 1;
    double mine = 0, slowest = 0;
    for (int pl = 0; pl < AR_PLACEMENTS; pl++)
        mine = scratch->samples[0].time_s[pl] * agg > mine ? scratch->samples[0].time_s[pl] * agg : mine;
    free(scratch);
    ga_deadline_arm("agreeing on the iterations of %s", cfg->label);
    GA_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, b->comm));
    ga_deadline_disarm();
    if (slowest <= 0)
        return;
    double fit = 0.25 * wait / slowest;
    if (fit >= cfg->iters)
        return;
    cfg->iters = fit < 1 ? 1 : (int)fit;
    if (cfg->warmup > cfg->iters)
        cfg->warmup = cfg->iters;
    if (b->rank == 0)
        ga_log("COMM",
               "%s: one iteration takes %.3f s at %llu B: %d timed iterations per size, within -T %g s",
               cfg->label, slowest, (unsigned long long)cfg->sizes[cfg->n_sizes - 1], cfg->iters, wait);
}

/* Rank 0: the busbw at the largest size of the ranks of one group (their records), and the iterations they
 * ran. Returns 0 when no rank was in the group. */
static double group_busbw(const ar_record *all, int n, int group, const ar_sweep_desc *d, int *iters)
{
    const ar_sample **samples = malloc((size_t)n * sizeof *samples);
    int *group_of = calloc((size_t)n, sizeof *group_of);
    if (!samples || !group_of)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    int m = 0;
    for (int i = 0; i < n; i++)
        if (all[i].group == group) {
            samples[m++] = &all[i].samples[d->n_sizes - 1];
            if (iters)
                *iters = all[i].iters;
        }
    ar_line l;
    double bw =
        m > 0 && ar_line_compute(d, d->n_sizes - 1, samples, group_of, m, 1, &l) == 0 ? l.busbw[0] : 0;
    free(samples);
    free(group_of);
    return bw;
}

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
        ar_pairs_add_measurement(pr, group_busbw(all, n, p, d, &pr->iters));
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
        ar_sweep_cfg cfg = cfg_of(o, c, sizes, n_sizes, label);
        int pn;
        MPI_Comm_size(pc, &pn);
        ar_backend *b = backend_new(kind, pc, ar_bench_max_bytes(&cfg, pn), label);
        bound_iterations(b, &cfg);
        ar_bench_sweep(b, &cfg, mine, NULL, NULL);
        b->destroy(b);
        MPI_Comm_free(&pc);
    }
    gather(ctx, mine, records, bound, what);
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
    ar_sweep_desc d = desc_of(o, c, sizes, n_sizes);
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
    ar_sweep_desc d1 = desc_of(o, c, last, 1);
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
                                                 group_busbw(all, ctx->world_size, k, &d1, NULL));
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
    account_sweep(st, d, &set, o->min_busbw, !world_too, false, "pairs");
    rec_set_free(&set);

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

static void run_pairs(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                      int n_sizes, run_state *st, json_t *report)
{
    pair_plan plan = {ctx->node_count >= 2 ? ctx->node_count : ctx->world_size, ctx->node_count < 2};
    int max_rounds = ar_pairs_max_rounds(plan.members);
    int rounds = o->rounds == AR_ROUNDS_ALL ? max_rounds : o->rounds > 0 ? o->rounds : 3;
    if (rounds > max_rounds)
        rounds = max_rounds;
    ga_log("COMM", "pairs: %d %s, %d rounds of %d pairs, tolerance %.0f%% below the median", plan.members,
           plan.by_rank ? "ranks of one node" : "nodes", rounds, plan.members / 2, o->tolerance * 100);

    ar_sweep_desc d = desc_of(o, c, sizes, n_sizes);
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

/* ---- node pattern: every node's own sweep, at once ---- */

static json_t *nodes_json(const ar_node_fig *nodes, int n, const ar_nodes_verdict *v, const ar_opts *o)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        const ar_node_fig *nd = &nodes[i];
        json_array_append_new(arr, json_pack("{s:i, s:s, s:i, s:i, s:f, s:i, s:b, s:b}", "node", nd->node,
                                             "host", nd->host, "rank", nd->rank, "ranks", nd->ranks,
                                             "busbw_GBps", nd->busbw, "measured", nd->measured, "below_min",
                                             nd->below_min, "below_median", nd->below_median));
    }
    return json_pack("{s:o, s:f, s:f, s:f, s:i}", "nodes", arr, "median_busbw_GBps", v->median_busbw,
                     "min_node_busbw_GBps", o->min_node_busbw, "tolerance", o->tolerance, "flagged",
                     v->flagged);
}

/* Collective: a sweep on a communicator per node (the ranks sharing memory: MPI_COMM_TYPE_SHARED, and on the
 * GPU path an NCCL communicator over them), every node at once; the nodes below a bound make every node
 * measure the largest size again (--remeasure), each keeping its best; rank 0 analyses. */
static void run_node(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, combo c, const uint64_t *sizes,
                     int n_sizes, run_state *st, json_t *report)
{
    bool root = ctx->world_rank == 0;
    MPI_Comm nc;
    ga_deadline_arm("splitting the world into nodes");
    GA_MPI_CHECK(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx->world_rank, MPI_INFO_NULL, &nc));
    ga_deadline_disarm();
    char label[64];
    snprintf(label, sizeof label, "node %d", ctx->node_index);
    ar_sweep_cfg cfg = cfg_of(o, c, sizes, n_sizes, label);
    int nn;
    MPI_Comm_size(nc, &nn);
    ar_backend *b = backend_new(kind, nc, ar_bench_max_bytes(&cfg, nn), label);
    bound_iterations(b, &cfg);
    ar_record *mine = calloc(1, sizeof *mine);
    if (!mine)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ga_record_header_init(ctx, &mine->hdr);
    mine->group = ctx->node_index;
    ar_bench_sweep(b, &cfg, mine, NULL, NULL);
    double bound = ga_deadline_wait_timeout() * (4.0 + (double)n_sizes * AR_PLACEMENTS * (3.0 + o->check));
    ar_record *all = NULL;
    gather(ctx, mine, &all, bound, "the node sweeps");

    ar_sweep_desc d = desc_of(o, c, sizes, n_sizes), d1 = desc_of(o, c, sizes + n_sizes - 1, 1);
    ar_node_fig *nodes = NULL;
    int n_nodes = ctx->node_count;
    if (root) {
        nodes = calloc((size_t)n_nodes, sizeof *nodes);
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
            ar_nodes_add_measurement(&nodes[k], group_busbw(all, ctx->world_size, k, &d, NULL));
        }
    }
    ar_sweep_cfg again = cfg;
    again.sizes = sizes + n_sizes - 1;
    again.n_sizes = 1;
    for (int pass = 0; pass < o->remeasure; pass++) {
        ar_nodes_verdict v = {0};
        int flagged = 0;
        if (root) {
            if (ar_nodes_analyse(nodes, n_nodes, o->min_node_busbw, o->tolerance, &v) != 0)
                GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
            flagged = v.flagged;
        }
        ga_deadline_arm_for(bound, "sharing the nodes to measure again"); /* after every node's sweep */
        GA_MPI_CHECK(MPI_Bcast(&flagged, 1, MPI_INT, 0, MPI_COMM_WORLD));
        ga_deadline_disarm();
        if (!flagged)
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
        ar_bench_sweep(b, &again, rec, NULL, NULL);
        gather(ctx, rec, &got, bound, "the node remeasurement");
        if (root)
            for (int k = 0; k < n_nodes; k++)
                ar_nodes_add_measurement(&nodes[k], group_busbw(got, ctx->world_size, k, &d1, NULL));
        free(got);
        free(rec);
    }
    b->destroy(b);
    MPI_Comm_free(&nc);
    free(mine);
    ga_deadline_arm_for(bound, "the last node sweep"); /* leave together, as the pairs do */
    GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (!root)
        return;

    rec_set set = world_set(all, ctx->world_size);
    account_sweep(st, &d, &set, 0, false, false,
                  "node"); /* --min-busbw is the world's figure, not a node's */
    rec_set_free(&set);
    ar_nodes_verdict v;
    if (ar_nodes_analyse(nodes, n_nodes, o->min_node_busbw, o->tolerance, &v) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    ar_nodes_findings(nodes, n_nodes, &v, o->min_node_busbw, o->tolerance, &st->findings);
    st->node = nodes_json(nodes, n_nodes, &v, o);
    double lowest = 0;
    for (int k = 0; k < n_nodes; k++) {
        ga_where w = {nodes[k].host, k, nodes[k].rank, -1};
        ga_report_add_metric(report, "node_busbw", nodes[k].busbw, "GB/s", true, w);
        if (k == 0 || nodes[k].busbw < lowest)
            lowest = nodes[k].busbw;
    }
    st->node_busbw_min = lowest;
    ga_log("COMM",
           "node: %d node%s, intra-node busbw at %llu B: median %.2f GB/s, lowest %.2f GB/s, %d flagged",
           n_nodes, n_nodes == 1 ? "" : "s", (unsigned long long)sizes[n_sizes - 1], v.median_busbw, lowest,
           v.flagged);
    free(nodes);
    if (!st->node_records)
        st->node_records = all;
    else
        free(all);
}

/* ---- set-up and report ---- */

/* Collective: the communicators of NCCL_TESTS_SPLIT_MASK (hexadecimal, as nccl-tests reads it), or the world.
 * Returns 0, or -1 with a message when the groups differ in size (the table's bandwidths assume one size). */
static int split_world(const ga_ctx *ctx, split_plan *sp, char *err, size_t errlen)
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

static void split_free(split_plan *sp)
{
    if (sp->comm != MPI_COMM_WORLD)
        MPI_Comm_free(&sp->comm);
    if (sp->leaders != MPI_COMM_NULL)
        MPI_Comm_free(&sp->leaders);
    free(sp->world_rank_of);
}

/* nccl-tests names its programs after the collective (all_gather_perf): run under such a name (a link),
 * allreduce_bw runs that collective unless --collective says otherwise. */
static void program_collective(const char *program, ar_opts *o)
{
    char name[64];
    size_t len = strlen(program);
    if (o->set_coll || len <= 5 || len >= sizeof name || strcmp(program + len - 5, "_perf") != 0)
        return;
    memcpy(name, program, len - 5);
    name[len - 5] = 0;
    ar_coll_id id;
    if (ar_coll_parse(name, &id) == 0)
        o->coll = id;
}

static ar_nt_config nt_config(const ar_opts *o, const char *program, ga_backend kind)
{
    ar_nt_config c = {.program = program,
                      .min_bytes = o->min_bytes,
                      .max_bytes = o->max_bytes,
                      .step_bytes = o->step_bytes,
                      .step_factor = o->step_factor,
                      .warmup = o->warmup,
                      .iters = o->iters,
                      .agg_iters = o->agg_iters,
                      .check = o->check,
                      .blocking = o->blocking,
                      .per_iter_skip = o->per_iter_skip,
                      .graph = o->setup.graph_launches,
                      .unalign = o->setup.unalign,
                      .per_iter = o->per_iter,
                      .parallel_init = o->parallel_init,
                      .cputime = o->cputime,
                      .timestamps = o->timestamps,
                      .show_slowest = o->show_slowest};
#if GA_HAVE_CUDA
    if (kind == GA_BACKEND_GPU) {
        c.nccl_headers = NCCL_VERSION_CODE;
        if (ncclGetVersion(&c.nccl_library) != ncclSuccess)
            c.nccl_library = 0;
    }
#endif
    (void)kind;
    return c;
}

/* Which combinations to run: every type and op asked for that the backend supports. Returns how many, or -1
 * after printing why (usage error). */
static int plan_combos(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, int min_cc_major, combo *out)
{
    int n = 0;
    const ar_coll *cl = ar_coll_get(o->coll);
    for (int t = 0; t < AR_NTYPES; t++) {
        if (!(o->type_mask & (1u << t)))
            continue;
        const char *why = NULL;
        if (ar_dtype_get((ar_dtype)t)->fp8 && kind == GA_BACKEND_HOST)
            why = ar_host_unsupported((ar_dtype)t);
        else if (ar_dtype_get((ar_dtype)t)->fp8 && min_cc_major < 9)
            why = "fp8 types need GPUs of compute capability 9.0 or newer on every rank";
        if (why) {
            if (!o->all_types) {
                ga_error_once(spec.name, "--datatype %s: %s", ar_dtype_get((ar_dtype)t)->name, why);
                return -1;
            }
            ga_debug("COMM", "skipping %s: %s", ar_dtype_get((ar_dtype)t)->name, why);
            continue;
        }
        /* nccl-tests' order of -o all, so that the lines come in its order */
        static const ar_op op_order[AR_NOPS] = {AR_SUM, AR_PROD, AR_MAX, AR_MIN, AR_AVG};
        for (int k = 0; k < AR_NOPS; k++) {
            ar_op op = op_order[k];
            if (!(o->op_mask & (1u << op)))
                continue;
            out[n++] = (combo){(ar_dtype)t, op};
            if (!cl->reduces)
                break; /* data movement: the op does not apply */
        }
    }
    (void)ctx;
    return n;
}

static int report_and_verdict(const ga_ctx *ctx, const ga_common_opts *common, const ar_opts *o,
                              const char *backend_name, const combo *combos, run_state *st, json_t *report)
{
    json_t *first = json_array_get(st->combos, 0);
    json_t *summary = json_pack(
        "{s:s, s:s, s:s, s:s, s:i, s:O, s:O, s:O, s:O, s:I, s:I, s:i, s:i, s:i, s:i, s:i, s:f}", "backend",
        backend_name, "collective", ar_coll_get(o->coll)->name, "datatype",
        ar_dtype_get(combos[0].type)->name, "op",
        ar_coll_get(o->coll)->reduces ? ar_op_name(combos[0].op) : "none", "root", o->root, "results",
        json_object_get(first, "results"), "avg_busbw_GBps", json_object_get(first, "avg_busbw_GBps"),
        "busbw_at_max_GBps", json_object_get(first, "busbw_at_max_GBps"), "max_bytes",
        json_object_get(first, "max_bytes"), "wrong_total", (json_int_t)st->wrong_total, "out_of_bounds",
        (json_int_t)st->out_of_bounds, "iters", o->iters, "warmup_iters", o->warmup, "check", o->check,
        "average", o->average, "nranks", ctx->world_size, "timeout_s", o->timeout_s);
    /* "pattern": the first one run (a report of one pattern reads as it always has); "patterns": all, in
     * order */
    json_t *patterns = json_array();
    for (int i = 0; i < o->n_patterns; i++)
        json_array_append_new(patterns, json_string(ar_pattern_name(o->patterns[i])));
    json_object_set_new(summary, "pattern", json_string(ar_pattern_name(o->patterns[0])));
    json_object_set_new(summary, "patterns", patterns);
    json_object_set_new(summary, "pairs", st->pairs ? st->pairs : json_null());
    json_object_set_new(summary, "node", st->node ? st->node : json_null());
    json_object_set_new(summary, "combinations", st->combos);
    json_object_set_new(report, "summary", summary);
    json_object_set_new(report, "conditions",
                        ar_conditions_json(o, backend_name,
                                           json_string_value(json_object_get(summary, "datatype")),
                                           json_string_value(json_object_get(summary, "op"))));
    const char *cname = ar_coll_get(o->coll)->name;
    if (st->ran[AR_PATTERN_WORLD]) {
        ga_report_add_metric(report, "busbw_at_max", st->first_fig.busbw_at_max, "GB/s", true,
                             GA_WHERE_CLUSTER);
        ga_report_add_metric(report, "avg_busbw", st->first_fig.avg_busbw, "GB/s", true, GA_WHERE_CLUSTER);
        ar_figures_headlines(report, &st->first_fig, cname, ctx->world_size, ctx->node_count);
    }
    if (st->ran[AR_PATTERN_NODE]) {
        char label[96];
        snprintf(label, sizeof label, "%s busbw of the slowest node (intra-node)", cname);
        ga_report_add_headline(report,
                               &(ga_headline){.name = "node_busbw_min",
                                              .label = label,
                                              .value = st->node_busbw_min,
                                              .unit = "GB/s",
                                              .higher_is_better = true,
                                              .reference = o->min_node_busbw > 0 ? o->min_node_busbw : NAN});
    }
    if (st->ran[AR_PATTERN_PAIRS]) {
        char label[96];
        snprintf(label, sizeof label, "%s busbw of the median pair", cname);
        ga_report_add_headline(report, &(ga_headline){.name = "pair_busbw_median",
                                                      .label = label,
                                                      .value = st->pair_median_busbw,
                                                      .unit = "GB/s",
                                                      .higher_is_better = true,
                                                      .reference = NAN});
        ga_report_add_headline(report, &(ga_headline){.name = "pairs_flagged",
                                                      .label = "pairs flagged below the median",
                                                      .value = st->pairs_flagged,
                                                      .unit = "pairs",
                                                      .reference = NAN});
    }
    ga_report_add_nodes(report, st->node_records, ctx->world_size, sizeof(ar_record), ar_record_json, NULL);

    ga_findings_log(&st->findings, "COMM");
    return ga_report_finish(report, common, spec.name, "COMM", &st->findings,
                            ga_findings_exit_code(&st->findings));
}

int main(int argc, char **argv)
{
    ga_ctx ctx;
    ga_common_opts common;
    ar_opts o;
    ar_opts_defaults(&o);
    int argc0 = argc;
    char **argv0 = argv;
    int rc = ga_program_begin(&argc, &argv, &spec, &ctx, &common, &o);
    if (rc >= 0)
        return ga_program_end(&ctx, rc);
    ga_deadline_set_wait_timeout(o.timeout_s);
    const char *program = strrchr(argv0[0], '/') ? strrchr(argv0[0], '/') + 1 : argv0[0];
    program_collective(program, &o);

    ga_deadline_arm("choosing the backend");
    ga_backend kind = ga_backend_resolve(&ctx, o.backend);
    ga_deadline_disarm();
    int cc_major = 0;
#if GA_HAVE_CUDA
    if (kind == GA_BACKEND_GPU) {
        ga_gpu_info gpu;
        ga_deadline_arm("GPU selection");
        /* nccl-tests' NCCL_TESTS_DEVICE: every rank of a node on that device (one rank per node) */
        const char *dev = getenv("NCCL_TESTS_DEVICE");
        ga_gpu_select_device(&ctx, dev && *dev ? atoi(dev) : -1, &gpu);
        GA_MPI_CHECK(MPI_Allreduce(&gpu.cc_major, &cc_major, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        ga_deadline_disarm();
    }
#endif
    const char *backend_name = kind == GA_BACKEND_GPU ? "nccl" : "mpi";

    uint64_t sizes[AR_MAX_SIZES];
    char err[256];
    int n_sizes = ar_opts_finish(&o, kind == GA_BACKEND_GPU, common.quick, sizes, err, sizeof err);
    /* after ar_opts_finish: which flags mean nothing depends on the backend */
    for (int i = 0; n_sizes >= 0 && i < AR_N_IGNORED_MAX; i++)
        if (o.ignored & (1u << i)) {
            char line[256];
            ar_ignored_warning(&o, i, line, sizeof line);
            ga_error_once(spec.name, "%s", line);
        }
    backend_setup = o.setup;
    split_plan split;
    int split_rc = split_world(&ctx, &split, err, sizeof err);
    if (split_rc != 0)
        n_sizes = -1;
    bool world_only = o.n_patterns == 1 && o.patterns[0] == AR_PATTERN_WORLD;
    if (n_sizes > 0 && !world_only && split.n_groups > 1)
        snprintf(err, sizeof err,
                 "NCCL_TESTS_SPLIT_MASK applies to the world sweep alone, not to --pattern "
                 "node or pairs"),
            n_sizes = -1;
    if (n_sizes > 0 && o.pairs && ctx.node_count < 2 && ctx.world_size < 2)
        snprintf(err, sizeof err, "--pattern pairs needs at least 2 nodes, or 2 ranks on one node"),
            n_sizes = -1;
    /* every communicator a pattern runs on must suit the collective */
    for (int i = 0; i < o.n_patterns && n_sizes > 0; i++) {
        int group = o.patterns[i] == AR_PATTERN_PAIRS  ? (ctx.node_count >= 2 ? 2 * ctx.local_size : 2)
                    : o.patterns[i] == AR_PATTERN_NODE ? ctx.local_size
                                                       : split.size;
        if (ar_coll_get(o.coll)->rooted && o.root >= group)
            snprintf(err, sizeof err, "--root %d: the communicator has %d ranks", o.root, group),
                n_sizes = -1;
        else if (ar_coll_unsupported(o.coll, group))
            snprintf(err, sizeof err, "--collective %s: %s (%d)", ar_coll_get(o.coll)->name,
                     ar_coll_unsupported(o.coll, group), group),
                n_sizes = -1;
    }
    if (n_sizes > 0 && !world_only && (o.json_path[0] || o.per_iter || o.cycles != 1))
        snprintf(err, sizeof err, "-J, -I and -N apply to --pattern world alone, not to node or pairs"),
            n_sizes = -1;
    combo combos[AR_NTYPES * AR_NOPS];
    int n_combos = 0;
    if (n_sizes < 0)
        ga_error_once(spec.name, "%s", err);
    else
        n_combos = plan_combos(&ctx, &o, kind, cc_major, combos);
    if (n_sizes < 0 || n_combos <= 0) {
        split_free(&split);
        return ga_program_end(&ctx, GA_EXIT_USAGE);
    }
    if (!world_only && n_combos > 1)
        ga_log("COMM", "--pattern node and pairs run the first combination only (%s %s)",
               ar_dtype_get(combos[0].type)->name, ar_op_name(combos[0].op));

    /* on --verbose only: by default stdout is nccl-tests' output and the report's lines after it */
    ga_debug("COMM",
             "allreduce_bw: %s on %d ranks, %d nodes (%s), backend %s; %d sizes %llu..%llu B, %d "
             "combination%s, -n %d -w %d -c %d, -T %g s",
             ar_coll_get(o.coll)->name, ctx.world_size, ctx.node_count, ctx.launcher.detail, backend_name,
             n_sizes, (unsigned long long)sizes[0], (unsigned long long)sizes[n_sizes - 1], n_combos,
             n_combos == 1 ? "" : "s", o.iters, o.warmup, o.check, o.timeout_s);

    run_state st = {0};
    const char *min_bw = getenv("NCCL_TESTS_MIN_BW");
    st.min_bw = min_bw && *min_bw ? atof(min_bw) : -1;
    nt_state nt = {.cfg = nt_config(&o, program, kind)};
    char jerr[256] = "";
    if (ctx.world_rank == 0 && o.json_path[0]) {
        /* as nccl-tests: the file is taken at the start */
        if (ar_nt_json_reserve(o.json_path, nt.json_path, sizeof nt.json_path, jerr, sizeof jerr) == 0) {
            printf("# Writing JSON output to %s\n", nt.json_path);
            nt.json = ar_nt_json_new(&nt.cfg, argc0, argv0, environ);
        }
    }
    /* unlike nccl-tests, a -J file that cannot be created stops the run before it measures (issue 26) */
    int jbad = o.json_path[0] ? GA_AGREE_FAILURE(GA_EXIT_USAGE, jerr[0] ? jerr : NULL) : 0;
    if (jbad) {
        split_free(&split);
        return ga_program_end(&ctx, jbad);
    }
    json_t *report = NULL;
    if (ctx.world_rank == 0) {
        st.combos = json_array();
        ga_findings_init(&st.findings);
        const ga_job job = ga_ctx_job(&ctx);
        report = ga_report_new(&job, spec.name, &common);
    }
    for (int i = 0; i < o.n_patterns; i++) {
        st.ran[o.patterns[i]] = true;
        if (o.patterns[i] == AR_PATTERN_PAIRS)
            run_pairs(&ctx, &o, kind, combos[0], sizes, n_sizes, &st, report);
        else if (o.patterns[i] == AR_PATTERN_NODE)
            run_node(&ctx, &o, kind, combos[0], sizes, n_sizes, &st, report);
        else
            run_world(&ctx, &o, kind, combos, n_combos, sizes, n_sizes, &split, &nt, &st);
    }
    json_decref(nt.json);

    int exit_code = GA_EXIT_PASS;
    if (ctx.world_rank == 0) {
        exit_code = report_and_verdict(&ctx, &common, &o, backend_name, combos, &st, report);
        json_decref(report);
        ga_findings_free(&st.findings);
        free(st.node_records);
    }
    split_free(&split);
    return ga_program_end(&ctx, exit_code);
}
