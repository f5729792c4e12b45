/* ddp_smoke's command line. Values left at DDP_UNSET (NAN for reals) take their default after parsing, which
 * depends on
 * --quick. */
#ifndef DDP_OPTS_H
#define DDP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ga_cli.h"
#include "ga_backend.h"

#define DDP_UNSET (-1)

typedef struct {
    int hidden_layers, hidden, batch, steps, epochs, input_dim, classes;
    long samples;
    /* min_improvement: a fraction (percent on the command line); comm_timeout_s: -T/--wait-timeout */
    double lr, momentum, min_improvement, comm_timeout_s;
    double straggler_pct; /* --straggler: percent slower than the median compute time; 0 off, NAN default */
    int64_t seed, bucket_bytes;
    int remeasure; /* --remeasure: passes of remeasuring the compute time when a rank is a suspect */
    bool data_idx;
    char idx_dir[GA_PATH_MAX];
    ga_backend backend;
} ddp_opts;

/* Every field DDP_UNSET, synthetic data, backend auto. */
void ddp_opts_init(ddp_opts *o);
/* The program's command line (ga_program_spec): name, --help text, option table and handler, aliases. */
extern const ga_program_spec ddp_command_line;
/* Fills the defaults (smaller with --quick). */
void ddp_opts_defaults(ddp_opts *o, bool quick);

/* The most steps a run may take (--steps, or --epochs times the steps of one epoch). */
#define DDP_MAX_STEPS (1 << 30)

/* Sets o->steps from --epochs over n_samples at world_size x batch samples per step, in 64-bit arithmetic.
 * 0, or -1 with one line when the count is out of 1..DDP_MAX_STEPS (a usage error). */
int ddp_opts_resolve_steps(ddp_opts *o, int64_t n_samples, int world_size, char *err, size_t errlen);

#endif
