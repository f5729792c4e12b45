/* gemm_flops' command line: the option table and its handler (main.c holds the program). */
#include "gf_opts.h"

#include <stdio.h>

#include "ga_devreport.h" /* ga_dtype_parse_list */
#include "ga_parse.h"

enum {
    OPT_DEVICE = 256,
    OPT_ITERS,
    OPT_MIN_EFF,
    OPT_DURATION,
    OPT_INTERVAL,
    OPT_MAX_DROP,
    OPT_BURN_DTYPE,
    OPT_SEED,
};

static const ga_option gf_options[] = {
    {"m", 'm', true, "N", "rows of C (default 8192 on a GPU, 2048 on the host; --quick 4096 / 512)"},
    {"n", 'n', true, "N", "columns of C (default as -m)"},
    {"k", 'k', true, "N", "inner dimension (default as -m)"},
    {"dtype", 'd', true, "LIST", "fp64,fp32,tf32,fp16,bf16,fp8,int8 or all (default all; host: fp32,fp64)"},
    {"backend", OPT_DEVICE, true, "auto|gpu|host",
     "where to run GEMMs (default auto: GPU when every rank has one; a GPU-only request, a GPU dtype or "
     "--min-efficiency, without one is exit 3)"},
    {"warmup", 'w', true, "N", "warm-up GEMMs per dtype (default 3)"},
    {"iters", OPT_ITERS, true, "N", "timed GEMMs per dtype (default: as many as fill 1 s, --quick 0.25 s)"},
    GA_DEVFLAG_OPTIONS("a dtype"),
    {"min-efficiency", OPT_MIN_EFF, true, "PCT", "flag a GPU below PCT percent of its peak (default 0: off)"},
    {"duration", OPT_DURATION, true, "SEC", "burn mode: GEMMs for SEC seconds, throttling and SDC checks"},
    {"interval", OPT_INTERVAL, true, "SEC", "burn interval (default duration/10, 1 to 60 s)"},
    {"max-drop", OPT_MAX_DROP, true, "PCT",
     "burn: flag a first-to-last interval drop above PCT (default 10)"},
    {"burn-dtype", OPT_BURN_DTYPE, true, "DTYPE",
     "dtype of the burn (default bf16 on a GPU, fp32 on the host)"},
    {"threads", GA_DEVFLAG_OPT_THREADS, true, "N",
     "host path: BLAS threads per rank (default: node cores / ranks)"},
    {"seed", OPT_SEED, true, "N", "input seed, the same on every rank (default 42)"},
};

static int gf_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    gf_cli *c = opts;
    gf_opts *o = &c->o;
    const ga_devflag_fields shared = {&o->tolerance, &o->remeasure, &o->relative_warn, &o->threads};
    int rc = 0;
    if (ga_devflag_on_option(&shared, key, arg, &rc, err, errlen))
        return rc;
    long v = 0;
    if (!c->burn_only)
        c->burn_only = key == OPT_INTERVAL     ? "--interval"
                       : key == OPT_MAX_DROP   ? "--max-drop"
                       : key == OPT_BURN_DTYPE ? "--burn-dtype"
                                               : NULL;
    switch (key) {
    case 'm':
    case 'n':
    case 'k':
        if (ga_parse_long(arg, 1, 1 << 17, &v, err, errlen))
            return -1;
        *(key == 'm' ? &o->m : key == 'n' ? &o->n : &o->k) = v;
        return 0;
    case 'd': {
        bool all = false;
        if (ga_dtype_parse_list(arg, &o->dtypes, &all, err, errlen))
            return -1;
        o->dtypes_explicit = !all;
        snprintf(c->dtype_arg, sizeof c->dtype_arg, "%s", arg);
        return 0;
    }
    case OPT_DEVICE:
        return ga_parse_backend(arg, &o->device, err, errlen);
    case 'w':
        if (ga_parse_long(arg, 0, 1000, &v, err, errlen))
            return -1;
        o->warmup = (int)v;
        return 0;
    case OPT_ITERS:
        if (ga_parse_long(arg, 1, 1000000, &v, err, errlen))
            return -1;
        o->iters = (int)v;
        return 0;
    case OPT_MIN_EFF:
        return ga_cli_parse_pct_fraction(arg, 0, 100, &o->min_efficiency, err, errlen);
    case OPT_DURATION:
        return ga_parse_double(arg, 0.1, 7 * 24 * 3600.0, &o->duration_s, err, errlen);
    case OPT_INTERVAL:
        return ga_parse_double(arg, 0.05, 3600, &o->interval_s, err, errlen);
    case OPT_MAX_DROP:
        return ga_cli_parse_pct(arg, 0, 100, &o->max_drop_pct, err, errlen);
    case OPT_BURN_DTYPE:
        if ((o->burn_dtype = ga_dtype_parse(arg)) < 0) {
            snprintf(err, errlen, "unknown dtype '%s'", arg);
            return -1;
        }
        return 0;
    case OPT_SEED:
        if (ga_parse_long(arg, 0, 0x7fffffffL, &v, err, errlen))
            return -1;
        o->seed = (uint64_t)v;
        return 0;
    }
    return 0;
}

/* --device, the first name of --backend (whose "cpu" it still takes): warns once, then acts as --backend. */
static const ga_alias gf_aliases[] = {{"device", "backend"}};

const ga_program_spec gf_command_line = {
    .name = "gemm_flops",
    .summary = "GEMM TFLOP/s per dtype on every GPU against its model's median and datasheet peak; burn mode "
               "for throttling and silent data corruption.",
    .epilog = "Examples:\n"
              "  mpirun -np 16 --map-by ppr:8:node gemm_flops --dtype all --min-efficiency 60\n"
              "  mpirun -np 16 --map-by ppr:8:node gemm_flops --dtype bf16 --duration 600\n"
              "  mpirun -np 2 gemm_flops --backend host -m 2048 -n 2048 -k 2048\n"
              "Peaks: docs/gpu-peaks.md. Report: docs/gemm_flops.md.",
    .options = gf_options,
    .n_options = sizeof gf_options / sizeof gf_options[0],
    .on_option = gf_opts_on_option,
    .default_timeout_s = 1800,
    .aliases = gf_aliases,
    .n_aliases = sizeof gf_aliases / sizeof gf_aliases[0],
};
