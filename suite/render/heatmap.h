/* The node x GPU heatmap of summary.html: what replaces one bar per device once a cluster has too many
 * devices for bars to be read. Rows are nodes, columns GPU indices, the colour is how far each device's value
 * lies from the median of that figure; the outliers (the devices the program flagged, and the worst few)
 * carry their host, GPU and value as text beside the map, and are listed worst first. Inline SVG and an
 * HTML table, no script, nothing fetched. */
#ifndef HEATMAP_H
#define HEATMAP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "suite_util.h"

/* Up to this many devices a per-device figure is drawn as bars; beyond it, as a heatmap. */
#define SUITE_RENDER_BARS_MAX_DEVICES 96

/* The worst devices labelled even when the program flagged none (a map without any label tells nothing). */
#define SUITE_HEATMAP_WORST_N 5

/* The most rows of the sorted outlier list; the rest are counted (all are in summary.json). */
#define SUITE_HEATMAP_MAX_LISTED 50

/* Draws the heatmap of one per-device figure and its outlier list. values: the figure's per-device metrics
 * (entries with host, gpu or rank, value, optional flagged), as render_device_values returns them.
 * higher_is_better picks which side of the median is coloured as bad. 0, or -1 when out of memory (b is then
 * marked failed too). */
int heatmap_render(sbuf *b, const char *title, const char *unit, const json_t *values, bool higher_is_better);

/* Deviation of value from median in percent of |median| (0 when the median is 0 or not finite). */
double heatmap_deviation_pct(double value, double median);

#endif
