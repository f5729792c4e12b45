/* lm_train's options: the model's size, the batch and optimiser, the data, the time-bounded phases and the
 * thresholds of its verdict. Names follow the other programs' for the same things (ddp_smoke's --batch-size,
 * --steps, --lr, --seed, --min-improvement, --straggler, --remeasure; -T/--wait-timeout; --backend). */
#include "lm_opts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ga_outlier.h"
#include "ga_parse.h"

enum {
    OPT_STEPS = 'n', /* nccl-tests' iteration count, as ddp_smoke */
    OPT_MODEL = 256,
    OPT_LAYERS,
    OPT_CHANNELS,
    OPT_HEADS,
    OPT_SEQ_LEN,
    OPT_VOCAB,
    OPT_BATCH,
    OPT_GRAD_ACCUM,
    OPT_WARMUP,
    OPT_LR,
    OPT_SEED,
    OPT_DATA,
    OPT_ZERO1,
    OPT_MIN_IMPROVEMENT,
    OPT_MIN_MFU,
    OPT_MIN_SCALING,
    OPT_MIN_TOKENS,
    OPT_SCALING,
    OPT_SCALING_RANKS,
    OPT_STRAGGLER,
    OPT_REMEASURE,
    OPT_BACKEND,
    OPT_FLOOR_SEVERITY,
    OPT_WAIT_TIMEOUT = 'T', /* nccl-tests' per-wait bound */
};

const ga_option lm_options[] = {
    {"model", OPT_MODEL, true, "NAME",
     "tiny|d12|d24|d36|d48: GPT-2 sizes 124M to 1558M, tiny for the host (default: tiny on the host path, "
     "d12 on GPUs)",
     GA_OPT_ENUM, .choices = "tiny|d12|d24|d36|d48"},
    {"layers", OPT_LAYERS, true, "N", "transformer blocks (overrides --model's)", GA_OPT_INT,
     .at = GA_AT(lm_opts, layers), .min = 1, .max = 256},
    {"channels", OPT_CHANNELS, true, "N", "model width (overrides --model's)", GA_OPT_INT,
     .at = GA_AT(lm_opts, channels), .min = 1, .max = 1 << 16},
    {"heads", OPT_HEADS, true, "N", "attention heads; must divide --channels (overrides --model's)",
     GA_OPT_INT, .at = GA_AT(lm_opts, heads), .min = 1, .max = 1 << 10},
    {"seq-len", OPT_SEQ_LEN, true, "N", "context length in tokens (overrides --model's)", GA_OPT_INT,
     .at = GA_AT(lm_opts, seq_len), .min = 1, .max = 1 << 16},
    {"vocab", OPT_VOCAB, true, "N", "vocabulary, padded to a multiple of 128 (overrides --model's)",
     GA_OPT_INT, .at = GA_AT(lm_opts, vocab), .min = 2, .max = 1 << 20},
    {"batch-size", OPT_BATCH, true, "N",
     "sequences per micro-batch per rank (GPU) (default 8 on the host path, 16 on GPUs, --quick 4)",
     GA_OPT_INT, .at = GA_AT(lm_opts, batch), .min = 1, .max = 1 << 16},
    {"grad-accum", OPT_GRAD_ACCUM, true, "N", "micro-batches per optimiser step (default 1)", GA_OPT_INT,
     .at = GA_AT(lm_opts, grad_accum), .min = 1, .max = 1 << 16},
    {"steps", OPT_STEPS, true, "N",
     "optimiser steps at most; fewer when the time (--timeout) runs out (default 300, --quick 40)",
     GA_OPT_INT, .at = GA_AT(lm_opts, steps), .min = 1, .max = LM_MAX_STEPS},
    {"warmup", OPT_WARMUP, true, "N", "learning-rate warm-up steps (default a twelfth of --steps, 1 to 20)",
     GA_OPT_INT, .at = GA_AT(lm_opts, warmup), .min = 0, .max = LM_MAX_STEPS},
    {"lr", OPT_LR, true, "X", "peak learning rate of AdamW (default 3e-3 for tiny, 6e-4 for GPT-2 sizes)",
     GA_OPT_REAL, .at = GA_AT(lm_opts, lr), .min = 1e-12, .max = 10.0},
    {"seed", OPT_SEED, true, "N", "seed of the initial weights and the synthetic stream (default 1)",
     GA_OPT_INT},
    {"data", OPT_DATA, true, "FILE",
     "an llm.c uint16 token shard (1024-byte header) instead of the synthetic stream", GA_OPT_STRING},
    {"zero1", OPT_ZERO1, false, NULL, "GPU path: ZeRO-1 (reduce-scatter, update the shard, all-gather)",
     GA_OPT_FLAG, .at = GA_AT(lm_opts, zero1)},
    {"min-improvement", OPT_MIN_IMPROVEMENT, true, "PCT",
     "fail unless the loss falls by PCT percent of the way from its start to the floor (the synthetic "
     "stream's entropy; 0 for a shard) (default 20; 0: no loss check)",
     GA_OPT_PCT, "%", .at = GA_AT(lm_opts, min_improvement), .min = 0, .max = 100, .flags = GA_OPT_FRACTION},
    {"min-mfu", OPT_MIN_MFU, true, "PCT",
     "fail when the model FLOPs utilisation is below PCT percent of the GPUs' dense bf16 peak (default 0: "
     "reported only)",
     GA_OPT_PCT, "%", .at = GA_AT(lm_opts, min_mfu), .min = 0, .max = 100, .flags = GA_OPT_FRACTION},
    {"min-tokens-per-s", OPT_MIN_TOKENS, true, "N",
     "fail when the job trains fewer than N tokens/s per GPU (a SKU's figure; default 0: reported only)",
     GA_OPT_REAL, "tokens/s", .at = GA_AT(lm_opts, min_tokens_per_gpu), .min = 0, .max = 1e12},
    {"floor-severity", OPT_FLOOR_SEVERITY, true, "fail|warn",
     "what a run below --min-mfu or --min-tokens-per-s is: warn for floors that are estimates (default fail; "
     "the suite passes the SKU figure's own \"regression\")",
     GA_OPT_ENUM, .choices = "fail|warn"},
    {"scaling", OPT_SCALING, false, NULL,
     "each node trains alone first, then the whole job: tokens/s per GPU of the job over a node's",
     GA_OPT_FLAG, .at = GA_AT(lm_opts, scaling)},
    {"scaling-ranks", OPT_SCALING_RANKS, true, "N",
     "with --scaling, groups of N consecutive ranks train alone instead of each node (implies --scaling)",
     GA_OPT_INT},
    {"min-scaling", OPT_MIN_SCALING, true, "PCT",
     "fail when the job's tokens/s per GPU is below PCT percent of the single node's (implies --scaling; "
     "default 0: reported only)",
     GA_OPT_PCT, "%"},
    {"straggler", OPT_STRAGGLER, true, "PCT",
     "warn of a rank whose step compute time is PCT percent above its peers' and beyond their noise (default "
     "50; 0 turns it off)",
     GA_OPT_PCT, "%", .at = GA_AT(lm_opts, straggler_pct), .min = 0, .max = 1e6},
    {"remeasure", OPT_REMEASURE, true, "N",
     "a straggler's step time is measured again on every rank, up to N windows of steps (default 2, 0: "
     "never)",
     GA_OPT_INT, .at = GA_AT(lm_opts, remeasure), .min = 0, .max = GA_REMEASURE_MAX},
    {"backend", OPT_BACKEND, true, "auto|gpu|host",
     "where to train (default auto: GPU when every rank has one)", GA_OPT_ENUM, .choices = "auto|gpu|host"},
    {"wait-timeout", OPT_WAIT_TIMEOUT, true, "SEC", "bound of every wait for gradients (default 120)",
     GA_OPT_REAL, "s", .at = GA_AT(lm_opts, comm_timeout_s), .min = 0.001, .max = 1e6},
};
const size_t lm_n_options = sizeof lm_options / sizeof lm_options[0];

void lm_opts_init(lm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->layers = o->channels = o->heads = o->seq_len = o->vocab = LM_UNSET;
    o->batch = o->grad_accum = o->steps = o->warmup = LM_UNSET;
    o->seed = LM_UNSET;
    o->lr = o->min_improvement = o->min_mfu = o->min_scaling = o->straggler_pct = o->comm_timeout_s = NAN;
    o->min_tokens_per_gpu = NAN;
    o->remeasure = GA_REMEASURE_DEFAULT;
    o->backend = GA_BACKEND_AUTO;
}

static int set_int(const char *arg, long min, long max, int *out, char *err, size_t errlen)
{
    long v = 0;
    if (ga_parse_long(arg, min, max, &v, err, errlen))
        return -1;
    *out = (int)v;
    return 0;
}

static int set_model(lm_opts *o, const char *arg, char *err, size_t errlen)
{
    lm_config cfg;
    char why[160];
    if (lm_config_named(arg, &cfg, why, sizeof why)) {
        /* the option's name is the command line's to add */
        const char *own = strncmp(why, "--model: ", 9) == 0 ? why + 9 : why;
        snprintf(err, errlen, "%s", own);
        return -1;
    }
    snprintf(o->model, sizeof o->model, "%s", arg);
    return 0;
}

static int set_path(char *out, size_t len, const char *arg, char *err, size_t errlen)
{
    if (!arg[0] || strlen(arg) >= len) {
        snprintf(err, errlen, "the path must have 1 to %zu characters", len - 1);
        return -1;
    }
    snprintf(out, len, "%s", arg);
    return 0;
}

int lm_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    lm_opts *o = opts;
    long v = 0;
    switch (key) {
    case OPT_MODEL:
        return set_model(o, arg, err, errlen);
    case OPT_SEED:
        if (ga_parse_long(arg, 0, 1L << 62, &v, err, errlen))
            return -1;
        o->seed = v;
        return 0;
    case OPT_DATA:
        return set_path(o->data, sizeof o->data, arg, err, errlen);
    case OPT_SCALING_RANKS:
        o->scaling = true;
        return set_int(arg, 1, 1 << 24, &o->scaling_ranks, err, errlen);
    case OPT_MIN_SCALING:
        o->scaling = true;
        return ga_cli_parse_pct_fraction(arg, 0, 1000, &o->min_scaling, err, errlen);
    case OPT_BACKEND:
        return ga_parse_backend(arg, &o->backend, err, errlen);
    case OPT_FLOOR_SEVERITY:
        o->floors_estimated = strcmp(arg, "warn") == 0;
        return 0;
    }
    return 0;
}

#define DEFAULT(field, value)                                                                                \
    do {                                                                                                     \
        if ((field) == LM_UNSET)                                                                             \
            (field) = (value);                                                                               \
    } while (0)

#define DEFAULT_REAL(field, value)                                                                           \
    do {                                                                                                     \
        if (isnan(field))                                                                                    \
            (field) = (value);                                                                               \
    } while (0)

void lm_opts_defaults(lm_opts *o, bool gpu, bool quick)
{
    if (!o->model[0])
        snprintf(o->model, sizeof o->model, "%s", gpu ? "d12" : "tiny");
    bool tiny = strcmp(o->model, "tiny") == 0;
    DEFAULT(o->batch, quick ? 4 : gpu ? 16 : 8);
    DEFAULT(o->grad_accum, 1);
    DEFAULT(o->steps, quick ? 40 : 300);
    /* short: under a --timeout the steps that run may be far fewer than asked, and a warm-up planned for
     * the steps asked would leave the learning rate near 0 for all of them */
    int warmup = o->steps / 12;
    DEFAULT(o->warmup, warmup < 1 ? 1 : warmup > 20 ? 20 : warmup);
    DEFAULT_REAL(o->lr, tiny ? 3e-3 : 6e-4);
    DEFAULT(o->seed, 1);
    DEFAULT_REAL(o->min_improvement, 0.2);
    DEFAULT_REAL(o->min_mfu, 0.0);
    DEFAULT_REAL(o->min_scaling, 0.0);
    DEFAULT_REAL(o->min_tokens_per_gpu, 0.0);
    DEFAULT_REAL(o->comm_timeout_s, 120.0);
}

int lm_opts_config(const lm_opts *o, lm_config *cfg, char *err, size_t errlen)
{
    lm_config base;
    if (lm_config_named(o->model[0] ? o->model : "tiny", &base, err, errlen))
        return -1;
    return lm_config_make(cfg, o->layers != LM_UNSET ? o->layers : base.layers,
                          o->channels != LM_UNSET ? o->channels : base.channels,
                          o->heads != LM_UNSET ? o->heads : base.heads,
                          o->seq_len != LM_UNSET ? o->seq_len : base.seq_len,
                          o->vocab != LM_UNSET ? o->vocab : base.vocab, err, errlen);
}

double lm_opts_straggler_ratio(const lm_opts *o)
{
    if (isnan(o->straggler_pct))
        return 1.5;
    return o->straggler_pct > 0 ? 1 + o->straggler_pct / 100 : 0;
}

const ga_program_spec lm_command_line = {
    .name = "lm_train",
    .summary =
        "Trains a GPT-2-family transformer data-parallel and reports tokens/s per GPU, MFU and scaling; "
        "the loss must fall, the replicas agree and no GPU hold the step back.",
    .epilog = "Examples:\n"
              "  mpirun -np 8 lm_train --model d12 --timeout 600 --report-dir reports\n"
              "  mpirun -np 16 --map-by ppr:8:node lm_train --scaling --min-scaling 90\n"
              "  mpirun -np 4 lm_train --backend host --steps 60",
    .options = lm_options,
    .n_options = sizeof lm_options / sizeof lm_options[0],
    .on_option = lm_opts_on_option,
    .default_timeout_s = 1800,
};
