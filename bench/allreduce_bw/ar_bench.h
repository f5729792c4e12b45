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
} ar_sweep_cfg;

/* Called on the communicator's rank 0 after each size with every rank's sample of it (nranks entries) and,
 * with per_iter, every rank's time per operation of each iteration: iter_times[(r * AR_PLACEMENTS + pl) *
 * iters + i] (NULL without per_iter). */
typedef void (*ar_size_done_fn)(void *user, int size_index, const ar_sample *samples,
                                const double *iter_times, int nranks);

/* Runs the sweep; fills rec's samples (rec->hdr is the caller's). on_size may be NULL (no per-size gather).
 */
void ar_bench_sweep(ar_backend *b, const ar_sweep_cfg *cfg, ar_record *rec, ar_size_done_fn on_size,
                    void *user);

/* Largest buffer the sweep needs, in bytes. */
size_t ar_bench_max_bytes(const ar_sweep_cfg *cfg, int nranks);

#endif
