/* What each rank records for one sweep: its own time per size for both placements and the wrong elements it
 * found. Fixed size, gathered as bytes to rank 0 (ga_gather_records). */
#ifndef AR_RECORD_H
#define AR_RECORD_H

#include <stdint.h>

#include "ga_record.h"

#define AR_MAX_SIZES 64
#define AR_PLACEMENTS 2 /* 0 out-of-place, 1 in-place */

typedef struct {
    double time_s[AR_PLACEMENTS]; /* seconds per iteration, measured by this rank around its loop */
    int64_t wrong[AR_PLACEMENTS]; /* wrong elements in this rank's output; -1 not checked */
    int32_t iters[AR_PLACEMENTS]; /* timed iterations run: -n, or fewer when they did not fit the budget */
    int32_t warmups[AR_PLACEMENTS];
    /* the share of the timed section this rank's thread was runnable but waited for a CPU (the host busy
     * with other work, ga_run_queue_wait_now); -1 unknown */
    double cpu_wait[AR_PLACEMENTS];
} ar_sample;

typedef struct {
    ga_record_header hdr;
    int32_t group;      /* pairs mode: the pair this rank belonged to in the round, -1 sat out; else 0 */
    int32_t group_size; /* ranks in the communicator measured */
    int32_t n_sizes;    /* sizes measured: the sweep's, or fewer when it was stopped */
    int32_t iters;      /* timed iterations at the last size measured (samples[].iters: each size's) */
    int32_t unchecked;  /* sizes x placements whose check was skipped: no time was left for it */
    ar_sample samples[AR_MAX_SIZES];
} ar_record;

#endif
