/* What each node offers the fabric between nodes, for the suite (gpuaccept run derives allreduce_bw's floor
 * across nodes and --expect-net from it): the node's expectation (SKU, HCAs, GPUDirect RDMA) and its active
 * compute InfiniBand/RoCE ports with their rates (nh_ports.h: storage and management ports are left out).
 * Pure. */
#ifndef NH_FABRIC_H
#define NH_FABRIC_H

#include <jansson.h>

#include "nh_analysis.h"
#include "nh_record.h"

/* summary.fabric: {"nodes": [{host, node, sku, expect_hcas, require_gdr, require_peermem (the same value, the
 * key the suite reads), compute_ports (how they were chosen), ports_active: [{hca, port, rate_gbps,
 * link_layer}]}]}, nodes in order. */
json_t *nh_fabric_json(const nh_record *all, int n, const nh_check_opts *opts);

#endif
