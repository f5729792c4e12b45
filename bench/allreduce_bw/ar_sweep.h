/* The sweep's sizes and the aggregation of per-rank times into the figures of one table line. Pure. */
#ifndef AR_SWEEP_H
#define AR_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "ar_coll.h"
#include "ar_record.h"

/* Sizes from min to max, multiplying by factor when factor > 1, else adding step (nccl-tests' -b -e -f -i).
 * Returns how many, or -1 with a message when there would be more than max_n or the arguments are bad. */
int ar_sweep_sizes(uint64_t min_bytes, uint64_t max_bytes, uint64_t factor, uint64_t step, uint64_t *out,
                   int max_n, char *err, size_t errlen);

/* nccl-tests' -a: which per-rank time the line reports. */
typedef enum { AR_TIME_RANK0 = 0, AR_TIME_AVG = 1, AR_TIME_MIN = 2, AR_TIME_MAX = 3 } ar_time_mode;

/* One size and placement over a group of ranks. */
typedef struct {
    double time_s;               /* the time reported (per -a) */
    double min_s, mean_s, max_s; /* across the ranks */
    int slowest;                 /* index (into the ranks given) of the rank with the max time */
    int64_t wrong;               /* summed over the ranks; -1 when no rank checked */
} ar_agg;

/* Aggregates sample[placement] of n ranks, reached through samples[i] (one pointer per rank). */
void ar_aggregate(const ar_sample *const *samples, int n, int placement, ar_time_mode mode, ar_agg *out);

#endif
