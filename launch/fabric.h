/* The fabric in the summary: the transport allreduce_bw (or else ddp_smoke) recorded per node, what went
 * between nodes, and "InfiniBand not exercised" among what the run did not cover. Pure. */
#ifndef FABRIC_H
#define FABRIC_H

#include <jansson.h>

#include "profile.h"
#include "suite_util.h"

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
 * expected; whether GPUDirect RDMA is required. report may be NULL, with why. */
void suite_fabric_facts_from(const json_t *node_health_report, const char *why, suite_fabric_facts *f);

/* The same from REPORT_DIR/node_health.json of run run_id (another run's report is no fact of this one). */
void suite_fabric_facts_read(const char *report_dir, const char *run_id, suite_fabric_facts *f);

#endif
