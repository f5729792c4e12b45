/* The consistency audit: over the gathered records of every rank, which fields disagree across nodes (the
 * majority value and the nodes that deviate), ranks that disagree with the rest of their node, and missing
 * GPUs. Pure: no MPI, no CUDA, so it is tested with fixtures of many nodes. */
#ifndef ENV_ANALYSIS_H
#define ENV_ANALYSIS_H

#include <jansson.h>

#include "env_record.h"
#include "ga_findings.h"

typedef struct {
    int expect_gpus;       /* per node; 0 = no expectation */
    double wait_timeout_s; /* -T/--wait-timeout, 0: none */
} env_audit_opts;

/* Adds findings to f and returns the "consistency" summary for the report (a new reference): one entry per
 * audited field with its majority value, how many nodes agree and the deviating nodes. Records must be in
 * world-rank order with node indices 0..nodes-1. */
json_t *env_audit_consistency(const env_record *records, int n, const env_audit_opts *opts, ga_findings *f);

/* Distinct GPUs (by UUID) the ranks of a node see together: each rank may see only its own. */
int env_node_gpu_count(const env_record *records, int n, int node_index);

#endif
