/* Hand-off: the verdict in the forms the tools that act on it read. Beside summary.json, `gpuaccept run` and
 * `merge` write drain.sh (Slurm), gpuaccept-k8s.sh and gpuaccept-k8s.json (Kubernetes labels and taints),
 * gpuaccept.prom (node-exporter textfile) and gpuaccept-junit.xml (CI). Pure but for
 * suite_handoff_prom_nodes_write; all are written by outputs.c. Formats: docs/handoff.md. */
#ifndef HANDOFF_H
#define HANDOFF_H

#include <jansson.h>

#include "hostlist.h"
#include "outputs.h"
#include <stdbool.h>
#include <stddef.h>

/* What drain.sh writes first in a Slurm Reason, and what it looks for before it resumes a node. */
#define SUITE_DRAIN_REASON_PREFIX "gpuaccept: "

/* The label and taint key on Kubernetes nodes. */
#define SUITE_K8S_KEY "gpuaccept.io/verdict"
/* Every node's label saying whether it is an end of an abnormal link (issue 44, item 6): abnormal|none. */
/* The annotation listing the parts a node's findings name ("CODE: part, part; CODE: part"; issue 46,
 * item 4): free text, so an annotation, not a label (63 characters of [A-Za-z0-9._-]). "" when none. */
#define SUITE_K8S_PARTS_KEY "gpuaccept.io/parts"
#define SUITE_K8S_LINK_KEY "gpuaccept.io/link"

/* The texts of the files (new strings, NULL when out of memory) and the patch list (new reference). */
char *suite_handoff_drain(const json_t *summary);

/* Whether every node of the summary is named by node names (node_name.h) where the hand-offs name it to
 * scontrol or kubectl: host, slurm_node and pod. The merge refuses a report that breaks the rule; drain.sh
 * and the Kubernetes files hold to it again on their own (issue 45, item 1): a summary that breaks it gets a
 * drain.sh and a gpuaccept-k8s.sh that refuse with one line and exit 2, and an empty patch list. When not,
 * why says which node (never the name itself, which may hold anything). */
bool suite_handoff_names_ok(const json_t *summary, char *why, size_t len);
char *suite_handoff_k8s_script(const json_t *summary);
json_t *suite_handoff_k8s_patches(const json_t *summary);
char *suite_handoff_prom(const json_t *summary); /* handoff_prom.c */
/* What gpuaccept.prom says about one node (the run's identity, its verdicts, faults and figures): the file a
 * per-node collector reads, SUITE_PROM_NODE_DIR/<host>.prom. */
char *suite_handoff_prom_node(const json_t *summary, const char *host);
#define SUITE_PROM_NODE_DIR "gpuaccept-nodes"
char *suite_handoff_junit(const json_t *summary); /* handoff_junit.c */

/* s as text XML 1.0 can hold, whatever its bytes: each byte that is a control character XML forbids or
 * not part of valid UTF-8 is written "\xHH". New string, NULL when out of memory. */
char *suite_xml_text(const char *s);

/* gpuaccept-nodes/<host>.prom for each node (handoff_prom.c), and none left from an earlier run of other
 * nodes. 0, or -1 with a message. */
int suite_handoff_prom_nodes_write(const json_t *summary, const char *dir, char *err, size_t errlen);

#endif
