/* How a finding or a figure names its place, and a finding as one line of text: the summary's abnormal-node
 * reasons, the pages, JUnit. Pure. */
#ifndef FINDING_TEXT_H
#define FINDING_TEXT_H

#include <jansson.h>
#include <stddef.h>

/* "node-3 GPU 5", "node-3 rank 2", "node-3", "cluster". */
void suite_finding_where(const json_t *entry, char *buf, size_t len);

/* A finding as one line of text: "<where>: <message>", or the message alone when it already names its
 * host (the programs' messages start "node 2 (gpu-node-03) rank 21 GPU 5: ...", the baseline's say "... on
 * gpu-node-03 GPU 5 ..."), so that no place is written twice. */
void suite_finding_text(const json_t *finding, char *buf, size_t len);

#endif
