/* The fabric in the summary: the transport allreduce_bw (or else ddp_smoke) recorded per node, what went
 * between nodes, and "InfiniBand not exercised" among what the run did not cover. Pure. */
#ifndef FABRIC_H
#define FABRIC_H

#include <jansson.h>
#include <stdbool.h>

#include "suite_util.h"

/* What node_health's report says about the fabric between nodes (fabric.c), for the placeholders
 * filled when allreduce_bw starts: {fabric_min:...}, {fabric_net} and {compute_hcas}. */
typedef struct {
    bool have;            /* node_health's report was read */
    char why[200];        /* when not: why */
    int nodes;            /* nodes it checked */
    int ranks_per_node;   /* its ranks per node, 0 unknown */
    int nodes_with_hca;   /* nodes with an active InfiniBand/RoCE port, or whose SKU expects HCAs */
    bool gdr_required;    /* such a node's SKU requires GPUDirect RDMA (nvidia_peermem) */
    double min_rate_gbps; /* the lowest node's active port rates summed (its SKU's HCA count at most), Gb/s */
    char min_host[64];    /* that node */
    /* {compute_hcas}: "=mlx5_0:1,mlx5_3:1,..." (NCCL_IB_HCA's syntax) when every node's compute ports have
     * the same names; "" with why otherwise */
    char compute_hcas[1024];
    char compute_hcas_why[200];
} suite_fabric_facts;

/* summary.fabric from the reports' "transport" (null when no report has one), and the line the profile's
 * not_covered gets when no InfiniBand (RoCE, RDMA plugin) carried the traffic between nodes. */
void suite_fabric_merge(json_t *summary, const json_t *reports);

/* The "Fabric" section of summary.md and summary.html: one row per node (nothing when summary.fabric is
 * null). */
void suite_fabric_md(sbuf *b, const json_t *summary);
void suite_fabric_html(sbuf *b, const json_t *summary);

/* The fabric facts in node_health's report (its summary.fabric): per node the active InfiniBand/RoCE ports'
 * rates summed, the highest ones only when the node's SKU says how many HCAs the compute fabric has (a
 * storage or front-end port is not the collectives' path); the lowest node; whether HCAs are there or
 * expected; whether GPUDirect RDMA is required; the compute ports' names when every node has the same ones.
 * report may be NULL, with why. */
void suite_fabric_facts_from(const json_t *node_health_report, const char *why, suite_fabric_facts *f);

/* The same from REPORT_DIR/node_health.json of run run_id (another run's report is no fact of this one). */
void suite_fabric_facts_read(const char *report_dir, const char *run_id, suite_fabric_facts *f);

#endif
