/* summary.html: the merged summary as one self-contained page (render.h), every report text escaped on the
 * way in (escape.h). */
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "escape.h"
#include "heatmap.h"
#include "merge.h"
#include "render_common.h"
#include "suite_util.h"
#include "svg.h"
#include "hostlist.h"

static const char css[] =
    "body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;margin:0;background:#f4f6fa;color:#1f2a3a}"
    "main{max-width:1180px;margin:0 auto;padding:0 20px 40px}"
    ".verdict{padding:22px 28px;color:#fff;margin-bottom:18px}"
    ".verdict.pass{background:#2e9e5b}.verdict.fail{background:#d64541}"
    ".verdict h1{margin:0 0 6px;font-size:30px}.verdict p{margin:2px 0;font-size:15px}"
    "section{background:#fff;border:1px solid #dde2ea;border-radius:6px;padding:14px 18px;margin:14px 0}"
    "h2{font-size:19px;margin:4px 0 10px}h3{font-size:15px;margin:12px 0 6px}"
    "table{border-collapse:collapse;width:100%;font-size:13px}"
    "th,td{border-bottom:1px solid #e6e9ef;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#eef1f6}td:first-child{white-space:nowrap}td.num{text-align:right;font-variant-numeric:"
    "tabular-nums}"
    ".badge{display:inline-block;padding:1px "
    "8px;border-radius:10px;color:#fff;font-size:12px;font-weight:bold}"
    ".code{font-family:'DejaVu Sans Mono',monospace;background:#f1e3e3;color:#8c1d1a;padding:0 5px;"
    "border-radius:3px;font-size:12px;margin-right:4px;white-space:nowrap;display:inline-block;margin-bottom:"
    "2px}"
    "td.codes{max-width:300px}td.found{min-width:420px}"
    ".muted{color:#6b7587}.chart{max-width:100%;height:auto;display:block;margin:6px 0}"
    ".ct{font-size:15px;font-weight:bold;fill:#1f2a3a}.tk{font-size:11px;fill:#4a5566}"
    ".al{font-size:12px;fill:#1f2a3a}.cell{font-size:11px;fill:#fff;font-weight:bold}"
    ".missing{color:#6b7587;font-style:italic}footer{color:#6b7587;font-size:12px;margin-top:20px}";

static void badge(sbuf *b, const char *status)
{
    sbuf_puts(b, "<span class=\"badge\" style=\"background:");
    sbuf_puts(b, svg_status_color(status)); /* a colour of svg.c's table */
    sbuf_puts(b, "\">");
    sbuf_html(b, status);
    sbuf_puts(b, "</span>");
}

/* entry: a node or abnormal node whose "parts" go beside its codes ("mlx5_3"), or NULL. */
static void codes(sbuf *b, const json_t *arr, const json_t *entry)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c) {
        /* a space between codes: each code stays whole (nowrap) but a list of seven may wrap, instead of
         * one unbreakable line that leaves the next column a word wide (issue 41, observation 10) */
        sbuf_puts(b, i ? " <span class=\"code\">" : "<span class=\"code\">");
        sbuf_html(b, json_string_value(c));
        sbuf_puts(b, "</span>");
        char parts[200];
        render_parts_text(entry, json_string_value(c), parts, sizeof parts);
        if (parts[0]) {
            sbuf_puts(b, " <span class=\"part\">(");
            sbuf_html(b, parts);
            sbuf_puts(b, ")</span>");
        }
    }
}

static void header(sbuf *b, const json_t *s)
{
    const json_t *v = json_object_get(s, "verdict");
    const char *result = sj_str(v, "result", "fail");
    bool pass = strcmp(result, "pass") == 0;
    sbuf_puts(b, pass ? "<header class=\"verdict pass\" id=\"verdict\"><h1>Cluster acceptance: PASS</h1>"
                      : "<header class=\"verdict fail\" id=\"verdict\"><h1>Cluster acceptance: FAIL</h1>");
    sbuf_printf(b, "<p>exit code %lld (", sj_int(v, "exit_code", -1));
    sbuf_html(b, sj_str(v, "exit_name", "?"));
    sbuf_puts(b, ")");
    long long fails = sj_int(v, "failures", 0), warns = sj_int(v, "warnings", 0),
              abn = sj_int(v, "abnormal_node_count", 0), nodes = sj_int(s, "node_count", 0),
              gpus = sj_int(s, "gpu_count", 0);
    if (!pass)
        sbuf_printf(b, " &middot; %lld %s, %lld abnormal %s", fails,
                    render_plural(fails, "failure", "failures"), abn, render_plural(abn, "node", "nodes"));
    sbuf_printf(b, " &middot; %lld %s</p><p>%lld %s, %lld %s", warns,
                render_plural(warns, "warning", "warnings"), nodes, render_plural(nodes, "node", "nodes"),
                gpus, render_plural(gpus, "GPU", "GPUs"));
    if (sj_str(s, "gpu_model", NULL)) {
        sbuf_puts(b, " (");
        sbuf_html(b, sj_str(s, "gpu_model", ""));
        sbuf_puts(b, ")");
    }
    const json_t *launcher = json_object_get(s, "launcher");
    if (sj_str(launcher, "detail", NULL)) {
        sbuf_puts(b, " &middot; ");
        sbuf_html(b, sj_str(launcher, "detail", ""));
    }
    sbuf_puts(b, " &middot; ");
    sbuf_html(b, sj_str(s, "created_utc", ""));
    sbuf_puts(b, "</p></header>\n");
}

/* The abnormal nodes as one Slurm host list, to paste into scontrol, pdsh or a ticket. */
static void abnormal_hostlist(const json_t *s, sbuf *b)
{
    const json_t *abn = sj_arr(s, "abnormal_nodes");
    size_t n = json_array_size(abn), i;
    const char **hosts = calloc(n ? n : 1, sizeof *hosts);
    json_t *a;
    if (!hosts)
        return;
    json_array_foreach(abn, i, a)
        hosts[i] = sj_str(a, "host", "?");
    char *list = suite_hostlist_compress(hosts, n);
    if (list) {
        sbuf_puts(b, "<p>Abnormal nodes, to copy: <code class=\"hostlist\">");
        sbuf_html(b, list);
        sbuf_puts(b, "</code></p>");
    }
    free(list);
    free(hosts);
}

/* The abnormal links (issue 44, item 6): the link or path between two nodes that are fine with their other
 * partners, left to the fabric team; neither end is an abnormal node for it. */
static void links_section(sbuf *b, const json_t *s)
{
    const json_t *links = sj_arr(s, "abnormal_links");
    if (json_array_size(links) == 0)
        return;
    sbuf_printf(b,
                "<section id=\"abnormal-links\"><h2>Abnormal links (%zu)</h2><p>Left to the fabric team: "
                "neither end is drained or resumed for a link.</p><table><tr><th>link</th><th "
                "class=\"codes\">fault codes</th><th class=\"found\">what was found</th></tr>",
                json_array_size(links));
    size_t i;
    json_t *l;
    json_array_foreach(links, i, l) {
        const json_t *hosts = json_object_get(l, "hosts");
        sbuf_puts(b, "<tr><td class=\"link\">");
        sbuf_html(b, json_string_value(json_array_get(hosts, 0)));
        sbuf_puts(b, " &harr; ");
        sbuf_html(b, json_string_value(json_array_get(hosts, 1)));
        sbuf_puts(b, "</td><td class=\"codes\">");
        codes(b, sj_arr(l, "fault_codes"), NULL);
        sbuf_puts(b, "</td><td class=\"found\">");
        sbuf_html(b, sj_str(l, "message", ""));
        sbuf_puts(b, "</td></tr>");
    }
    sbuf_puts(b, "</table></section>");
}

/* The failures shown beside an abnormal node; the rest are counted and listed under Findings. */
enum { FOUND_SHOWN = 4 };

static void abnormal_section(sbuf *b, const json_t *s)
{
    const json_t *abn = sj_arr(s, "abnormal_nodes");
    sbuf_printf(b, "<section id=\"abnormal\"><h2>Abnormal nodes (%zu)</h2>", json_array_size(abn));
    if (json_array_size(abn) == 0)
        sbuf_puts(b, "<p>No node failed a check.</p>");
    else
        sbuf_puts(b, "<table><tr><th>node</th><th class=\"codes\">fault codes</th><th class=\"found\">what "
                     "was found</th></tr>");
    size_t i, j;
    json_t *a, *f;
    /* Each abnormal node's failures, gathered in one pass: a thousand abnormal nodes would otherwise each
     * scan every finding. */
    json_t *fails = json_object();
    json_array_foreach(sj_arr(s, "findings"), j, f) {
        const char *fh = sj_str(f, "host", NULL);
        if (!fh || strcmp(sj_str(f, "severity", ""), "fail") != 0)
            continue;
        json_t *list = json_object_get(fails, fh);
        if (!list)
            json_object_set_new(fails, fh, list = json_array());
        json_array_append(list, f);
    }
    json_array_foreach(abn, i, a) {
        const char *host = sj_str(a, "host", "?");
        sbuf_puts(b, "<tr><td>");
        sbuf_html(b, host);
        sbuf_puts(b, "</td><td class=\"codes\">");
        codes(b, sj_arr(a, "fault_codes"), a);
        sbuf_puts(b, "</td><td class=\"found\">");
        const json_t *list = json_object_get(fails, host);
        json_array_foreach(list, j, f) {
            if (j == FOUND_SHOWN) {
                size_t more = json_array_size(list) - FOUND_SHOWN;
                sbuf_printf(b, "<br><span class=\"muted\">... and %zu more %s: see Findings</span>", more,
                            more == 1 ? "failure" : "failures");
                break;
            }
            char text[800];
            suite_finding_text(f, text, sizeof text);
            sbuf_puts(b, j ? "<br>" : "");
            sbuf_html(b, text);
        }
        sbuf_puts(b, "</td></tr>");
    }
    json_decref(fails);
    if (json_array_size(abn)) {
        sbuf_puts(b, "</table>");
        abnormal_hostlist(s, b);
    }
    const json_t *reasons = sj_arr(json_object_get(s, "verdict"), "reasons");
    if (json_array_size(reasons)) {
        sbuf_printf(b, "<h3>Why the run failed</h3><p>");
        codes(b, sj_arr(json_object_get(s, "verdict"), "fault_codes"), NULL);
        sbuf_puts(b, "</p><ul>");
        json_t *r;
        json_array_foreach(reasons, i, r) {
            if (i == 12) {
                sbuf_printf(b, "<li class=\"muted\">... and %zu more: see Findings</li>",
                            json_array_size(reasons) - 12);
                break;
            }
            sbuf_puts(b, "<li>");
            sbuf_html(b, json_string_value(r));
            sbuf_puts(b, "</li>");
        }
        sbuf_puts(b, "</ul>");
    }
    sbuf_puts(b, "</section>\n");
}

static void steps_section(sbuf *b, const json_t *s)
{
    sbuf_puts(b, "<section id=\"steps\"><h2>Steps</h2><table><tr><th>step</th><th>status</th><th>exit</th>"
                 "<th>ranks</th><th>nodes</th><th>time</th><th>[RESULT]</th></tr>");
    size_t i;
    json_t *st;
    json_array_foreach(sj_arr(s, "steps"), i, st) {
        char dur[32];
        render_duration(st, dur, sizeof dur);
        sbuf_puts(b, "<tr><td>");
        sbuf_html(b, sj_str(st, "program", "?"));
        sbuf_puts(b, "</td><td>");
        badge(b, sj_str(st, "status", "not_run"));
        sbuf_puts(b, "</td><td class=\"num\">");
        if (sj_int(st, "exit_code", -1) >= 0)
            sbuf_printf(b, "%lld", sj_int(st, "exit_code", -1));
        sbuf_puts(b, "</td><td class=\"num\">");
        if (sj_int(st, "world_size", -1) >= 0)
            sbuf_printf(b, "%lld", sj_int(st, "world_size", -1));
        sbuf_puts(b, "</td><td class=\"num\">");
        if (sj_int(st, "node_count", -1) >= 0)
            sbuf_printf(b, "%lld", sj_int(st, "node_count", -1));
        sbuf_puts(b, "</td><td class=\"num\">");
        sbuf_html(b, dur);
        sbuf_puts(b, "</td><td>");
        sbuf_html(b, sj_str(st, "result_line", ""));
        sbuf_puts(b, "</td></tr>");
    }
    sbuf_puts(b, "</table>");
    const json_t *bl = json_object_get(s, "baseline");
    if (json_is_object(bl)) {
        sbuf_puts(b, "<p>Baseline: ");
        sbuf_html(b, sj_str(bl, "model", "?"));
        sbuf_puts(b, " (");
        sbuf_html(b, sj_str(bl, "file", ""));
        long long checked = sj_int(bl, "checked", 0), regs = sj_int(bl, "regressions", 0);
        sbuf_printf(b, "), tolerance %.4g%%: %lld %s checked, %lld %s.</p>", sj_num(bl, "tolerance_pct", 0),
                    checked, render_plural(checked, "figure", "figures"), regs,
                    render_plural(regs, "regression", "regressions"));
    } else {
        sbuf_puts(b, "<p class=\"muted\">No baseline applied.</p>");
    }
    sbuf_puts(b, "</section>\n");
}

static void grid_section(sbuf *b, const json_t *s)
{
    const json_t *steps = sj_arr(s, "steps");
    size_t total = json_array_size(sj_arr(s, "nodes")), nc = json_array_size(steps), hidden = 0;
    sbuf_puts(b, "<section id=\"grid\"><h2>Nodes by check</h2>");
    if (total == 0 || nc == 0) {
        sbuf_puts(b, "<p class=\"missing\">No node reported: no step produced a report.</p></section>\n");
        return;
    }
    const json_t **nodes = calloc(total, sizeof *nodes);
    const char **rows = calloc(total, sizeof *rows), **cols = calloc(nc + 1, sizeof *cols);
    const char **cells = calloc(total * (nc + 1), sizeof *cells);
    char(*labels)[96] = calloc(total, sizeof *labels);
    if (nodes && rows && cols && cells && labels) {
        size_t nr = render_pick_nodes(s, nodes, SUITE_RENDER_MAX_NODE_ROWS, &hidden);
        bool baseline = json_is_object(json_object_get(s, "baseline"));
        size_t ncols = nc + (baseline ? 1 : 0);
        for (size_t c = 0; c < nc; c++)
            cols[c] = sj_str(json_array_get(steps, c), "program", "?");
        if (baseline)
            cols[nc] = "baseline";
        for (size_t r = 0; r < nr; r++) {
            snprintf(labels[r], sizeof labels[r], "%s", sj_str(nodes[r], "host", "?"));
            rows[r] = labels[r];
            const json_t *checks = json_object_get(nodes[r], "checks");
            for (size_t c = 0; c < ncols; c++)
                cells[r * ncols + c] = sj_str(checks, cols[c], c == nc ? "pass" : "not_run");
        }
        svg_status_grid(b, "Verdict of each check on each node", rows, nr, cols, ncols, cells);
        if (hidden)
            sbuf_printf(b, "<p class=\"muted\">%zu more %s every check (all are in summary.json).</p>",
                        hidden, render_plural((long long)hidden, "node passed", "nodes passed"));
    }
    free(nodes);
    free(rows);
    free(cols);
    free(cells);
    free(labels);
    sbuf_puts(b, "</section>\n");
}

/* One bar per device of a per-device headline, against its median and reference; the devices the program
 * flagged on this figure in the failure colour. Beyond SUITE_RENDER_BARS_MAX_DEVICES devices bars are
 * slivers, so the figure is drawn as a node x GPU heatmap with its outliers labelled (heatmap.c). */
static void device_chart(sbuf *b, const json_t *s, const char *program, const json_t *h)
{
    json_t *values = render_device_values(s, program, sj_str(h, "name", ""));
    size_t n = json_array_size(values), i;
    if (n > SUITE_RENDER_BARS_MAX_DEVICES) {
        char title[200];
        snprintf(title, sizeof title, "%s %s: each %s against the median, node x GPU",
                 sj_str(h, "label", "?"), sj_str(h, "unit", ""), render_item_word(values));
        if (heatmap_render(b, title, sj_str(h, "unit", ""), values, sj_bool(h, "higher_is_better", true)) !=
            0)
            b->failed = true; /* the page is then refused as a whole, never half drawn */
        json_decref(values);
        return;
    }
    svg_bar *bars = calloc(n ? n : 1, sizeof *bars);
    json_t *m;
    json_array_foreach(values, i, m)
        if (bars) {
            render_gpu_label(m, bars[i].label, sizeof bars[i].label);
            bars[i].value = sj_num(m, "value", 0);
            bars[i].flagged = sj_bool(m, "flagged", false);
        }
    const char *item = render_item_word(values);
    char title[200];
    snprintf(title, sizeof title, "%s %s per %s against the median", sj_str(h, "label", "?"),
             sj_str(h, "unit", ""), item);
    if (bars && n)
        svg_bar_chart(b, title, item, sj_str(h, "unit", ""), bars, n, sj_num(h, "value", 0),
                      sj_num(h, "reference", 0), sj_str(h, "reference_label", "reference"));
    else {
        sbuf_puts(b, "<p class=\"missing\">");
        sbuf_html(b, sj_str(h, "label", "?"));
        sbuf_puts(b, ": no per-device figures.</p>");
    }
    free(bars);
    json_decref(values);
}

/* A line chart the program described in its report ("charts"). */
static void report_chart(sbuf *b, const json_t *c)
{
    static const char *const colors[] = {"#3b7dd8", "#e0762b", "#2e9e5b", "#8c5bd6"};
    const json_t *series = sj_arr(c, "series");
    size_t ns = json_array_size(series) < 4 ? json_array_size(series) : 4, total = 0, i, j;
    json_t *e, *pt;
    json_array_foreach(series, i, e)
        total += json_array_size(sj_arr(e, "points"));
    double *x = calloc(total + 1, sizeof *x), *y = calloc(total + 1, sizeof *y);
    svg_series sv[4];
    size_t used = 0, k = 0;
    for (i = 0; x && y && i < ns; i++) {
        e = json_array_get(series, i);
        size_t start = k;
        json_array_foreach(sj_arr(e, "points"), j, pt) {
            if (!json_is_number(json_array_get(pt, 0)) || !json_is_number(json_array_get(pt, 1)))
                continue;
            x[k] = json_number_value(json_array_get(pt, 0));
            y[k++] = json_number_value(json_array_get(pt, 1));
        }
        if (k > start)
            sv[used++] = (svg_series){sj_str(e, "label", "?"), colors[i], k - start, x + start, y + start};
    }
    if (used)
        svg_line_chart(b, sj_str(c, "title", "?"), sj_str(c, "x_label", ""), sj_str(c, "y_label", ""), sv,
                       used, strcmp(sj_str(c, "x_scale", "linear"), "log2_bytes") == 0);
    free(x);
    free(y);
}

/* One section per step, drawn from the program's headlines and charts alone. */
static void program_section(sbuf *b, const json_t *s, const char *program)
{
    sbuf_puts(b, "<section class=\"program\" id=\"step-");
    sbuf_html(b, program);
    sbuf_puts(b, "\"><h2>");
    sbuf_html(b, program);
    sbuf_puts(b, "</h2>");
    if (!render_has_headlines(s, program)) {
        const json_t *st = suite_summary_step(s, program);
        sbuf_puts(b, "<p class=\"missing\">");
        sbuf_html(b, program);
        sbuf_puts(b, ": no figures (step ");
        sbuf_html(b, sj_str(st, "status", "not_run"));
        sbuf_puts(b, ").</p></section>\n");
        return;
    }
    size_t i;
    json_t *h, *c;
    sbuf_puts(b, "<table><tr><th>figure</th><th>value</th><th>over</th></tr>");
    json_array_foreach(sj_arr(s, "headlines"), i, h) {
        if (strcmp(sj_str(h, "program", ""), program) != 0)
            continue;
        char value[128];
        render_headline_value(h, value, sizeof value);
        sbuf_puts(b, "<tr><td>");
        sbuf_html(b, sj_str(h, "label", "?"));
        sbuf_puts(b, "</td><td class=\"num\">");
        sbuf_html(b, value);
        sbuf_puts(b, strcmp(sj_str(h, "scope", ""), "per_device") == 0
                         ? "</td><td>median per device</td></tr>"
                         : "</td><td>the job</td></tr>");
    }
    sbuf_puts(b, "</table>");
    json_array_foreach(sj_arr(s, "headlines"), i, h)
        if (strcmp(sj_str(h, "program", ""), program) == 0 &&
            strcmp(sj_str(h, "scope", ""), "per_device") == 0)
            device_chart(b, s, program, h);
    json_array_foreach(sj_arr(s, "charts"), i, c)
        if (strcmp(sj_str(c, "program", ""), program) == 0)
            report_chart(b, c);
    sbuf_puts(b, "</section>\n");
}

static void findings_section(sbuf *b, const json_t *s)
{
    const json_t *fs = sj_arr(s, "findings");
    sbuf_printf(b, "<section id=\"findings\"><h2>Findings (%zu)</h2>", json_array_size(fs));
    if (json_array_size(fs) == 0) {
        sbuf_puts(b, "<p>No findings.</p></section>\n");
        return;
    }
    sbuf_puts(b, "<table><tr><th>severity</th><th>code</th><th>step</th><th>where</th><th>message</th></tr>");
    const char *order[] = {"fail", "warn", "info"};
    size_t shown = 0;
    for (int o = 0; o < 3; o++) {
        size_t i;
        json_t *f;
        json_array_foreach(fs, i, f) {
            if (strcmp(sj_str(f, "severity", "info"), order[o]) != 0 || shown >= 300)
                continue;
            shown++;
            char where[160];
            suite_finding_where(f, where, sizeof where);
            sbuf_puts(b, "<tr><td>");
            badge(b, order[o]);
            sbuf_puts(b, "</td><td><span class=\"code\">");
            sbuf_html(b, sj_str(f, "code", "?"));
            sbuf_puts(b, "</span></td><td>");
            sbuf_html(b, sj_str(f, "program", "?"));
            sbuf_puts(b, "</td><td>");
            sbuf_html(b, where);
            sbuf_puts(b, "</td><td>");
            sbuf_html(b, sj_str(f, "message", ""));
            sbuf_puts(b, "</td></tr>");
        }
    }
    sbuf_puts(b, "</table>");
    if (shown < json_array_size(fs))
        sbuf_printf(b, "<p class=\"muted\">%zu more in summary.json.</p>", json_array_size(fs) - shown);
    sbuf_puts(b, "</section>\n");
}

static void metrics_section(sbuf *b, const json_t *s)
{
    const json_t *ms = sj_arr(s, "metrics");
    sbuf_printf(b, "<section id=\"metrics\"><details><summary><b>Metrics (%zu)</b></summary>",
                json_array_size(ms));
    sbuf_puts(b, "<table><tr><th>step</th><th>metric</th><th>where</th><th>value</th><th>unit</th></tr>");
    size_t i;
    json_t *m;
    json_array_foreach(ms, i, m) {
        if (i == 5000)
            break;
        char where[160];
        suite_finding_where(m, where, sizeof where);
        sbuf_puts(b, "<tr><td>");
        sbuf_html(b, sj_str(m, "program", "?"));
        sbuf_puts(b, "</td><td>");
        sbuf_html(b, sj_str(m, "name", "?"));
        sbuf_puts(b, "</td><td>");
        sbuf_html(b, where);
        sbuf_printf(b, "</td><td class=\"num\">%.5g</td><td>", sj_num(m, "value", NAN));
        sbuf_html(b, sj_str(m, "unit", ""));
        sbuf_puts(b, "</td></tr>");
    }
    sbuf_puts(b, "</table></details></section>\n");
}

/* Which profile ran and what it did not cover, under the verdict: a pass is a pass of what was checked. */
static void profile_section(sbuf *b, const json_t *s)
{
    const json_t *p = json_object_get(s, "profile");
    if (!json_is_object(p))
        return;
    sbuf_puts(b, "<section id=\"profile\"><p>Profile <b>");
    sbuf_html(b, sj_str(p, "name", "?"));
    sbuf_puts(b, "</b> (");
    sbuf_html(b, sj_str(p, "source", "?"));
    sbuf_puts(b, ")</p>");
    const json_t *nc = sj_arr(p, "not_covered");
    if (json_array_size(nc)) {
        sbuf_puts(b, "<p>Not covered:</p><ul class=\"not-covered\">");
        size_t i;
        json_t *v;
        json_array_foreach(nc, i, v) {
            sbuf_puts(b, "<li>");
            sbuf_html(b, json_is_string(v) ? json_string_value(v) : "?");
            sbuf_puts(b, "</li>");
        }
        sbuf_puts(b, "</ul>");
    }
    sbuf_puts(b, "</section>\n");
}

char *suite_render_html(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    const char *result = sj_str(json_object_get(s, "verdict"), "result", "fail");
    sbuf_puts(&b,
              "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>gpuaccept: ");
    sbuf_puts(&b, strcmp(result, "pass") == 0 ? "PASS" : "FAIL");
    sbuf_puts(&b, "</title><style>");
    sbuf_puts(&b, css); /* the page's own style sheet, a literal above */
    sbuf_puts(&b, "</style></head><body>\n");
    header(&b, s);
    sbuf_puts(&b, "<main>\n");
    profile_section(&b, s);
    abnormal_section(&b, s);
    links_section(&b, s);
    steps_section(&b, s);
    grid_section(&b, s);
    suite_fabric_html(&b, s);
    size_t k;
    json_t *st;
    json_array_foreach(sj_arr(s, "steps"), k, st)
        program_section(&b, s, sj_str(st, "program", "?"));
    findings_section(&b, s);
    metrics_section(&b, s);
    sbuf_puts(&b, "<footer>gpuaccept ");
    sbuf_html(&b, sj_str(s, "gpuaccept_version", "?"));
    sbuf_puts(&b, " &middot; ");
    sbuf_html(&b, sj_str(s, "schema", "?"));
    sbuf_printf(&b, " v%lld &middot; report directory ", sj_int(s, "schema_version", 0));
    sbuf_html(&b, sj_str(s, "report_dir", "?"));
    sbuf_puts(&b, "</footer></main></body></html>\n");
    if (b.failed) {
        sbuf_free(&b);
        return NULL;
    }
    return b.data;
}
