/* node_health's analysis: the gathered records in, findings and a typed outcome out. Pure (the core alone):
 * the fixture tests hand it records built from case folders. Checks, sources and codes: docs/node_health.md.
 */
#ifndef NH_ANALYSIS_H
#define NH_ANALYSIS_H

#include "ga_findings.h"
#include "nh_ports.h"
#include "nh_record.h"
#include "nh_sku.h"

/* What the command line says about expectations; -1 where it says nothing. */
typedef struct {
    const nh_sku_table *skus;
    const char *sku; /* --sku NAME, or NULL to match each node's GPU model */
    int expect_gpus, expect_hcas;
    double expect_ib_rate_gbps;
    const char *ib_hcas; /* --ib-hcas LIST (NCCL_IB_HCA's syntax), NULL or "": none (nh_ports.h) */
} nh_check_opts;

/* How much was checked, for the headlines and the log: what could not be checked is counted, never hidden. */
typedef struct {
    int nodes;
    int gpus_checked;       /* GPUs NVML answered for */
    int gpus_expected;      /* sum over nodes of the expected GPU count, -1 when no node expects one */
    int nodes_without_nvml; /* nodes where no rank could load NVML */
    int nodes_without_kernel_log;
    int nodes_without_ib; /* nodes whose sysfs has no InfiniBand class, or no HCA */
    int ports_checked, ports_active;
    int xids, xids_failing;    /* distinct (GPU, Xid) pairs in the kernel logs */
    int gpus_locality_unknown; /* GPUs whose NUMA node or whose HCAs' NUMA nodes are unknown */
    size_t fail, warn;
} nh_outcome;

/* Is this Xid one that means a bad GPU, memory or link (a failure) rather than a fault an application can
 * cause (a warning)? The list and why: docs/node_health.md. */
bool nh_xid_is_failure(int xid);

/* The expectation for one node: the SKU named by opts->sku or matched by gpu_name (may be NULL or ""), then
 * the command line's overrides. */
nh_expect nh_expect_for(const nh_check_opts *opts, const char *gpu_name);

/* The roles of the ports of node `node`'s checker record (NULL when the node has none), as nh_check judges
 * them: the expectation of the node's GPU model and opts->ib_hcas through nh_port_roles_choose. */
const nh_record *nh_node_port_roles(const nh_record *all, int n, int node, const nh_check_opts *opts,
                                    nh_port_roles *roles);

/* Writes each node checker's port roles into its ports (nh_port.role), for the report. */
void nh_fill_port_roles(nh_record *all, int n, const nh_check_opts *opts);

/* Checks every node and GPU of the n gathered records. Findings are added in node order; returns 0, or -1
 * when there is no SKU table or opts->sku names none of it (a usage error the program reports before it
 * runs). */
int nh_check(const nh_record *all, int n, const nh_check_opts *opts, ga_findings *f, nh_outcome *out);

#endif
