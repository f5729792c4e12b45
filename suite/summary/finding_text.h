/* How a finding or a figure names its place, and a finding as one line of text: the summary's abnormal-node
 * reasons, the pages, JUnit. Pure. */
#ifndef FINDING_TEXT_H
#define FINDING_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A GPU is named by its PCI bus id, the one name CUDA's ordinal (0 on every GPU of a node bound one GPU per
 * rank) and NVML's index agree on, with its index among the node's GPUs beside it where known (issue 40,
 * finding 4). Reports before the bus id was recorded name it by index alone. */

/* Whether entry (a finding, a metric, a summary's GPU row) is about one GPU. */
bool suite_is_gpu(const json_t *entry);
/* Whether a GPU row and an entry name the same GPU: by bus id where both have one, else by index. */
bool suite_same_gpu(const json_t *row, const json_t *entry);
/* "GPU 5 (0000:9a:00.0)", "GPU 0000:9a:00.0" (index unknown), "GPU 5" (an older report); "" when not one. */
void suite_gpu_name(const json_t *entry, char *buf, size_t len);

/* "node-3 GPU 5 (0000:9a:00.0)", "node-3 rank 2", "node-3", "cluster". */
void suite_finding_where(const json_t *entry, char *buf, size_t len);

/* A finding as one line of text: "<where>: <message>", or the message alone when it already names its
 * host (the programs' messages start "node 2 (gpu-node-03) rank 21 GPU 5: ...", the baseline's say "... on
 * gpu-node-03 GPU 5 ..."), so that no place is written twice. */
void suite_finding_text(const json_t *finding, char *buf, size_t len);

#endif
