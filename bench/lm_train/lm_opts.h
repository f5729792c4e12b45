/* lm_train's command line. Values left unset (LM_UNSET, NAN for reals) take their default after parsing, from
 * the model's size and the backend. Pure. */
#ifndef LM_OPTS_H
#define LM_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ga_backend.h"
#include "ga_cli.h"
#include "lm_config.h"

#define LM_UNSET (-1)
#define LM_MAX_STEPS (1 << 30)

typedef struct {
    char model[16]; /* a named size; "" until defaulted (tiny on the host path, d12 on GPUs) */
    int layers, channels, heads, seq_len, vocab; /* explicit sizes override the named size's */
    int batch, grad_accum, steps, warmup;
    double lr;
    int64_t seed;
    char data[GA_PATH_MAX]; /* "" synthetic, else an llm.c token shard */
    bool zero1;
    /* fractions (percent on the command line); NAN until defaulted */
    double min_improvement, min_mfu, min_scaling, straggler_pct;
    double min_tokens_per_gpu; /* --min-tokens-per-s: tokens/s per GPU; 0 reported only */
    bool floors_estimated;     /* --floor-severity warn: the throughput floors are estimates (warnings) */
    bool scaling;              /* --scaling: each node (or --scaling-ranks group) trains alone first */
    int scaling_ranks;         /* ranks per group of the scaling phase; 0: the node's */
    int remeasure;
    double comm_timeout_s;
    ga_backend backend;
} lm_opts;

void lm_opts_init(lm_opts *o);
/* A ga_option_handler for lm_options. */
int lm_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen);
/* Fills the defaults for the backend (gpu: true) and --quick. */
void lm_opts_defaults(lm_opts *o, bool gpu, bool quick);
/* The model's configuration from --model and the explicit sizes: 0, or -1 with one line (a usage error). */
int lm_opts_config(const lm_opts *o, lm_config *cfg, char *err, size_t errlen);
/* The straggler ratio: 1 + --straggler (default 50 %), 0 when the check is off. */
double lm_opts_straggler_ratio(const lm_opts *o);

extern const ga_option lm_options[];
extern const size_t lm_n_options;
/* The program's command line: name, --help text, the table above, the default --timeout. */
extern const ga_program_spec lm_command_line;

#endif
