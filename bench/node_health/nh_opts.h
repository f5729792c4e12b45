/* node_health's command line: the option table, its handler and what it fills. */
#ifndef NH_OPTS_H
#define NH_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ga_cli.h"
#include "nh_analysis.h"

typedef struct {
    char sysfs_root[1024];
    char kernel_log[1024]; /* "" = the live log */
    char sku[48];
    char sku_file[1024];
    int expect_gpus, expect_hcas;
    double expect_ib_rate_gbps;
    double xid_since_s; /* 0: every Xid since boot */
    char ib_hcas[256];  /* --ib-hcas: the compute ports in NCCL_IB_HCA's syntax, "" none */
    nh_sku_table skus;
    bool skus_loaded;
    double wait_timeout_s; /* -T/--wait-timeout, 0: none */
} nh_opts;

/* The program's command line (ga_program_spec): name, --help text, option table and handler. */
extern const ga_program_spec nh_command_line; /* its options are an nh_opts */

#endif
