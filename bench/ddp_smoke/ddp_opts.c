#include "ddp_opts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ga_outlier.h"
#include "ga_parse.h"

enum {
    OPT_STEPS = 'n', /* nccl-tests' iteration count */
    OPT_LAYERS = 256,
    OPT_HIDDEN,
    OPT_BATCH,
    OPT_EPOCHS,
    OPT_LR,
    OPT_MOMENTUM,
    OPT_SEED,
    OPT_DATA,
    OPT_SAMPLES,
    OPT_INPUT_DIM,
    OPT_CLASSES,
    OPT_BUCKET,
    OPT_MIN_IMPROVEMENT,
    OPT_STRAGGLER,
    OPT_BACKEND,
    OPT_REMEASURE,
    OPT_WAIT_TIMEOUT = 'T', /* nccl-tests' per-wait bound */
};

static const ga_option ddp_options[] = {
    {"layers", OPT_LAYERS, true, "N", "hidden layers of the MLP (default 2; 0 is a linear model)"},
    {"hidden", OPT_HIDDEN, true, "N", "width of each hidden layer (default 512, --quick 128)"},
    {"batch-size", OPT_BATCH, true, "N", "samples per rank per step (default 128, --quick 32)"},
    {"steps", OPT_STEPS, true, "N", "optimiser steps (default 500, --quick 300)"},
    {"epochs", OPT_EPOCHS, true, "N", "train for N passes over the data set instead of --steps"},
    {"lr", OPT_LR, true, "X", "learning rate (default 0.05)"},
    {"momentum", OPT_MOMENTUM, true, "X", "SGD momentum (default 0.9)"},
    {"seed", OPT_SEED, true, "N", "seed of the data, the teacher and the initial weights (default 1)"},
    {"data", OPT_DATA, true, "SRC", "synthetic (default) or idx:DIR, MNIST-format train-*-idx?-ubyte files"},
    {"samples", OPT_SAMPLES, true, "N", "synthetic data set size (default 65536, --quick 16384)"},
    {"input-dim", OPT_INPUT_DIM, true, "N", "synthetic features per sample (default 64)"},
    {"classes", OPT_CLASSES, true, "N", "synthetic classes (default 10)"},
    {"bucket-size", OPT_BUCKET, true, "BYTES", "gradient bucket cap, K/M suffixes (default 1M, --quick 64K)"},
    {"min-improvement", OPT_MIN_IMPROVEMENT, true, "PCT",
     "fail unless the loss falls by at least PCT percent of its start (default 30)"},
    {"straggler", OPT_STRAGGLER, true, "PCT",
     "warn of a rank whose compute time is PCT percent above the median and beyond the others' noise "
     "(default "
     "50; 0 turns it off)"},
    {"remeasure", OPT_REMEASURE, true, "N",
     "a straggler's compute time is measured again on every rank, up to N windows of steps (default 2, 0: "
     "never)"},
    {"backend", OPT_BACKEND, true, "auto|gpu|host",
     "where to train (default auto: GPU when every rank has one)"},
    {"wait-timeout", OPT_WAIT_TIMEOUT, true, "SEC",
     "bound of communicator init and of every wait for gradients (default 120)"},
};

/* The name -T/--wait-timeout had before every program spelled the per-wait bound alike. */
static const ga_alias ddp_aliases[] = {{"comm-timeout", "wait-timeout"}};

void ddp_opts_init(ddp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->hidden_layers = o->hidden = o->batch = o->steps = o->epochs = o->input_dim = o->classes = DDP_UNSET;
    o->samples = DDP_UNSET;
    o->lr = o->momentum = o->min_improvement = o->comm_timeout_s = o->straggler_pct = NAN;
    o->seed = o->bucket_bytes = DDP_UNSET;
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

static int ddp_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    ddp_opts *o = opts;
    long v = 0;
    uint64_t bytes = 0;
    switch (key) {
    case OPT_LAYERS:
        return set_int(arg, 0, 32, &o->hidden_layers, err, errlen);
    case OPT_HIDDEN:
        return set_int(arg, 1, 65536, &o->hidden, err, errlen);
    case OPT_BATCH:
        return set_int(arg, 1, 1 << 20, &o->batch, err, errlen);
    case OPT_STEPS:
        return set_int(arg, 1, DDP_MAX_STEPS, &o->steps, err, errlen);
    case OPT_EPOCHS:
        return set_int(arg, 1, 1 << 20, &o->epochs, err, errlen);
    case OPT_INPUT_DIM:
        return set_int(arg, 1, 1 << 20, &o->input_dim, err, errlen);
    case OPT_CLASSES:
        return set_int(arg, 2, 256, &o->classes, err, errlen);
    case OPT_SAMPLES:
        if (ga_parse_long(arg, 1, 1L << 31, &v, err, errlen))
            return -1;
        o->samples = v;
        return 0;
    case OPT_LR:
        return ga_parse_double(arg, 1e-12, 100.0, &o->lr, err, errlen);
    case OPT_MOMENTUM:
        return ga_parse_double(arg, 0.0, 0.999999, &o->momentum, err, errlen);
    case OPT_MIN_IMPROVEMENT: /* percent on the command line, a fraction in the checks */
        return ga_cli_parse_pct_fraction(arg, -1e11, 100, &o->min_improvement, err, errlen);
    case OPT_STRAGGLER:
        return ga_cli_parse_pct(arg, 0, 1e6, &o->straggler_pct, err, errlen);
    case OPT_WAIT_TIMEOUT:
        return ga_parse_double(arg, 0.001, 1e6, &o->comm_timeout_s, err, errlen);
    case OPT_SEED:
        if (ga_parse_long(arg, 0, 1L << 62, &v, err, errlen))
            return -1;
        o->seed = v;
        return 0;
    case OPT_BUCKET:
        if (ga_parse_size(arg, &bytes, err, errlen))
            return -1;
        if (bytes < 1 || bytes > (1ull << 40)) {
            snprintf(err, errlen, "bucket size must be 1 byte to 1T");
            return -1;
        }
        o->bucket_bytes = (int64_t)bytes;
        return 0;
    case OPT_DATA:
        if (strcmp(arg, "synthetic") == 0) {
            o->data_idx = false;
            return 0;
        }
        if (strncmp(arg, "idx:", 4) == 0 && strlen(arg + 4) >= sizeof o->idx_dir) {
            snprintf(err, errlen, "idx: path longer than %zu characters", sizeof o->idx_dir - 1);
            return -1;
        }
        if (strncmp(arg, "idx:", 4) == 0 && arg[4]) {
            o->data_idx = true;
            snprintf(o->idx_dir, sizeof o->idx_dir, "%s", arg + 4);
            return 0;
        }
        snprintf(err, errlen, "'%s' is neither 'synthetic' nor 'idx:DIR'", arg);
        return -1;
    case OPT_BACKEND:
        return ga_parse_backend(arg, &o->backend, err, errlen);
    case OPT_REMEASURE:
        return set_int(arg, 0, GA_REMEASURE_MAX, &o->remeasure, err, errlen);
    }
    return 0;
}

#define DEFAULT(field, value)                                                                                \
    do {                                                                                                     \
        if ((field) == DDP_UNSET)                                                                            \
            (field) = (value);                                                                               \
    } while (0)

#define DEFAULT_REAL(field, value)                                                                           \
    do {                                                                                                     \
        if (isnan(field))                                                                                    \
            (field) = (value);                                                                               \
    } while (0)

void ddp_opts_defaults(ddp_opts *o, bool quick)
{
    DEFAULT(o->hidden_layers, 2);
    DEFAULT(o->hidden, quick ? 128 : 512);
    DEFAULT(o->batch, quick ? 32 : 128);
    DEFAULT(o->input_dim, 64);
    DEFAULT(o->classes, 10);
    DEFAULT(o->samples, quick ? 16384 : 65536);
    DEFAULT_REAL(o->lr, 0.05);
    DEFAULT_REAL(o->momentum, 0.9);
    DEFAULT_REAL(o->min_improvement, 0.3);
    DEFAULT_REAL(o->comm_timeout_s, 120.0);
    DEFAULT(o->seed, 1);
    DEFAULT(o->bucket_bytes, quick ? 64 << 10 : 1 << 20); /* several buckets even for the small model */
    if (o->epochs == DDP_UNSET)
        DEFAULT(o->steps, quick ? 300 : 500);
}

int ddp_opts_resolve_steps(ddp_opts *o, int64_t n_samples, int world_size, char *err, size_t errlen)
{
    /* In 64 bits: epochs x steps per epoch overflowed an int to 0 or below, and a run of no step then read
     * its loss curve at -1. */
    int64_t global_batch = (int64_t)world_size * o->batch;
    if (n_samples < 1 || global_batch < 1) {
        snprintf(err, errlen, "no sample to train on (%lld samples, %lld per step)", (long long)n_samples,
                 (long long)global_batch);
        return -1;
    }
    if (o->epochs != DDP_UNSET) {
        int64_t steps = (int64_t)o->epochs * ((n_samples + global_batch - 1) / global_batch);
        if (steps > DDP_MAX_STEPS) {
            snprintf(
                err, errlen,
                "--epochs %d of %lld samples at %lld per step is %lld steps, more than %d: fewer epochs or "
                "a larger --batch-size",
                o->epochs, (long long)n_samples, (long long)global_batch, (long long)steps, DDP_MAX_STEPS);
            return -1;
        }
        o->steps = (int)steps;
    }
    if (o->steps < 1 || o->steps > DDP_MAX_STEPS) {
        snprintf(err, errlen, "%d steps is outside 1..%d", o->steps, DDP_MAX_STEPS);
        return -1;
    }
    return 0;
}

const ga_program_spec ddp_command_line = {
    .name = "ddp_smoke",
    .summary =
        "Trains an MLP data-parallel (NCCL on GPUs, MPI on the host) and checks that the loss falls and "
        "every replica ends identical.",
    .epilog = "Examples:\n"
              "  mpirun -np 16 --map-by ppr:8:node ddp_smoke --report-dir reports\n"
              "  mpirun -np 4 ddp_smoke --backend host --quick\n"
              "  mpirun -np 8 ddp_smoke --data idx:/data/mnist --epochs 2 --min-improvement 50",
    .options = ddp_options,
    .n_options = sizeof ddp_options / sizeof ddp_options[0],
    .on_option = ddp_opts_on_option,
    .default_timeout_s = 1800,
    .aliases = ddp_aliases,
    .n_aliases = sizeof ddp_aliases / sizeof ddp_aliases[0],
};
