#include "heatmap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "render_common.h"

/* Rows of one panel: 1,024 nodes as one strip would be metres tall, so the nodes are cut into panels laid
 * side by side (they wrap on a narrow screen). */
#define ROWS_PER_PANEL 128
/* Wider than this (a GPU index of 4,000 in a hand-edited report, say) the device is listed but not drawn. */
#define MAX_COLS 64
/* Labels beside one panel: each takes a text line, so beyond this they would push the panel far down. The
 * others are outlined in the map and all of them are in the list below it. */
#define MAX_PANEL_LABELS 40
#define LEFT 96.0 /* host names of the row ticks */
#define TOP 30.0  /* GPU indices */
#define LABEL_W 320.0
#define LINE_H 12.0

typedef struct {
    const char *host, *pci; /* pci: the GPU's bus id, NULL when not about one */
    long long gpu, rank;
    size_t row, col;
    double value, dev, bad; /* bad: the deviation signed so that larger is worse */
    bool flagged, outlier;
} cell;

/* Colour buckets by deviation from the median, in percent: a few steps read better than a continuous ramp,
 * and cells of one colour share one SVG path, which keeps an 8,192-GPU map small. */
static const double edges[] = {2, 5, 10, 20};
static const char *const bad_colours[] = {"#f6c9a8", "#ef8a62", "#d64541", "#7f1714"};
static const char *const good_colours[] = {"#c6dbef", "#6baed6", "#2c7bb6", "#08306b"};
static const char neutral[] = "#dfe4ec";
#define N_BUCKETS 9 /* neutral, 4 bad, 4 good */

static int bucket_of(double bad)
{
    double a = fabs(bad);
    int k = 0;
    while (k < 4 && a >= edges[k])
        k++;
    if (k == 0)
        return 0;
    return bad > 0 ? k : 4 + k;
}

static const char *bucket_colour(int k)
{
    return k == 0 ? neutral : k <= 4 ? bad_colours[k - 1] : good_colours[k - 5];
}

double heatmap_deviation_pct(double value, double median)
{
    if (!isfinite(median) || median == 0 || !isfinite(value))
        return 0;
    return (value - median) / fabs(median) * 100.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Worst first; ties by place, so that the order does not depend on qsort. */
static int cmp_worst(const void *a, const void *b)
{
    const cell *x = *(const cell *const *)a, *y = *(const cell *const *)b;
    if (x->bad != y->bad)
        return x->bad < y->bad ? 1 : -1;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return (x->col > y->col) - (x->col < y->col);
}

static int cmp_place(const void *a, const void *b)
{
    const cell *x = *(const cell *const *)a, *y = *(const cell *const *)b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return (x->col > y->col) - (x->col < y->col);
}

static void place_name(const cell *c, char *buf, size_t len)
{
    if (c->gpu >= 0 && c->pci)
        snprintf(buf, len, "%s GPU %lld (%s)", c->host, c->gpu, c->pci);
    else if (c->gpu >= 0)
        snprintf(buf, len, "%s GPU %lld", c->host, c->gpu);
    else if (c->pci) /* its index on the node unknown (one GPU bound per rank): the bus id alone */
        snprintf(buf, len, "%s GPU %s", c->host, c->pci);
    else
        snprintf(buf, len, "%s rank %lld", c->host, c->rank);
}

static void swatch(sbuf *b, const char *colour)
{
    sbuf_printf(
        b,
        "<span style=\"display:inline-block;width:12px;height:10px;background:%s;margin:0 3px 0 10px\">"
        "</span>",
        colour);
}

/* The colour key, the bad side first: below the median when higher is better, above it otherwise. */
static void legend(sbuf *b, bool higher_is_better)
{
    const char *bad = higher_is_better ? "&minus;" : "+", *good = higher_is_better ? "+" : "&minus;";
    sbuf_puts(b, "<p style=\"font-size:12px;margin:4px 0\">Deviation from the median:");
    for (int k = 4; k >= 1; k--) {
        swatch(b, bad_colours[k - 1]);
        if (k == 4)
            sbuf_printf(b, "%s%g%% or more", bad, edges[k - 1]);
        else
            sbuf_printf(b, "%s%g to %g%%", bad, edges[k - 1], edges[k]);
    }
    swatch(b, neutral);
    sbuf_printf(b, "within %g%%", edges[0]);
    for (int k = 1; k <= 4; k++) {
        swatch(b, good_colours[k - 1]);
        if (k == 4)
            sbuf_printf(b, "%s%g%% or more", good, edges[k - 1]);
        else
            sbuf_printf(b, "%s%g to %g%%", good, edges[k - 1], edges[k]);
    }
    sbuf_printf(b, ". Red is the bad side (%s is better); outlined cells are the outliers.</p>",
                higher_is_better ? "higher" : "lower");
}

/* One panel: rows [r0, r1) of the map, with its outliers' labels in a column on the right. */
/* One panel's rows r0..r1-1: its cell size, the width of the map, how many outliers are labelled and how
 * many only outlined, and the whole size. */
typedef struct {
    size_t r0, r1, ncols;
    double ch, cw, map_w;
    size_t shown, hidden;
    double w, h;
} panel_geom;

static bool in_panel(const cell *c, const panel_geom *g)
{
    return c->row >= g->r0 && c->row < g->r1 && c->col < MAX_COLS;
}

static panel_geom panel_layout(cell **outl, size_t n_out, size_t r0, size_t r1, size_t ncols)
{
    panel_geom g = {r0, r1, ncols, 0, 0, 0, 0, 0, 0, 0};
    size_t nr = r1 - r0;
    g.ch = nr <= 32 ? 12 : nr <= 64 ? 8 : 5;
    g.cw = ncols <= 16 ? 14 : 8;
    g.map_w = LEFT + (double)ncols * g.cw;
    for (size_t i = 0; i < n_out; i++) {
        if (!in_panel(outl[i], &g))
            continue;
        if (g.shown < MAX_PANEL_LABELS)
            g.shown++;
        else
            g.hidden++;
    }
    double h = TOP + (double)nr * g.ch + 8;
    double label_h = TOP + (double)(g.shown + (g.hidden ? 1 : 0)) * LINE_H + 8;
    /* Labels may run below the last row when the outliers bunch at the bottom of a panel. */
    double lab_bottom = TOP - LINE_H;
    for (size_t i = 0, k = 0; i < n_out && k < g.shown; i++) {
        if (!in_panel(outl[i], &g))
            continue;
        double y = TOP + ((double)(outl[i]->row - r0) + 0.5) * g.ch + 4;
        lab_bottom = fmax(lab_bottom + LINE_H, y);
        k++;
    }
    g.h = fmax(h, fmax(label_h, lab_bottom + (g.hidden ? LINE_H : 0) + 8));
    g.w = g.map_w + (g.shown ? LABEL_W : 12);
    return g;
}

/* GPU indices on top, a host name every few rows on the left. */
static void panel_axes(sbuf *b, const panel_geom *g, const char **row_host)
{
    size_t every = g->ch >= 12 ? 1 : g->ch >= 8 ? 4 : 16;
    for (size_t c = 0; c < g->ncols; c++)
        if (g->ncols <= 16 || c % 8 == 0)
            sbuf_printf(b,
                        "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"middle\" "
                        "fill=\"#4a5566\">%zu</text>",
                        LEFT + ((double)c + 0.5) * g->cw, TOP - 6, c);
    sbuf_printf(b, "<text x=\"%.0f\" y=\"12\" font-size=\"10\" fill=\"#4a5566\">node \\ GPU</text>", 4.0);
    for (size_t r = g->r0; r < g->r1; r += every) {
        sbuf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\" fill=\"#4a5566\">",
                    LEFT - 4, TOP + ((double)(r - g->r0) + 0.5) * g->ch + 3.5);
        sbuf_html(b, row_host[r]);
        sbuf_puts(b, "</text>");
    }
}

/* The cells: one path per colour. */
static void panel_cells(sbuf *b, const panel_geom *g, const cell *cells, size_t n)
{
    for (int k = 0; k < N_BUCKETS; k++) {
        bool open = false;
        for (size_t i = 0; i < n; i++) {
            const cell *c = &cells[i];
            if (!in_panel(c, g) || bucket_of(c->bad) != k)
                continue;
            if (!open)
                sbuf_printf(b, "<path fill=\"%s\" d=\"", bucket_colour(k));
            open = true;
            sbuf_printf(b, "M%.0f %.0fh%.0fv%.0fh-%.0fz", LEFT + (double)c->col * g->cw,
                        TOP + (double)(c->row - g->r0) * g->ch, g->cw - 1, g->ch - 1, g->cw - 1);
        }
        if (open)
            sbuf_puts(b, "\"/>");
    }
}

/* The outliers: outlined, and (up to a limit) labelled on the right with a leader line. */
static void panel_outliers(sbuf *b, const panel_geom *g, cell **outl, size_t n_out, const char *unit)
{
    double last_y = TOP - LINE_H;
    size_t k = 0;
    for (size_t i = 0; i < n_out; i++) {
        const cell *c = outl[i];
        if (!in_panel(c, g))
            continue;
        double cx = LEFT + (double)c->col * g->cw, cy = TOP + (double)(c->row - g->r0) * g->ch;
        sbuf_printf(b,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                    "stroke=\"#111\" stroke-width=\"1.2\"/>",
                    cx - 0.5, cy - 0.5, g->cw, g->ch);
        if (k >= MAX_PANEL_LABELS)
            continue;
        k++;
        double y = fmax(cy + g->ch / 2 + 4, last_y + LINE_H);
        last_y = y;
        char where[160];
        place_name(c, where, sizeof where);
        sbuf_printf(b,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#8a93a3\" "
                    "stroke-width=\"0.8\"/>",
                    cx + g->cw, cy + g->ch / 2, g->map_w + 6, y - 4);
        sbuf_printf(b, "<text class=\"hm-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"10.5\" fill=\"#1f2a3a\">",
                    g->map_w + 8, y);
        sbuf_html(b, where);
        sbuf_printf(b, ": %.4g ", c->value);
        sbuf_html(b, unit);
        sbuf_printf(b, " (%+.1f%%)%s</text>", c->dev, c->flagged ? " flagged" : "");
    }
    if (g->hidden)
        sbuf_printf(b,
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10.5\" fill=\"#6b7587\">... and %zu more "
                    "outlined, listed below</text>",
                    g->map_w + 8, last_y + LINE_H, g->hidden);
}

static void panel(sbuf *b, cell *cells, size_t n, cell **outl, size_t n_out, const char **row_host, size_t r0,
                  size_t r1, size_t ncols, const char *unit)
{
    panel_geom g = panel_layout(outl, n_out, r0, r1, ncols);
    sbuf_printf(b,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" style=\"display:block;background:#fff\" font-family=\"DejaVu Sans,"
                "Arial,sans-serif\">",
                g.w, g.h, g.w, g.h);
    panel_axes(b, &g, row_host);
    panel_cells(b, &g, cells, n);
    panel_outliers(b, &g, outl, n_out, unit);
    sbuf_puts(b, "</svg>");
}

static void outlier_list(sbuf *b, cell **outl, size_t n_out, const char *unit)
{
    sbuf_printf(b,
                "<table class=\"hm-outliers\" style=\"width:auto;margin-top:8px\"><tr><th>#</th>"
                "<th>where</th><th>value</th><th>from the median</th><th>flagged by the program</th></tr>");
    for (size_t i = 0; i < n_out && i < SUITE_HEATMAP_MAX_LISTED; i++) {
        char where[160];
        place_name(outl[i], where, sizeof where);
        sbuf_printf(b, "<tr><td class=\"num\">%zu</td><td>", i + 1);
        sbuf_html(b, where);
        sbuf_printf(b, "</td><td class=\"num\">%.4g ", outl[i]->value);
        sbuf_html(b, unit);
        sbuf_printf(b, "</td><td class=\"num\">%+.1f%%</td><td>%s</td></tr>", outl[i]->dev,
                    outl[i]->flagged ? "yes" : "no");
    }
    sbuf_puts(b, "</table>");
    if (n_out > SUITE_HEATMAP_MAX_LISTED)
        sbuf_printf(b, "<p class=\"muted\">%zu more outliers (all values are in summary.json).</p>",
                    n_out - SUITE_HEATMAP_MAX_LISTED);
}

/* The outliers among order[0..n-1] (worst first): every device the program flagged, and the worst few on the
 * bad side of the median; compacted to the front of order, worst first. Returns how many; *n_flagged: how
 * many the program flagged. */
static size_t pick_outliers(cell **order, size_t n, size_t *n_flagged)
{
    size_t n_out = 0;
    for (size_t i = 0; i < n; i++) {
        cell *c = order[i];
        c->outlier = c->flagged || (i < SUITE_HEATMAP_WORST_N && c->bad > 0);
        *n_flagged += c->flagged;
    }
    for (size_t i = 0; i < n; i++)
        if (order[i]->outlier)
            order[n_out++] = order[i];
    return n_out;
}

/* A metric's place and figure. */
static void cell_of(const json_t *m, cell *c)
{
    c->host = sj_str(m, "host", "?");
    c->gpu = sj_int(m, "gpu", -1);
    c->pci = sj_str(m, "pci_bus_id", NULL);
    c->rank = sj_int(m, "rank", -1);
    c->value = sj_num(m, "value", 0);
    c->flagged = sj_bool(m, "flagged", false);
}

/* Each value's cell: its row (its host, numbered in order of appearance, hosts into row_host) and column (its
 * GPU index, or the next free one); the rows and columns used. 0, or -1 out of memory. */
static int place_cells(const json_t *values, cell *cells, const char **row_host, size_t *next_col,
                       size_t *nrows, size_t *ncols)
{
    json_t *rows = json_object();
    if (!rows)
        return -1;
    size_t i;
    json_t *m;
    json_array_foreach(values, i, m) {
        cell *c = &cells[i];
        cell_of(m, c);
        json_t *r = json_object_get(rows, c->host);
        if (!r) {
            if (json_object_set_new(rows, c->host, json_integer((json_int_t)*nrows)) != 0) {
                json_decref(rows);
                return -1;
            }
            row_host[*nrows] = c->host;
            c->row = (*nrows)++;
        } else {
            c->row = (size_t)json_integer_value(r);
        }
        /* A GPU's column is its index; a rank without a GPU (host paths) takes the next free one. */
        c->col = c->gpu >= 0 ? (c->gpu < MAX_COLS ? (size_t)c->gpu : MAX_COLS) : next_col[c->row];
        next_col[c->row]++;
        if (c->col < MAX_COLS && c->col + 1 > *ncols)
            *ncols = c->col + 1;
    }
    json_decref(rows);
    return 0;
}

/* Every cell's deviation from the median of all (returned), and the cells worst first into order. */
static double rank_cells(cell *cells, size_t n, cell **order, double *sorted, bool higher_is_better)
{
    for (size_t i = 0; i < n; i++)
        sorted[i] = cells[i].value;
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double median = n == 0 ? 0 : n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    for (size_t i = 0; i < n; i++) {
        cells[i].dev = heatmap_deviation_pct(cells[i].value, median);
        cells[i].bad = higher_is_better ? -cells[i].dev : cells[i].dev;
        order[i] = &cells[i];
    }
    qsort(order, n, sizeof *order, cmp_worst);
    return median;
}

int heatmap_render(sbuf *b, const char *title, const char *unit, const json_t *values, bool higher_is_better)
{
    size_t n = json_array_size(values), nrows = 0, ncols = 0, n_out = 0, n_flagged = 0;
    cell *cells = calloc(n ? n : 1, sizeof *cells);
    cell **order = calloc(n ? n : 1, sizeof *order);
    double *sorted = calloc(n ? n : 1, sizeof *sorted);
    const char **row_host = calloc(n ? n : 1, sizeof *row_host);
    size_t *next_col = calloc(n ? n : 1, sizeof *next_col);
    cell **by_place = NULL;
    int rc = -1;
    if (!cells || !order || !sorted || !row_host || !next_col ||
        place_cells(values, cells, row_host, next_col, &nrows, &ncols) != 0)
        goto out;
    double median = rank_cells(cells, n, order, sorted, higher_is_better);
    n_out = pick_outliers(order, n, &n_flagged);
    by_place = calloc(n_out ? n_out : 1, sizeof *by_place);
    if (!by_place)
        goto out;
    memcpy(by_place, order, n_out * sizeof *by_place);
    qsort(by_place, n_out, sizeof *by_place, cmp_place);

    sbuf_printf(b, "<div class=\"heatmap-figure\" style=\"margin:10px 0\"><h3>");
    sbuf_html(b, title);
    sbuf_printf(b, "</h3><p style=\"font-size:13px;margin:2px 0\">%zu devices on %zu %s; median %.4g ", n,
                nrows, nrows == 1 ? "node" : "nodes", median);
    sbuf_html(b, unit);
    sbuf_printf(
        b, "; %zu flagged by the program; %zu outliers labelled (the flagged ones and the worst %d).</p>",
        n_flagged, n_out, SUITE_HEATMAP_WORST_N);
    legend(b, higher_is_better);
    sbuf_puts(b, "<div style=\"display:flex;flex-wrap:wrap;gap:6px 18px;align-items:flex-start\">");
    size_t per = nrows <= ROWS_PER_PANEL ? (nrows ? nrows : 1) : ROWS_PER_PANEL;
    for (size_t r0 = 0; r0 < nrows; r0 += per)
        panel(b, cells, n, by_place, n_out, row_host, r0, r0 + per < nrows ? r0 + per : nrows, ncols, unit);
    sbuf_puts(b, "</div>");
    if (n_out)
        outlier_list(b, order, n_out, unit);
    sbuf_puts(b, "</div>");
    rc = b->failed ? -1 : 0;
out:
    if (rc != 0)
        b->failed = true;
    free(by_place);
    free(cells);
    free(order);
    free(sorted);
    free(row_host);
    free(next_col);
    return rc;
}
