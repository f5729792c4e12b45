/* gemm_flops' command line: the option table and its handler (main.c holds the program). */
#include "gf_opts.h"

#include <stdio.h>
#include <string.h>

#include "ga_devreport.h" /* ga_dtype_parse_list */
#include "ga_parse.h"

enum {
    OPT_BACKEND = 256,
    OPT_ITERS,
    OPT_MIN_EFF,
    OPT_DURATION,
    OPT_INTERVAL,
    OPT_MAX_DROP,
    OPT_BURN_DTYPE,
    OPT_SEED,
    OPT_LAYOUT,
    OPT_ALGOS,
};

static const ga_option gf_options[] = {
    {"m", 'm', true, "N", "rows of C (default 8192 on a GPU, 2048 on the host; --quick 4096 / 512)",
     GA_OPT_INT},
    {"n", 'n', true, "N", "columns of C (default as -m)", GA_OPT_INT},
    {"k", 'k', true, "N", "inner dimension (default as -m)", GA_OPT_INT},
    {"datatype", 'd', true, "LIST", "fp64,fp32,tf32,fp16,bf16,fp8,int8 or all (default all; host: fp32,fp64)",
     GA_OPT_LIST},
    {"backend", OPT_BACKEND, true, "auto|gpu|host",
     "where to run GEMMs (default auto: GPU when every rank has one; a GPU-only request, a GPU dtype or "
     "--min-efficiency, without one is exit 3)",
     GA_OPT_ENUM, .choices = "auto|gpu|host"},
    {.long_name = "warmup",
     .key = 'w',
     .has_arg = true,
     .arg_name = "N",
     .help = "warm-up GEMMs per dtype (default 3)",
     .type = GA_OPT_INT,
     .at = GA_AT(gf_cli, o.warmup),
     .min = 0,
     .max = 1000},
    {.long_name = "iters",
     .key = OPT_ITERS,
     .has_arg = true,
     .arg_name = "N",
     .help = "timed GEMMs per dtype (default: as many as fill 1 s, --quick 0.25 s)",
     .type = GA_OPT_INT,
     .at = GA_AT(gf_cli, o.iters),
     .min = 1,
     .max = 1000000},
    GA_DEVFLAG_OPTIONS("a dtype"),
    {.long_name = "min-efficiency",
     .key = OPT_MIN_EFF,
     .has_arg = true,
     .arg_name = "PCT",
     .help = "flag a GPU below PCT percent of its peak (default 0: off)",
     .type = GA_OPT_PCT,
     .unit = "%",
     .at = GA_AT(gf_cli, o.min_efficiency),
     .min = 0,
     .max = 100,
     .flags = GA_OPT_FRACTION},
    {.long_name = "duration",
     .key = OPT_DURATION,
     .has_arg = true,
     .arg_name = "SEC",
     .help = "burn mode: GEMMs for SEC seconds, throttling and SDC checks",
     .type = GA_OPT_REAL,
     .unit = "s",
     .at = GA_AT(gf_cli, o.duration_s),
     .min = 0.1,
     .max = 7 * 24 * 3600.0},
    {"interval", OPT_INTERVAL, true, "SEC", "burn interval (default duration/10, 1 to 60 s)", GA_OPT_REAL,
     "s"},
    {"max-drop", OPT_MAX_DROP, true, "PCT", "burn: flag a first-to-last interval drop above PCT (default 10)",
     GA_OPT_PCT, "%"},
    {"burn-dtype", OPT_BURN_DTYPE, true, "DTYPE",
     "dtype of the burn (default bf16 on a GPU, fp32 on the host)", GA_OPT_ENUM},
    {"threads", GA_DEVFLAG_OPT_THREADS, true, "N",
     "host path: BLAS threads per rank (default: node cores / ranks)", GA_OPT_INT},
    {"layout", OPT_LAYOUT, true, "tn|nn",
     "GPU path: C = A^T B (tn) or C = A B (nn, default, as a row-major framework matmul); fp8 and int8 stay "
     "tn (host path: always tn)",
     GA_OPT_ENUM, .choices = "tn|nn"},
    {.long_name = "algos",
     .key = OPT_ALGOS,
     .has_arg = true,
     .arg_name = "N",
     .help = "GPU path: time up to N of cuBLASLt's heuristic algorithms per dtype, keep the fastest unless "
             "within 1 % of the first (default 8; 1: the first, untimed)",
     .type = GA_OPT_INT,
     .at = GA_AT(gf_cli, o.algos),
     .min = 1,
     .max = GF_MAX_ALGOS},
    {"seed", OPT_SEED, true, "N", "input seed, the same on every rank (default 42)", GA_OPT_INT},
    GA_WAIT_TIMEOUT_OPTION(gf_cli, wait_timeout_s),
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
    case OPT_BACKEND:
        return ga_parse_backend(arg, &o->device, err, errlen);
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
    case OPT_LAYOUT:
        if (strcmp(arg, "tn") != 0 && strcmp(arg, "nn") != 0) {
            snprintf(err, errlen, "--layout must be tn or nn, not '%s'", arg);
            return -1;
        }
        o->layout_nn = arg[0] == 'n';
        return 0;
    case OPT_SEED:
        if (ga_parse_long(arg, 0, 0x7fffffffL, &v, err, errlen))
            return -1;
        o->seed = (uint64_t)v;
        return 0;
    }
    return 0;
}

/* --device, the first name of --backend (whose "cpu" it still takes), and --dtype, gemm_flops' name of
 * nccl-tests' --datatype: each warns once, then acts as the option it names. */
static const ga_alias gf_aliases[] = {{"device", "backend"}, {"dtype", "datatype"}};

const ga_program_spec gf_command_line = {
    .name = "gemm_flops",
    .summary = "GEMM TFLOP/s per dtype on every GPU against its model's median and datasheet peak; burn mode "
               "for throttling and silent data corruption.",
    .epilog = "Examples:\n"
              "  mpirun -np 16 --map-by ppr:8:node gemm_flops --datatype all --min-efficiency 60\n"
              "  mpirun -np 16 --map-by ppr:8:node gemm_flops --datatype bf16 --duration 600\n"
              "  mpirun -np 2 gemm_flops --backend host -m 2048 -n 2048 -k 2048\n"
              "Peaks: docs/gpu-peaks.md. Report: docs/gemm_flops.md.",
    .options = gf_options,
    .n_options = sizeof gf_options / sizeof gf_options[0],
    .on_option = gf_opts_on_option,
    .default_timeout_s = 1800,
    .aliases = gf_aliases,
    .n_aliases = sizeof gf_aliases / sizeof gf_aliases[0],
};
