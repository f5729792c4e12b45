#include "render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "render_common.h"
#include "suite_util.h"
#include "svg.h"

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
    "border-radius:3px;font-size:12px;margin-right:4px;white-space:nowrap}"
    ".muted{color:#6b7587}.chart{max-width:100%;height:auto;display:block;margin:6px 0}"
    ".ct{font-size:15px;font-weight:bold;fill:#1f2a3a}.tk{font-size:11px;fill:#4a5566}"
    ".al{font-size:12px;fill:#1f2a3a}.cell{font-size:11px;fill:#fff;font-weight:bold}"
    ".missing{color:#6b7587;font-style:italic}footer{color:#6b7587;font-size:12px;margin-top:20px}";

static void badge(sbuf *b, const char *status)
{
    sbuf_printf(b, "<span class=\"badge\" style=\"background:%s\">", svg_status_color(status));
    sbuf_html(b, status);
    sbuf_puts(b, "</span>");
}

static void codes(sbuf *b, const json_t *arr)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c)
    {
        sbuf_puts(b, "<span class=\"code\">");
        sbuf_html(b, json_string_value(c));
        sbuf_puts(b, "</span>");
    }
}

static void header(sbuf *b, const json_t *s)
{
    const json_t *v = json_object_get(s, "verdict");
    const char *result = sj_str(v, "result", "fail");
    bool pass = strcmp(result, "pass") == 0;
    sbuf_printf(b, "<header class=\"verdict %s\" id=\"verdict\"><h1>Cluster acceptance: %s</h1>",
                pass ? "pass" : "fail", pass ? "PASS" : "FAIL");
    sbuf_printf(b, "<p>exit code %lld (%s)", sj_int(v, "exit_code", -1), sj_str(v, "exit_name", "?"));
    if (!pass)
        sbuf_printf(b, " &middot; %lld failures, %lld abnormal nodes", sj_int(v, "failures", 0),
                    sj_int(v, "abnormal_node_count", 0));
    sbuf_printf(b, " &middot; %lld warnings</p><p>%lld nodes, %lld GPUs", sj_int(v, "warnings", 0),
                sj_int(s, "node_count", 0), sj_int(s, "gpu_count", 0));
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

static void abnormal_section(sbuf *b, const json_t *s)
{
    const json_t *abn = sj_arr(s, "abnormal_nodes");
    sbuf_printf(b, "<section id=\"abnormal\"><h2>Abnormal nodes (%zu)</h2>", json_array_size(abn));
    if (json_array_size(abn) == 0)
        sbuf_puts(b, "<p>No node failed a check.</p>");
    else
        sbuf_puts(b, "<table><tr><th>node</th><th>fault codes</th><th>what was found</th></tr>");
    size_t i, j;
    json_t *a, *f;
    json_array_foreach(abn, i, a)
    {
        const char *host = sj_str(a, "host", "?");
        sbuf_puts(b, "<tr><td>");
        sbuf_html(b, host);
        sbuf_puts(b, "</td><td>");
        codes(b, sj_arr(a, "fault_codes"));
        sbuf_puts(b, "</td><td>");
        int shown = 0;
        json_array_foreach(sj_arr(s, "findings"), j, f)
        {
            const char *fh = sj_str(f, "host", NULL);
            if (!fh || strcmp(fh, host) != 0 || strcmp(sj_str(f, "severity", ""), "fail") != 0 || shown >= 4)
                continue;
            char where[160];
            render_where(f, where, sizeof where);
            sbuf_puts(b, shown++ ? "<br>" : "");
            sbuf_html(b, where);
            sbuf_puts(b, ": ");
            sbuf_html(b, sj_str(f, "message", ""));
        }
        sbuf_puts(b, "</td></tr>");
    }
    if (json_array_size(abn))
        sbuf_puts(b, "</table>");
    const json_t *reasons = sj_arr(json_object_get(s, "verdict"), "reasons");
    if (json_array_size(reasons)) {
        sbuf_printf(b, "<h3>Why the run failed</h3><p>");
        codes(b, sj_arr(json_object_get(s, "verdict"), "fault_codes"));
        sbuf_puts(b, "</p><ul>");
        json_t *r;
        json_array_foreach(reasons, i, r)
        {
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
    json_array_foreach(sj_arr(s, "steps"), i, st)
    {
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
        sbuf_printf(b, "</td><td class=\"num\">%s</td><td>", dur);
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
        sbuf_printf(b, "), tolerance %.4g%%: %lld figures checked, %lld regressions.</p>",
                    sj_num(bl, "tolerance_pct", 0), sj_int(bl, "checked", 0), sj_int(bl, "regressions", 0));
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
            sbuf_printf(b,
                        "<p class=\"muted\">%zu more nodes passed every check (all are in summary.json).</p>",
                        hidden);
    }
    free(nodes);
    free(rows);
    free(cols);
    free(cells);
    free(labels);
    sbuf_puts(b, "</section>\n");
}

static bool not_run_note(sbuf *b, const json_t *s, const char *program, const json_t *fig)
{
    if (fig)
        return false;
    const json_t *st = suite_summary_step(s, program);
    sbuf_puts(b, "<p class=\"missing\">");
    sbuf_html(b, program);
    sbuf_puts(b, ": no figures (step ");
    sbuf_html(b, sj_str(st, "status", "not_run"));
    sbuf_puts(b, ").</p>");
    return true;
}

static void allreduce_section(sbuf *b, const json_t *s)
{
    const json_t *fig = render_figures(s, "allreduce_bw");
    sbuf_puts(b, "<section id=\"allreduce\"><h2>allreduce bandwidth</h2>");
    if (!not_run_note(b, s, "allreduce_bw", fig)) {
        const char *placements[] = {"out-of-place", "in-place"}, *colors[] = {"#3b7dd8", "#e0762b"};
        const json_t *results = sj_arr(fig, "results");
        size_t n = json_array_size(results);
        double *x = calloc(2 * (n + 1), sizeof *x), *y = calloc(2 * (n + 1), sizeof *y);
        svg_series series[2];
        size_t ns = 0;
        for (int p = 0; p < 2 && x && y; p++) {
            size_t k = 0, i;
            json_t *r;
            double *px = x + (size_t)p * (n + 1), *py = y + (size_t)p * (n + 1);
            json_array_foreach(results, i, r)
            {
                const char *pl = sj_str(r, "placement", "out-of-place");
                if (strcmp(pl, placements[p]) != 0 || !sj_is_num(r, "busbw_GBps") || !sj_is_num(r, "bytes"))
                    continue;
                px[k] = sj_num(r, "bytes", 0);
                py[k] = sj_num(r, "busbw_GBps", 0);
                k++;
            }
            if (k)
                series[ns++] = (svg_series){placements[p], colors[p], k, px, py};
        }
        if (ns) {
            char title[160];
            const json_t *st = suite_summary_step(s, "allreduce_bw");
            snprintf(title, sizeof title, "allreduce busbw against message size (%lld ranks, %lld nodes)",
                     sj_int(st, "world_size", 0), sj_int(st, "node_count", 0));
            svg_line_chart(b, title, "message size", "busbw (GB/s)", series, ns, true);
        } else {
            sbuf_puts(b, "<p class=\"missing\">allreduce_bw reported no per-size results.</p>");
        }
        free(x);
        free(y);
        sbuf_puts(b, "<p>");
        if (sj_is_num(fig, "busbw_at_max_GBps"))
            sbuf_printf(b, "busbw at the largest size: <b>%.4g GB/s</b>. ",
                        sj_num(fig, "busbw_at_max_GBps", 0));
        if (sj_is_num(fig, "avg_busbw_GBps"))
            sbuf_printf(b, "Average busbw: %.4g GB/s.", sj_num(fig, "avg_busbw_GBps", 0));
        sbuf_puts(b, "</p>");
        const json_t *pairs = json_object_get(fig, "pairs");
        const json_t *suspects = sj_arr(pairs, "suspects");
        if (json_array_size(suspects)) {
            sbuf_puts(
                b,
                "<h3>Suspect links (node-pair test)</h3><table><tr><th>node</th><th>flagged pairs</th></tr>");
            size_t i;
            json_t *sp;
            json_array_foreach(suspects, i, sp)
            {
                sbuf_puts(b, "<tr><td>");
                sbuf_html(b, sj_str(sp, "host", "?"));
                sbuf_printf(b, "</td><td class=\"num\">%lld</td></tr>", sj_int(sp, "flagged_pairs", 0));
            }
            sbuf_puts(b, "</table>");
        }
    }
    sbuf_puts(b, "</section>\n");
}

/* One bar chart per entry of a per-GPU figure list (gemm_flops dtypes, mem_bw tests). */
static void per_gpu_section(sbuf *b, const json_t *s, const char *id, const char *heading,
                            const char *program, const char *list_key, const char *name_key,
                            const char *value_key, const char *median_key, const char *peak_key,
                            const char *unit)
{
    const json_t *fig = render_figures(s, program);
    sbuf_printf(b, "<section id=\"%s\"><h2>", id);
    sbuf_html(b, heading);
    sbuf_puts(b, "</h2>");
    if (!not_run_note(b, s, program, fig)) {
        size_t i, j;
        json_t *e, *g;
        json_array_foreach(sj_arr(fig, list_key), i, e)
        {
            const json_t *gpus = sj_arr(e, "gpus");
            size_t n = json_array_size(gpus);
            svg_bar *bars = calloc(n ? n : 1, sizeof *bars);
            if (!bars)
                continue;
            size_t k = 0;
            json_array_foreach(gpus, j, g)
            {
                if (!sj_is_num(g, value_key))
                    continue;
                render_gpu_label(g, bars[k].label, sizeof bars[k].label);
                bars[k].value = sj_num(g, value_key, 0);
                bars[k].flagged = sj_bool(g, "flagged", false);
                k++;
            }
            char title[200], ylab[64];
            const char *item = render_item_word(gpus);
            snprintf(title, sizeof title, "%s %s per %s against the median", sj_str(e, name_key, "?"), unit,
                     item);
            snprintf(ylab, sizeof ylab, "%s", unit);
            if (k)
                svg_bar_chart(b, title, item, ylab, bars, k, sj_num(e, median_key, 0), sj_num(e, peak_key, 0),
                              "peak");
            else
                sbuf_printf(b, "<p class=\"missing\">%s: no per-device figures.</p>",
                            sj_str(e, name_key, "?"));
            free(bars);
        }
        if (json_array_size(sj_arr(fig, list_key)) == 0)
            sbuf_printf(b, "<p class=\"missing\">%s reported no %s.</p>", program, list_key);
    }
    sbuf_puts(b, "</section>\n");
}

static void ddp_section(sbuf *b, const json_t *s)
{
    const json_t *fig = render_figures(s, "ddp_smoke");
    sbuf_puts(b, "<section id=\"ddp\"><h2>Training smoke test (DDP)</h2>");
    if (!not_run_note(b, s, "ddp_smoke", fig)) {
        const json_t *curve = sj_arr(fig, "loss_curve");
        size_t n = json_array_size(curve), k = 0, i;
        double *x = calloc(n + 1, sizeof *x), *y = calloc(n + 1, sizeof *y);
        json_t *p;
        json_array_foreach(curve, i, p) if (x && y && sj_is_num(p, "step") && sj_is_num(p, "loss"))
        {
            x[k] = sj_num(p, "step", 0);
            y[k++] = sj_num(p, "loss", 0);
        }
        if (k) {
            svg_series sr = {"loss", "#3b7dd8", k, x, y};
            svg_line_chart(b, "Training loss by step", "step", "loss", &sr, 1, false);
        }
        free(x);
        free(y);
        sbuf_puts(b, "<table><tr>");
        const char *keys[] = {"loss_start",    "loss_end",     "improvement",
                              "samples_per_s", "step_time_ms", "comm_fraction"};
        for (size_t q = 0; q < 6; q++)
            sbuf_printf(b, "<th>%s</th>", keys[q]);
        sbuf_puts(b, "<th>replicas_identical</th></tr><tr>");
        for (size_t q = 0; q < 6; q++) {
            if (sj_is_num(fig, keys[q]))
                sbuf_printf(b, "<td class=\"num\">%.4g</td>", sj_num(fig, keys[q], 0));
            else
                sbuf_puts(b, "<td class=\"muted\">-</td>");
        }
        json_t *ri = json_object_get(fig, "replicas_identical");
        sbuf_printf(b, "<td>%s</td></tr></table>",
                    json_is_boolean(ri) ? (json_is_true(ri) ? "yes" : "NO") : "-");
    }
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
        json_array_foreach(fs, i, f)
        {
            if (strcmp(sj_str(f, "severity", "info"), order[o]) != 0 || shown >= 300)
                continue;
            shown++;
            char where[160];
            render_where(f, where, sizeof where);
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
    json_array_foreach(ms, i, m)
    {
        if (i == 5000)
            break;
        char where[160];
        render_where(m, where, sizeof where);
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

char *suite_render_html(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    const char *result = sj_str(json_object_get(s, "verdict"), "result", "fail");
    sbuf_printf(&b,
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                "<title>gpuaccept: %s</title><style>%s</style></head><body>\n",
                strcmp(result, "pass") == 0 ? "PASS" : "FAIL", css);
    header(&b, s);
    sbuf_puts(&b, "<main>\n");
    abnormal_section(&b, s);
    steps_section(&b, s);
    grid_section(&b, s);
    per_gpu_section(&b, s, "gemm", "GEMM throughput", "gemm_flops", "dtypes", "dtype", "tflops",
                    "median_tflops", "peak_tflops", "TFLOP/s");
    per_gpu_section(&b, s, "membw", "Memory bandwidth", "mem_bw", "tests", "test", "GBps", "median_GBps",
                    "peak_GBps", "GB/s");
    allreduce_section(&b, s);
    ddp_section(&b, s);
    findings_section(&b, s);
    metrics_section(&b, s);
    sbuf_printf(&b, "<footer>gpuaccept %s &middot; %s v%lld &middot; report directory ",
                sj_str(s, "gpuaccept_version", "?"), sj_str(s, "schema", "?"),
                sj_int(s, "schema_version", 0));
    sbuf_html(&b, sj_str(s, "report_dir", "?"));
    sbuf_puts(&b, "</footer></main></body></html>\n");
    if (b.failed) {
        sbuf_free(&b);
        return NULL;
    }
    return b.data;
}
