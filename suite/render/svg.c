#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

#define W 900.0
#define ML 72.0
#define MR 24.0
#define MT 36.0
#define MB_LINE 70.0
#define MB_BARS 110.0
#define H_LINE 340.0

const char *svg_status_color(const char *s)
{
    if (!s)
        return "#b0b7c3";
    if (strcmp(s, "pass") == 0)
        return "#2e9e5b";
    if (strcmp(s, "warn") == 0)
        return "#e0a526";
    if (strcmp(s, "fail") == 0)
        return "#d64541";
    if (strcmp(s, "not_run") == 0 || strcmp(s, "skipped") == 0 || strcmp(s, "absent") == 0)
        return "#b0b7c3";
    return "#8e44ad"; /* the step could not measure: crashed, timeout, env_error ... */
}

/* A "nice" tick step for a range: 1, 2 or 5 times a power of ten, about five ticks. */
static double nice_step(double range)
{
    if (range <= 0)
        return 1;
    double raw = range / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* Axes, grid and labels. H is the chart's height, MB its bottom margin (bar charts need room there for
 * rotated labels). */
static void frame(sbuf *b, const char *title, const char *x_label, const char *y_label, double ymax, double H,
                  double MB)
{
    sbuf_printf(b,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" "
                "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"",
                W, H, W, H);
    sbuf_html(b, title);
    sbuf_puts(b, "\"><rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>");
    sbuf_printf(b, "<text x=\"%.0f\" y=\"22\" class=\"ct\">", ML);
    sbuf_html(b, title);
    sbuf_puts(b, "</text>");
    double step = nice_step(ymax);
    for (double v = 0; v <= ymax * 1.0001; v += step) {
        double y = H - MB - v / ymax * (H - MT - MB);
        sbuf_printf(b,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e7ee\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"end\">%g</text>",
                    ML, y, W - MR, y, ML - 6, y + 4, v);
    }
    sbuf_printf(b,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#5b6473\"/>"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#5b6473\"/>",
                ML, MT, ML, H - MB, ML, H - MB, W - MR, H - MB);
    sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"al\" text-anchor=\"middle\">", (ML + W - MR) / 2,
                H - 8);
    sbuf_html(b, x_label);
    sbuf_printf(b,
                "</text><text transform=\"translate(16 %.1f) rotate(-90)\" class=\"al\" "
                "text-anchor=\"middle\">",
                (MT + H - MB) / 2);
    sbuf_html(b, y_label);
    sbuf_puts(b, "</text>");
}

static double y_max_of(double m)
{
    return m > 0 ? m * 1.12 : 1;
}

void svg_line_chart(sbuf *b, const char *title, const char *x_label, const char *y_label, const svg_series *s,
                    size_t ns, bool x_log2_bytes)
{
    const double H = H_LINE, MB = MB_LINE;
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
    for (size_t i = 0; i < ns; i++)
        for (size_t k = 0; k < s[i].n; k++) {
            double x = x_log2_bytes ? log2(s[i].x[k] > 0 ? s[i].x[k] : 1) : s[i].x[k];
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            ymax = fmax(ymax, s[i].y[k]);
        }
    if (!isfinite(xmin)) {
        xmin = 0;
        xmax = 1;
    }
    if (xmax <= xmin)
        xmax = xmin + 1;
    ymax = y_max_of(ymax);
    frame(b, title, x_label, y_label, ymax, H, MB);
#define PX(x) (ML + ((x)-xmin) / (xmax - xmin) * (W - ML - MR))
#define PY(y) (H - MB - (y) / ymax * (H - MT - MB))
    if (x_log2_bytes) {
        /* A tick every power of 4 keeps labels apart over a 1 B .. 16 GiB sweep. */
        for (double e = ceil(xmin); e <= xmax; e += 1) {
            if (((long)e) % 2 != 0 && xmax - xmin > 12)
                continue;
            char lab[32];
            suite_format_bytes(pow(2, e), lab, sizeof lab);
            sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">%s</text>", PX(e),
                        H - MB + 16, lab);
        }
    } else {
        double step = nice_step(xmax - xmin);
        for (double v = ceil(xmin / step) * step; v <= xmax; v += step)
            sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">%g</text>", PX(v),
                        H - MB + 16, v);
    }
    for (size_t i = 0; i < ns; i++) {
        sbuf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", s[i].color);
        for (size_t k = 0; k < s[i].n; k++) {
            double x = x_log2_bytes ? log2(s[i].x[k] > 0 ? s[i].x[k] : 1) : s[i].x[k];
            sbuf_printf(b, "%.1f,%.1f ", PX(x), PY(s[i].y[k]));
        }
        sbuf_puts(b, "\"/>");
        for (size_t k = 0; k < s[i].n; k++) {
            double x = x_log2_bytes ? log2(s[i].x[k] > 0 ? s[i].x[k] : 1) : s[i].x[k];
            sbuf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", PX(x),
                        PY(s[i].y[k]), s[i].color);
            char lab[32];
            if (x_log2_bytes)
                suite_format_bytes(s[i].x[k], lab, sizeof lab);
            else
                snprintf(lab, sizeof lab, "%g", s[i].x[k]);
            sbuf_html(b, s[i].name);
            sbuf_printf(b, ": %s -&gt; %.4g</title></circle>", lab, s[i].y[k]);
        }
        double ly = MT + 4 + 18.0 * (double)i;
        sbuf_printf(b,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"4\" fill=\"%s\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\">",
                    W - MR - 170, ly, s[i].color, W - MR - 150, ly + 6);
        sbuf_html(b, s[i].name);
        sbuf_puts(b, "</text>");
    }
#undef PX
#undef PY
    sbuf_puts(b, "</svg>\n");
}

void svg_bar_chart(sbuf *b, const char *title, const char *x_item, const char *y_label, const svg_bar *bars,
                   size_t n, double median, double ref, const char *ref_label)
{
    const double MB = n <= 48 ? MB_BARS : MB_LINE, H = H_LINE + MB - MB_LINE;
    double ymax = fmax(median, ref);
    for (size_t i = 0; i < n; i++)
        ymax = fmax(ymax, bars[i].value);
    ymax = y_max_of(ymax);
    char x_label[96];
    snprintf(x_label, sizeof x_label, n > 48 ? "%ss (hover a bar for its node and %s)" : "%s", x_item,
             x_item);
    frame(b, title, x_label, y_label, ymax, H, MB);
    double slot = (W - ML - MR) / (double)(n ? n : 1), bw = fmax(1, slot * 0.75);
    for (size_t i = 0; i < n; i++) {
        double x = ML + slot * (double)i + (slot - bw) / 2;
        double y = H - MB - bars[i].value / ymax * (H - MT - MB);
        sbuf_printf(b, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"><title>", x, y,
                    bw, H - MB - y, bars[i].flagged ? "#d64541" : "#3b7dd8");
        sbuf_html(b, bars[i].label);
        sbuf_printf(b, ": %.4g%s</title></rect>", bars[i].value, bars[i].flagged ? " (flagged)" : "");
        if (n <= 48)
            sbuf_printf(b,
                        "<text transform=\"translate(%.1f %.1f) rotate(-60)\" class=\"tk\" "
                        "text-anchor=\"end\">",
                        x + bw / 2, H - MB + 10);
        if (n <= 48) {
            sbuf_html(b, bars[i].label);
            sbuf_puts(b, "</text>");
        }
    }
    if (median > 0) {
        double y = H - MB - median / ymax * (H - MT - MB);
        sbuf_printf(b,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1f2a3a\" "
                    "stroke-dasharray=\"6 4\"/><text x=\"%.1f\" y=\"%.1f\" class=\"tk\" "
                    "text-anchor=\"end\">median %.4g</text>",
                    ML, y, W - MR, y, W - MR, y - 4, median);
    }
    if (ref > 0) {
        double y = H - MB - ref / ymax * (H - MT - MB);
        sbuf_printf(b,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0a526\" "
                    "stroke-dasharray=\"2 3\"/><text x=\"%.1f\" y=\"%.1f\" class=\"tk\">",
                    ML, y, W - MR, y, ML + 6, y - 4);
        sbuf_html(b, ref_label ? ref_label : "reference");
        sbuf_printf(b, " %.4g</text>", ref);
    }
    sbuf_puts(b, "</svg>\n");
}

void svg_status_grid(sbuf *b, const char *title, const char *const *rows, size_t nr, const char *const *cols,
                     size_t nc, const char *const *cells)
{
    const double label_w = 190, cell_w = 112, cell_h = 22, top = 58;
    double w = label_w + cell_w * (double)nc + 20, h = top + cell_h * (double)nr + 46;
    sbuf_printf(b,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart grid\" viewBox=\"0 0 %.0f %.0f\" "
                "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"",
                w, h, w, h);
    sbuf_html(b, title);
    sbuf_printf(
        b,
        "\"><rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/><text x=\"8\" y=\"22\" class=\"ct\">");
    sbuf_html(b, title);
    sbuf_puts(b, "</text>");
    for (size_t c = 0; c < nc; c++) {
        sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">",
                    label_w + cell_w * ((double)c + 0.5), top - 8);
        sbuf_html(b, cols[c]);
        sbuf_puts(b, "</text>");
    }
    for (size_t r = 0; r < nr; r++) {
        double y = top + cell_h * (double)r;
        sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"end\">", label_w - 8, y + 15);
        sbuf_html(b, rows[r]);
        sbuf_puts(b, "</text>");
        for (size_t c = 0; c < nc; c++) {
            const char *st = cells[r * nc + c];
            sbuf_printf(b,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"3\" fill=\"%s\" "
                        "stroke=\"#ffffff\" stroke-width=\"2\"><title>",
                        label_w + cell_w * (double)c, y, cell_w, cell_h, svg_status_color(st));
            sbuf_html(b, rows[r]);
            sbuf_puts(b, " / ");
            sbuf_html(b, cols[c]);
            sbuf_puts(b, ": ");
            sbuf_html(b, st ? st : "not_run");
            sbuf_printf(b,
                        "</title></rect><text x=\"%.1f\" y=\"%.1f\" class=\"cell\" text-anchor=\"middle\">",
                        label_w + cell_w * ((double)c + 0.5), y + 15);
            sbuf_html(b, st ? st : "not_run");
            sbuf_puts(b, "</text>");
        }
    }
    const char *legend[] = {"pass", "warn", "fail", "not_run", "crashed"};
    const char *legend_text[] = {"pass", "warn", "fail", "not run / absent", "could not measure"};
    for (size_t i = 0; i < 5; i++) {
        double x = 8 + 150.0 * (double)i, y = top + cell_h * (double)nr + 18;
        sbuf_printf(b,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" rx=\"2\" fill=\"%s\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\">%s</text>",
                    x, y, svg_status_color(legend[i]), x + 20, y + 12, legend_text[i]);
    }
    sbuf_puts(b, "</svg>\n");
}
