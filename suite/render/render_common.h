/* What the Markdown and HTML renderers share: which node rows to show and how to name a place. */
#ifndef RENDER_COMMON_H
#define RENDER_COMMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "finding_text.h"

/* The nodes to list: failing ones, then warning ones, then healthy ones, at most max in all (abnormal nodes
 * are never cut). Fills out (borrowed) and returns how many; *hidden gets how many were left out. */
size_t render_pick_nodes(const json_t *summary, const json_t **out, size_t max, size_t *hidden);

/* "node-3:5" for a GPU's bar, from an entry with host and gpu or rank. */
void render_gpu_label(const json_t *entry, char *buf, size_t len);

/* "12.3 s", "4 min 05 s", "-". */
const char *render_item_word(const json_t *gpus);

void render_duration(const json_t *step, char *buf, size_t len);

/* The figures of one program, or NULL when its step did not report. */
/* Whether program reported any headline figure (the summary's "headlines", tagged by the merge). */
bool render_has_headlines(const json_t *summary, const char *program);

/* A headline's value as a person reads it: "780.2 TFLOP/s", "not measured"; with its reference when it has
 * one: "780.2 TFLOP/s (peak 989.5)". */
void render_headline_value(const json_t *headline, char *buf, size_t len);

/* The per-device values behind a per-device headline: the summary's metrics of program called name that
 * name a host. A new array (holding references to the summary's entries). */
json_t *render_device_values(const json_t *summary, const char *program, const char *name);

/* one when n is 1, else many: "1 node", "2 nodes", "0 nodes" (issue 41, observation 10: "1 nodes"). */
const char *render_plural(long long n, const char *one, const char *many);

/* The parts a node's entry names for code (its "parts": {code: [part]}, issue 46, item 4) as one short text,
 * "mlx5_3, mlx5_5, +2 more"; "" when none. */
void render_parts_text(const json_t *entry, const char *code, char *buf, size_t len);

/* "GPU" when any of the entries (metrics, figures) names a GPU, "rank" on the host paths. */

#endif
