/* The summary's verdict: from its findings and steps, each GPU's and node's verdict and fault codes, each
 * node's per-check verdicts, the abnormal nodes and the overall verdict. Pure. */
#ifndef VERDICT_H
#define VERDICT_H

#include <jansson.h>

/* Recomputes, from the summary's findings and steps: each GPU's and node's verdict and fault codes, each
 * node's per-check verdicts, the abnormal nodes and the overall verdict. Call it after adding findings (a
 * baseline does). */
void suite_summary_finalize(json_t *summary);

/* The summary's step of program, or NULL. */
const json_t *suite_summary_step(const json_t *summary, const char *program);

/* The findings of each host, in their order: {host: [finding, ...]} (new object; findings without a host are
 * left out). */
json_t *suite_findings_by_host(const json_t *findings);

#endif
