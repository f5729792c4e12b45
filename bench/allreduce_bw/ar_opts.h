/* allreduce_bw's command line: nccl-tests' flags where they exist, and the sweep's defaults. */
#ifndef AR_OPTS_H
#define AR_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ar_coll.h"
#include "ga_cli.h"
#include "ga_backend.h"

typedef struct {
    uint64_t min_bytes, max_bytes, step_bytes, step_factor;
    bool set_min, set_max, set_step, set_factor, set_iters, set_warmup;
    int iters, warmup, check;
    unsigned type_mask, op_mask; /* bit per ar_dtype / ar_op */
    bool all_types;
    ar_coll_id coll;
    int root;
    int average;      /* ar_time_mode */
    double timeout_s; /* -T/--wait-timeout: each wait (the whole run is the common --timeout) */
    ga_backend backend;
    double min_busbw;
    bool pairs;
    int rounds;       /* 0: default */
    double tolerance; /* --tolerance, as a fraction */
} ar_opts;

#define AR_N_OPTIONS 18
extern const ga_option ar_options[AR_N_OPTIONS];

void ar_opts_defaults(ar_opts *o);
int ar_on_option(void *opts, int key, const char *arg, char *err, size_t errlen);
/* Applies the defaults that depend on the backend and --quick, and builds the sizes. Returns how many, or -1
 * with a message. */
int ar_opts_finish(ar_opts *o, bool gpu, bool quick, uint64_t *sizes, char *err, size_t errlen);

#endif
