/* mem_bw's command line: the option table and its handler (main.c holds the program). */
#include "mb_opts.h"

#include <stdio.h>
#include <string.h>

#include "ga_devreport.h"
#include "ga_parse.h"
#include "mb_triad.h"

enum {
    OPT_BACKEND = 256,
    OPT_PINNED,
    OPT_ITERS,
    OPT_MIN_EFF,
    OPT_MIN_HOST_EFF,
    OPT_P2P,
    OPT_MIN_P2P,
    OPT_TRIAD_KERNEL,
};

static const ga_option mb_options[] = {
    {.long_name = "size",
     .key = 's',
     .has_arg = true,
     .arg_name = "BYTES",
     .help = "bytes per array (default: GPU 1G; host 4x the last-level caches / ranks, >= 32M)",
     .type = GA_OPT_SIZE,
     .unit = "bytes",
     .at = GA_AT(mb_opts, size),
     .min = 4096,
     .max = 1099511627776.0},
    {.long_name = "pinned-size",
     .key = OPT_PINNED,
     .has_arg = true,
     .arg_name = "BYTES",
     .help = "pinned buffer of the H2D/D2H tests (default 256M)",
     .type = GA_OPT_SIZE,
     .unit = "bytes",
     .at = GA_AT(mb_opts, pinned_size),
     .min = 4096,
     .max = 1099511627776.0},
    {.long_name = "iters",
     .key = OPT_ITERS,
     .has_arg = true,
     .arg_name = "N",
     .help = "timed repetitions per test (default 20, --quick 5)",
     .type = GA_OPT_INT,
     .at = GA_AT(mb_opts, reps),
     .min = 1,
     .max = 100000},
    {.long_name = "backend",
     .key = OPT_BACKEND,
     .has_arg = true,
     .arg_name = "auto|gpu|host",
     .help = "what to measure (default auto: GPU when every rank has one; --min-efficiency without one is "
             "exit 3)",
     .type = GA_OPT_ENUM,
     .choices = "auto|gpu|host"},
    GA_DEVFLAG_OPTIONS("a test"),
    {.long_name = "min-efficiency",
     .key = OPT_MIN_EFF,
     .has_arg = true,
     .arg_name = "PCT",
     .help = "flag a GPU below PCT percent of its HBM peak, device tests (default 0: off)",
     .type = GA_OPT_PCT,
     .unit = "%",
     .at = GA_AT(mb_opts, min_efficiency),
     .min = 0,
     .max = 100,
     .flags = GA_OPT_FRACTION},
    {.long_name = "min-host-efficiency",
     .key = OPT_MIN_HOST_EFF,
     .has_arg = true,
     .arg_name = "PCT",
     .help = "flag a GPU below PCT percent of its PCIe line rate, H2D/D2H, all GPUs copying (default 0: off)",
     .type = GA_OPT_PCT,
     .unit = "%",
     .at = GA_AT(mb_opts, min_host_efficiency),
     .min = 0,
     .max = 100,
     .flags = GA_OPT_FRACTION},
    {.long_name = "p2p",
     .key = OPT_P2P,
     .help =
         "also the copy matrix between the GPUs of each node, every ordered pair alone (host path: between "
         "local ranks through shared memory)",
     .type = GA_OPT_FLAG,
     .at = GA_AT(mb_opts, p2p)},
    {.long_name = "min-p2p",
     .key = OPT_MIN_P2P,
     .has_arg = true,
     .arg_name = "GB/s",
     .help = "--p2p: flag a GPU pair below this (the SKU's link figure; default 0: relative only)",
     .type = GA_OPT_REAL,
     .unit = "GB/s",
     .at = GA_AT(mb_opts, min_p2p),
     .min = 0,
     .max = 1e6},
    {.long_name = "triad-kernel",
     .key = OPT_TRIAD_KERNEL,
     .has_arg = true,
     .arg_name = "grid|restrict|flat",
     .help = "GPU path: the device_rw triad's kernel (default flat: one pass, all loads before the stores; "
             "grid: a grid-stride loop; restrict: the same with read-only loads and streaming stores)",
     .type = GA_OPT_ENUM,
     .choices = "grid|restrict|flat"},
    {"threads", GA_DEVFLAG_OPT_THREADS, true, "N",
     "host path: triad threads per rank (default: node cores / ranks)", GA_OPT_INT},
    GA_WAIT_TIMEOUT_OPTION(mb_opts, wait_timeout_s),
};

static const char *const triad_kernel_names[MB_TRIAD_KERNELS] = {"grid", "restrict", "flat"};

const char *mb_triad_kernel_name(int k)
{
    return k >= 0 && k < MB_TRIAD_KERNELS ? triad_kernel_names[k] : "?";
}

static int parse_triad_kernel(const char *arg, mb_opts *o, char *err, size_t errlen)
{
    for (int k = 0; k < MB_TRIAD_KERNELS; k++)
        if (strcmp(arg, triad_kernel_names[k]) == 0) {
            o->triad_kernel = k;
            o->triad_kernel_set = true;
            return 0;
        }
    snprintf(err, errlen, "'%s' is not one of grid, restrict, flat", arg);
    return -1;
}

static int mb_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    mb_opts *o = opts;
    const ga_devflag_fields shared = {&o->tolerance, &o->remeasure, &o->relative_warn, &o->threads};
    int rc = 0;
    if (ga_devflag_on_option(&shared, key, arg, &rc, err, errlen))
        return rc;
    if (key == OPT_BACKEND)
        return ga_parse_backend(arg, &o->device, err, errlen);
    if (key == OPT_TRIAD_KERNEL)
        return parse_triad_kernel(arg, o, err, errlen);
    return 0;
}

/* --device, the first name of --backend (whose "cpu" it still takes), and --reps, mem_bw's name of
 * nccl-tests'
 * --iters: each warns once, then acts as the option it names. */
static const ga_alias mb_aliases[] = {{"device", "backend"}, {"reps", "iters"}};

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
