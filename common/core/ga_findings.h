/* Findings: what a check concluded, each with a stable fault code (documented on its program's page,
 * docs/<program>.md, the suite's in docs/fault-codes.md), where (node, rank, GPU) and a
 * message. The verdict and exit code are derived from them. Pure: no MPI, no CUDA. */
#ifndef GA_FINDINGS_H
#define GA_FINDINGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "ga_pci.h"

typedef enum { GA_SEV_INFO, GA_SEV_WARN, GA_SEV_FAIL } ga_severity;

typedef struct {
    ga_severity severity;
    char code[48];  /* e.g. "ENV_DRIVER_MISMATCH" */
    char host[64];  /* "" when not about one node */
    int node_index; /* -1 when not about one node */
    int world_rank; /* -1 when not about one rank */
    int gpu;        /* the GPU's index as its program knew it (CUDA ordinal, NVML index), -1: not about one */
    char pci_bus_id[GA_PCI_BUS_ID_LEN]; /* the GPU's name that every numbering agrees on (ga_pci.h), "" */
    /* The component inside the node ("GPU 3 (mlx5_3)", "GPU2->GPU6", "mlx5_3", "0000:17:01.0") and, for a
     * link between two nodes, the other end: what the summary and hand-offs name (issue 46, item 4); "". */
    char part[64];
    char peer_host[64];
    char message[320];
} ga_finding;

typedef struct {
    ga_finding *items;
    size_t count, capacity;
    bool last_added; /* whether the last ga_findings_add kept its finding: the setters below act on it only */
} ga_findings;

/* Where a finding applies; GA_WHERE_CLUSTER for the whole job. A GPU is named by its PCI bus id: gpu, the
 * CUDA ordinal, is 0 on every GPU of a node whose ranks are bound one GPU each (issue 40, finding 4), and
 * only the bus id is common to CUDA and NVML. pci_bus_id: NULL or "" when not about one GPU, or unknown. */
typedef struct {
    const char *host;
    int node_index, world_rank, gpu;
    const char *pci_bus_id;
} ga_where;
#define GA_WHERE_CLUSTER ((ga_where){NULL, -1, -1, -1, NULL})

void ga_findings_init(ga_findings *f);
void ga_findings_free(ga_findings *f);
void ga_findings_add(ga_findings *f, ga_severity sev, const char *code, ga_where where, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The part (printf-style) and the peer host of the finding just added; nothing when it was lost. Written
 * to the report only when set. */
void ga_findings_set_part(ga_findings *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ga_findings_set_peer(ga_findings *f, const char *peer_host);
size_t ga_findings_count(const ga_findings *f, ga_severity sev);
bool ga_findings_has_code(const ga_findings *f, const char *code);

/* GA_EXIT_CHECK_FAILED if any finding is a failure, else GA_EXIT_PASS. */
int ga_findings_exit_code(const ga_findings *f);

const char *ga_severity_name(ga_severity sev);

/* One log line per finding under tag ("fail CODE on host: message"); info ones only with --verbose. Rank 0.
 */
void ga_findings_log(const ga_findings *f, const char *tag);
json_t *ga_findings_to_json(const ga_findings *f);

/* The last line of every program: "[RESULT] SUCCESS" or "[RESULT] FAILURE: <reasons>". exit_code may be
 * worse than the findings say (an environment error, say), with why. Rank 0 only. */
void ga_result_print(const ga_findings *f, int exit_code, const char *why);

/* The bytes of reasons a FAILURE line carries before "; and N more reasons (see the report)". */
#define GA_RESULT_REASONS_MAX 400

/* The line ga_result_print prints, without its newline: reasons whole while they fit, one cut between words
 * with "...", the rest counted. */
void ga_result_line(const ga_findings *f, int exit_code, const char *why, char *buf, size_t len);

#endif
