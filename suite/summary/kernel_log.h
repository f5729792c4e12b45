/* The kernel log as coverage (issue 41, item 2): Xids 79, 48 and 95 are seen only in the kernel log, which a
 * container without CAP_SYSLOG or a user's Slurm job under kernel.dmesg_restrict=1 cannot read. A node whose
 * log node_health could not read is said in "not covered" and never labelled as if its Xids were checked. */
#ifndef SUITE_KERNEL_LOG_H
#define SUITE_KERNEL_LOG_H

#include <jansson.h>

#define SUITE_KERNEL_LOG_CODE "HEALTH_KERNEL_LOG_UNREADABLE"
#define SUITE_LABEL_UNCHECKED_XID "unchecked-xid"

/* Appends to summary.profile.not_covered one line naming the nodes whose kernel log node_health could not
 * read (its HEALTH_KERNEL_LOG_UNREADABLE findings in reports), with the first reason; nothing when none. */
void suite_kernel_log_not_covered(json_t *summary, const json_t *reports);

/* The value of a node's gpuaccept.io/verdict label: its verdict, except "unchecked-xid" for a node that did
 * not fail but whose kernel log was not read (fault code HEALTH_KERNEL_LOG_UNREADABLE). */
const char *suite_k8s_node_label(const json_t *node);

#endif
