/* node_health's command line: the option table and its handler (main.c holds the program). */
#include "nh_opts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ga_parse.h"
#include "nh_node.h"
#include "nh_ports.h"
#include "nh_sku.h"

enum {
    OPT_SYSFS_ROOT = 256,
    OPT_KERNEL_LOG,
    OPT_SKU,
    OPT_SKU_FILE,
    OPT_EXPECT_GPUS,
    OPT_EXPECT_HCAS,
    OPT_EXPECT_IB_RATE,
    OPT_XID_SINCE,
    OPT_IB_HCAS
};

static const ga_option nh_options[] = {
    {"sysfs-root", OPT_SYSFS_ROOT, true, "DIR",
     "read InfiniBand ports, modules and NUMA nodes under DIR (default /sys)", GA_OPT_PATH},
    {"kernel-log", OPT_KERNEL_LOG, true, "FILE",
     "read Xids from FILE instead of the live kernel log (/dev/kmsg, then dmesg)", GA_OPT_PATH},
    {"xid-since", OPT_XID_SINCE, true, "SECONDS",
     "judge only the Xids logged in the last SECONDS (default: every Xid since boot)", GA_OPT_REAL, "s"},
    {.long_name = "sku",
     .key = OPT_SKU,
     .has_arg = true,
     .arg_name = "NAME",
     .help = "hold every node to this SKU of the SKU file (default: match the GPU model)",
     .type = GA_OPT_STRING,
     .at = GA_AT(nh_opts, sku),
     .cap = GA_CAP(nh_opts, sku),
     .flags = GA_OPT_NONEMPTY},
    {"sku-file", OPT_SKU_FILE, true, "FILE", "expectations per SKU (default: the built-in skus.json)",
     GA_OPT_PATH},
    {.long_name = "expect-gpus",
     .key = OPT_EXPECT_GPUS,
     .has_arg = true,
     .arg_name = "N",
     .help = "GPUs every node must have (overrides the SKU)",
     .type = GA_OPT_INT,
     .at = GA_AT(nh_opts, expect_gpus),
     .min = 0,
     .max = 1024},
    {.long_name = "expect-hcas",
     .key = OPT_EXPECT_HCAS,
     .has_arg = true,
     .arg_name = "N",
     .help = "compute InfiniBand/RoCE ports every node must have (overrides the SKU)",
     .type = GA_OPT_INT,
     .at = GA_AT(nh_opts, expect_hcas),
     .min = 0,
     .max = 1024},
    {.long_name = "expect-ib-rate",
     .key = OPT_EXPECT_IB_RATE,
     .has_arg = true,
     .arg_name = "GBPS",
     .help = "rate every compute port must run at, Gb/s (overrides the SKU)",
     .type = GA_OPT_REAL,
     .unit = "Gb/s",
     .at = GA_AT(nh_opts, expect_ib_rate_gbps),
     .min = 1,
     .max = 100000},
    {"ib-hcas", OPT_IB_HCAS, true, "LIST",
     "the compute ports, as NCCL_IB_HCA takes them (mlx5_0,mlx5_3:1; ^ excludes, = exact); default: "
     "NCCL_IB_HCA, then the SKU's compute_hcas, then the fastest ports",
     GA_OPT_LIST},
    GA_WAIT_TIMEOUT_OPTION(nh_opts, wait_timeout_s),
};

static int nh_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    nh_opts *o = opts;
    switch (key) {
    case OPT_SYSFS_ROOT:
        if (nh_sysfs_root_check(arg, err, errlen))
            return -1;
        snprintf(o->sysfs_root, sizeof o->sysfs_root, "%s", arg);
        return 0;
    case OPT_KERNEL_LOG: {
        /* A saved log, a regular file: a directory reads as nothing, a FIFO would block every rank. */
        int fd = open(arg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        bool regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        int saved = errno;
        if (fd >= 0)
            close(fd);
        if (!regular) {
            snprintf(err, errlen, "cannot read '%s': %s", arg,
                     fd < 0 ? strerror(saved) : "not a regular file");
            return -1;
        }
        snprintf(o->kernel_log, sizeof o->kernel_log, "%s", arg);
        return 0;
    }
    case OPT_XID_SINCE: {
        char *end = NULL;
        o->xid_since_s = strtod(arg, &end);
        if (end == arg || *end || !(o->xid_since_s > 0 && o->xid_since_s < 1e9)) {
            snprintf(err, errlen, "--xid-since '%s': a number of seconds above 0", arg);
            return -1;
        }
        return 0;
    }
    case OPT_SKU_FILE: {
        size_t len = 0;
        char why[256];
        char *text = nh_read_text_file(arg, 1u << 20, &len, why, sizeof why);
        if (!text) {
            snprintf(err, errlen, "--sku-file: %s", why);
            return -1;
        }
        int rc = nh_sku_table_parse(text, &o->skus, why, sizeof why);
        free(text);
        if (rc) {
            snprintf(err, errlen, "--sku-file %s: %s", arg, why);
            return -1;
        }
        o->skus_loaded = true;
        snprintf(o->sku_file, sizeof o->sku_file, "%s", arg);
        return 0;
    }
    case OPT_IB_HCAS: {
        char why[160];
        if (strlen(arg) >= sizeof o->ib_hcas || nh_ib_list_check(arg, why, sizeof why)) {
            snprintf(err, errlen, "--ib-hcas '%.60s': %s", arg,
                     strlen(arg) >= sizeof o->ib_hcas ? "longer than 255 bytes" : why);
            return -1;
        }
        snprintf(o->ib_hcas, sizeof o->ib_hcas, "%s", arg);
        return 0;
    }
    }
    return 0;
}

const ga_program_spec nh_command_line = {
    .name = "node_health",
    .summary = "Checks every GPU (NVML), kernel log, InfiniBand/RoCE port and GPUDirect RDMA of every node.",
    .epilog = "Example: mpirun -np 16 --map-by ppr:8:node node_health --report-dir reports\n"
              "Replay a node's state: node_health --sysfs-root saved/sys --kernel-log saved/dmesg.txt",
    .options = nh_options,
    .n_options = sizeof nh_options / sizeof nh_options[0],
    .on_option = nh_opts_on_option,
    .default_timeout_s = 120,
};
