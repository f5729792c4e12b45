/* Inline SVG charts for the HTML summary: self-contained markup, no script, no external font or file. */
#ifndef SVG_H
#define SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "suite_util.h"

typedef struct {
    const char *name;
    const char *color;
    size_t n;
    const double *x, *y;
} svg_series;

/* Lines with points. x_log2_bytes: x is a byte count on a log2 axis labelled 1 KiB, 4 MiB ... */
void svg_line_chart(sbuf *b, const char *title, const char *x_label, const char *y_label, const svg_series *s,
                    size_t n_series, bool x_log2_bytes);

typedef struct {
    char label[96]; /* under the bar, and in its tooltip */
    double value;
    bool flagged; /* drawn in the failure colour */
} svg_bar;

/* One bar per item, with the median (and a reference such as a datasheet peak, when ref > 0) as lines. */
void svg_bar_chart(sbuf *b, const char *title, const char *x_item, const char *y_label, const svg_bar *bars,
                   size_t n, double median, double ref, const char *ref_label);

/* Rows by columns of statuses (pass, warn, fail, not_run, crashed ...), coloured, with a legend. */
void svg_status_grid(sbuf *b, const char *title, const char *const *rows, size_t n_rows,
                     const char *const *cols, size_t n_cols, const char *const *cells);

/* Fill colour of a status, shared by the grid and the HTML badges. */
const char *svg_status_color(const char *status);

#endif
