/* mem_bw's command line: the option table and its handler (main.c holds the program). */
#include "mb_opts.h"

#include <stdint.h>
#include <stdio.h>

#include "ga_devreport.h"
#include "ga_parse.h"

enum {
    OPT_DEVICE = 256,
    OPT_PINNED,
    OPT_REPS,
    OPT_MIN_EFF,
    OPT_MIN_HOST_EFF,
};

static const ga_option mb_options[] = {
    {"size", 's', true, "BYTES",
     "bytes per array (default: GPU 1G; host 4x the last-level caches / ranks, >= 32M)"},
    {"pinned-size", OPT_PINNED, true, "BYTES", "pinned buffer of the H2D/D2H tests (default 256M)"},
    {"reps", OPT_REPS, true, "N", "timed repetitions per test (default 20, --quick 5)"},
    {"backend", OPT_DEVICE, true, "auto|gpu|host",
     "what to measure (default auto: GPU when every rank has one; --min-efficiency without one is exit 3)"},
    GA_DEVFLAG_OPTIONS("a test"),
    {"min-efficiency", OPT_MIN_EFF, true, "PCT",
     "flag a GPU below PCT percent of its HBM peak, device tests (default 0: off)"},
    {"min-host-efficiency", OPT_MIN_HOST_EFF, true, "PCT",
     "flag a GPU below PCT percent of its PCIe line rate, H2D/D2H, all GPUs copying (default 0: off)"},
    {"threads", GA_DEVFLAG_OPT_THREADS, true, "N",
     "host path: triad threads per rank (default: node cores / ranks)"},
};

static int mb_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    mb_opts *o = opts;
    const ga_devflag_fields shared = {&o->tolerance, &o->remeasure, &o->relative_warn, &o->threads};
    int rc = 0;
    if (ga_devflag_on_option(&shared, key, arg, &rc, err, errlen))
        return rc;
    long v = 0;
    switch (key) {
    case 's':
    case OPT_PINNED: {
        uint64_t sz = 0;
        if (ga_parse_size(arg, &sz, err, errlen))
            return -1;
        if (sz < 4096 || sz > ((uint64_t)1 << 40)) {
            snprintf(err, errlen, "'%s': between 4K and 1T", arg);
            return -1;
        }
        *(key == 's' ? &o->size : &o->pinned_size) = sz;
        return 0;
    }
    case OPT_REPS:
        if (ga_parse_long(arg, 1, 100000, &v, err, errlen))
            return -1;
        o->reps = (int)v;
        return 0;
    case OPT_DEVICE:
        return ga_parse_backend(arg, &o->device, err, errlen);
    case OPT_MIN_EFF:
        return ga_cli_parse_pct_fraction(arg, 0, 100, &o->min_efficiency, err, errlen);
    case OPT_MIN_HOST_EFF:
        return ga_cli_parse_pct_fraction(arg, 0, 100, &o->min_host_efficiency, err, errlen);
    }
    return 0;
}

/* --device, the first name of --backend (whose "cpu" it still takes): warns once, then acts as --backend. */
static const ga_alias mb_aliases[] = {{"device", "backend"}};

const ga_program_spec mb_command_line = {
    .name = "mem_bw",
    .summary =
        "Device memory and host-link bandwidth of every GPU (or each rank's NUMA node on the host path) "
        "against its model's median and datasheet peak.",
    .epilog = "Examples:\n"
              "  mpirun -np 16 --map-by ppr:8:node mem_bw --min-efficiency 70\n"
              "  mpirun -np 2 mem_bw --backend host\n"
              "Peaks: docs/gpu-peaks.md. Report: docs/mem_bw.md.",
    .options = mb_options,
    .n_options = sizeof mb_options / sizeof mb_options[0],
    .on_option = mb_opts_on_option,
    .default_timeout_s = 900,
    .aliases = mb_aliases,
    .n_aliases = sizeof mb_aliases / sizeof mb_aliases[0],
};
