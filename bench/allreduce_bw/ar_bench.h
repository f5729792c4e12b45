/* The harness: one sweep of one collective, type and operation on one backend, both placements per size:
 * warm-up, the timed loop (host clock around -n iterations, after a barrier, complete on return), then the
 * check on fresh inputs. The same for every collective and backend. */
#ifndef AR_BENCH_H
#define AR_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "ar_backend.h"
#include "ar_record.h"

typedef struct {
    ar_coll_id coll;
    ar_dtype type;
    ar_op op;
    int root;
    int iters, warmup, check; /* check: how many checked runs per size and placement (0: none) */
    const uint64_t *sizes;
    int n_sizes;
    const char *label; /* names the communicator in timeout messages ("world", "pair 3 round 1") */
    /* nccl-tests' -m, -z, -I: operations per timed iteration, blocking mode 0-3, per-iteration times. 0 in
     * agg_iters means 1. */
    int agg_iters, blocking;
    bool per_iter;
    /* Time as a budget (ar_budget.h). deadline: the ga_now() by which the sweep should be done (0: none),
     * shared out over the sizes left; wait_bound: -T, one timed loop being one wait (0: none). With either,
     * the first warm-up operation of each size and placement is timed, the communicator agrees on the slowest
     * rank's time, and the warm-ups and timed iterations are fitted to the size's share (at least one of
     * each). */
    double deadline, wait_bound;
    /* The answer is known already (the fabric is slow): each size's first operation is its figure, as for a
     * group the gate judged. */
    bool first_is_figure;
    bool out_of_place_only; /* the screen: one placement is enough to compare groups */
    /* Called after each size on every rank of the world when set (the pairs and node patterns judge their
     * groups against each other there); its answer must be the same on every rank of a communicator. */
    struct ar_gate *gate;
} ar_sweep_cfg;

/* What the gate answers about the sizes that follow. */
enum { AR_GATE_GO = 0, AR_GATE_ONE_OP = 1, AR_GATE_STOP = 2, AR_GATE_JUDGED = 4 };
typedef struct ar_gate {
    /* mine: this rank's sample of the size, NULL on a rank that sits the sweep out; returns AR_GATE_* bits */
    int (*after_size)(struct ar_gate *g, int size_index, const ar_sample *mine);
} ar_gate;

/* Called on the communicator's rank 0 after each size with every rank's sample of it (nranks entries) and,
 * with per_iter, every rank's time per operation of each iteration: iter_times[(r * AR_PLACEMENTS + pl) *
 * iters + i] (NULL without per_iter). */
typedef void (*ar_size_done_fn)(void *user, int size_index, const ar_sample *samples,
                                const double *iter_times, int nranks);

/* Runs the sweep; fills rec's samples (rec->hdr is the caller's) and rec->n_sizes with the sizes run (fewer
 * when the gate stopped it). on_size may be NULL (no per-size gather). */
void ar_bench_sweep(ar_backend *b, const ar_sweep_cfg *cfg, ar_record *rec, ar_size_done_fn on_size,
                    void *user);

/* A rank that sits a gated sweep out (pairs: the member without a partner this round) calls the gate as the
 * others do, size after size, until it answers AR_GATE_STOP or the sizes end. */
void ar_bench_sit_out(const ar_sweep_cfg *cfg);

/* The slow-rank test hook (GPUACCEPT_TEST_SLOW_RANK/FACTOR, ar_bench.c) waits in proportion to the slowed
 * rank's recent operations. Before the first of them it has no figure, and on a loaded host its first
 * operations (the screen's, judged by the best of a few) were slowed far less than F times, so the screen
 * missed the slow rank. This times a few host allreduces of 1 MiB over world, load included, as its first
 * figure. Collective over world; nothing is timed when no rank has the hook set. */
void ar_bench_slow_hook_calibrate(MPI_Comm world);

/* Largest buffer the sweep needs, in bytes. */
size_t ar_bench_max_bytes(const ar_sweep_cfg *cfg, int nranks);

#endif
