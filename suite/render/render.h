/* The summary for people: Markdown (summary.md) and a self-contained HTML page (summary.html: inline CSS and
 * SVG, no script, nothing fetched) with the verdict at the top, the abnormal nodes, the steps, a
 * node-by-check grid and charts of the figures. Tolerant: a step that did not run, or a field a report lacks,
 * is shown as such. Pure: they return a new string (free it), NULL only when out of memory. */
#ifndef RENDER_H
#define RENDER_H

#include <jansson.h>

char *suite_render_md(const json_t *summary);
char *suite_render_html(const json_t *summary);

/* The most node rows the grid and the node tables show: every abnormal node, then healthy ones up to this. */
#define SUITE_RENDER_MAX_NODE_ROWS 64

#endif
