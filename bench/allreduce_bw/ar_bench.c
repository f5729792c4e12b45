#include "ar_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_runtime.h"
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

/* Test hooks, so that end-to-end tests can prove the check and the pairs analysis fail when they should:
 * ALLREDUCE_BW_TEST_WRONG_RANK=r corrupts one output element on world rank r before it is checked;
 * ALLREDUCE_BW_TEST_DELAY_RANK=r and ALLREDUCE_BW_TEST_DELAY_US=us make rank r late by us per timed
 * iteration (a slow node). Documented in docs/allreduce_bw.md; never set in production. */
static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static void test_delay(int iters)
{
    static int rank = -2, us = 0;
    if (rank == -2) {
        rank = env_int("ALLREDUCE_BW_TEST_DELAY_RANK", -1);
        us = env_int("ALLREDUCE_BW_TEST_DELAY_US", 0);
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

static void test_corrupt(const ar_call *call, void *out)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (env_int("ALLREDUCE_BW_TEST_WRONG_RANK", -1) == me && call->counts.recv_count > 0)
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
        test_delay(cfg->iters);
        b->run(b, call, cfg->iters * agg, what);
        return (ga_now() - t0) / ops;
    }
    double t0 = ga_now(), excluded = 0;
    for (int i = 0; i < cfg->iters; i++) {
        double ti = ga_now();
        test_delay(1);
        if (cfg->blocking == 1)
            for (int k = 0; k < agg; k++) {
                b->run(b, call, 1, what);
                barrier(b, what);
            }
        else
            b->run(b, call, agg, what);
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
        ar_fill_input(cfg->coll, &p, b->rank, in);
        b->put_input(b, call, in);
        if (b->graph_capture) { /* nccl-tests checks what a graph of one operation leaves */
            b->graph_capture(b, call, 1, what);
            b->graph_launch(b, 1, what);
        } else {
            b->run(b, call, 1, what);
        }
        b->get_output(b, call, out);
        test_corrupt(call, out);
        int64_t w = ar_count_wrong(cfg->coll, &p, b->rank, out);
        if (wrong == 0)
            wrong = w;
    }
    return wrong;
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

    rec->n_sizes = cfg->n_sizes;
    rec->group_size = b->nranks;
    rec->iters = cfg->iters;
    const char *cname = ar_coll_get(cfg->coll)->name;
    for (int s = 0; s < cfg->n_sizes; s++) {
        ar_sample *smp = &rec->samples[s];
        for (int pl = 0; pl < AR_PLACEMENTS; pl++) {
            ar_call call = {cfg->coll, cfg->type, cfg->op, cfg->root, {0}, pl == 1, cfg->agg_iters};
            ar_coll_counts(cfg->coll, cfg->sizes[s], cfg->type, b->nranks, &call.counts);
            char what[200];
            snprintf(what, sizeof what, "%s %s %s %llu B %s (%s, rank %d of %d)", cname,
                     ar_dtype_get(cfg->type)->name, ar_op_name(cfg->op), (unsigned long long)cfg->sizes[s],
                     placement_names[pl], cfg->label, b->rank, b->nranks);
            ga_phase("%s", what);

            /* at least one untimed operation per size and placement, as nccl-tests' BenchTime runs one */
            b->run(b, &call, cfg->warmup > 0 ? cfg->warmup : 1, what);
            barrier(b, what);
            smp->time_s[pl] =
                timed_loop(b, cfg, &call, what, n_iter ? iters_mine + (size_t)pl * cfg->iters : NULL);

            smp->wrong[pl] = -1;
            if (cfg->check > 0 && (!call.in_place || b->inplace_checkable(cfg->coll)) &&
                !(ar_coll_get(cfg->coll)->reduces && ar_check_skip_reason(cfg->type, cfg->op)))
                smp->wrong[pl] = check(b, cfg, &call, s, in, out, what);
        }
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
    }
    free(iters_mine);
    free(iters_all);
    free(all);
    free(in);
    free(out);
}
