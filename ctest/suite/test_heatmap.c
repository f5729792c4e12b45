/* The HTML at scale (issue 14): where summary.html switches from bars to the node x GPU heatmap, which
 * devices the heatmap labels and in what order, its tolerance of odd reports, and a finding's place written
 * once. The same page rendered by Chromium at 512 nodes is suite.html_scale. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ga_test.h"
#include "heatmap.h"
#include "render.h"
#include "render_common.h"
#include "suite_util.h"

/* A summary of one step "p" with a per-device headline "x" over n devices, 8 per node; device `slow` is
 * flagged at half the value of the others. */
static json_t *summary_of(size_t n, long long slow)
{
    json_t *metrics = json_array();
    for (size_t i = 0; i < n; i++) {
        char host[32];
        snprintf(host, sizeof host, "node-%03zu", i / 8 + 1);
        json_t *m = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f}", "program", "p", "name", "x", "host", host,
                              "rank", (int)i, "gpu", (int)(i % 8), "value",
                              (long long)i == slow ? 50.0 : 100.0 + (double)(i % 5));
        if ((long long)i == slow)
            json_object_set_new(m, "flagged", json_true());
        json_array_append_new(metrics, m);
    }
    return json_pack("{s:[{s:s, s:s}], s:[{s:s, s:s, s:s, s:f, s:s, s:s, s:b}], s:o}", "steps", "program",
                     "p", "status", "fail", "headlines", "program", "p", "name", "x", "label", "figure x",
                     "value", 102.0, "unit", "u", "scope", "per_device", "higher_is_better", 1, "metrics",
                     metrics);
}

static bool has(const char *text, const char *what)
{
    return text && strstr(text, what) != NULL;
}

static size_t count(const char *text, const char *what)
{
    size_t k = 0;
    for (const char *p = text ? strstr(text, what) : NULL; p; p = strstr(p + 1, what))
        k++;
    return k;
}

int main(void)
{
    /* Bars up to SUITE_RENDER_BARS_MAX_DEVICES devices, the heatmap beyond. */
    json_t *s = summary_of(SUITE_RENDER_BARS_MAX_DEVICES, 3);
    char *html = suite_render_html(s);
    CHECKF(!has(html, "class=\"heatmap\"") && has(html, "figure x u per GPU against the median"),
           "%d devices are drawn as bars", SUITE_RENDER_BARS_MAX_DEVICES);
    free(html);
    json_decref(s);
    s = summary_of(SUITE_RENDER_BARS_MAX_DEVICES + 1, 90);
    html = suite_render_html(s);
    CHECKF(has(html, "class=\"heatmap\"") && !has(html, "per GPU against the median"),
           "%d devices are drawn as a heatmap", SUITE_RENDER_BARS_MAX_DEVICES + 1);
    /* Device 90 is node-012 GPU 2, flagged at 50 against a median of 102: labelled, and first in the list. */
    CHECK(has(html, ">node-012 GPU 2: 50 u (-51.0%) flagged</text>"));
    CHECK(has(html, "<tr><td class=\"num\">1</td><td>node-012 GPU 2</td><td class=\"num\">50 u</td>"));
    free(html);
    json_decref(s);

    /* 300 nodes: three panels of at most 128 nodes; with no device flagged the worst few are still labelled,
     * worst first. */
    s = summary_of(300 * 8, -1);
    json_t *values = render_device_values(s, "p", "x");
    sbuf b;
    sbuf_init(&b);
    CHECK(heatmap_render(&b, "t", "u", values, true) == 0);
    CHECKF(count(b.data, "<svg") == 3, "3 panels, got %zu", count(b.data, "<svg"));
    CHECKF(count(b.data, "class=\"hm-label\"") == SUITE_HEATMAP_WORST_N, "%d labels, got %zu",
           SUITE_HEATMAP_WORST_N, count(b.data, "class=\"hm-label\""));
    /* The lowest value (100, at i % 5 == 0) is the worst when higher is better: node-001 GPU 0 first. */
    CHECK(has(b.data, "<tr><td class=\"num\">1</td><td>node-001 GPU 0</td>"));
    sbuf_free(&b);
    /* Lower is better: the highest values (104, i % 5 == 4) are the worst: node-001 GPU 4 first. */
    sbuf_init(&b);
    CHECK(heatmap_render(&b, "t", "u", values, false) == 0);
    CHECK(has(b.data, "<tr><td class=\"num\">1</td><td>node-001 GPU 4</td>"));
    sbuf_free(&b);
    json_decref(values);
    json_decref(s);

    /* An odd report: a GPU index far beyond any node's, a host-path rank without a GPU, a host to escape.
     * Listed, never drawn out of the map, nothing unescaped. */
    values = json_pack("[{s:s, s:i, s:i, s:f, s:b}, {s:s, s:i, s:f}, {s:s, s:i, s:i, s:f}]", "host", "a<b",
                       "gpu", 5000, "rank", 0, "value", 1.0, "flagged", 1, "host", "h2", "rank", 7, "value",
                       10.0, "host", "h2", "gpu", 0, "rank", 8, "value", 10.0);
    sbuf_init(&b);
    CHECK(heatmap_render(&b, "t", "u", values, true) == 0);
    CHECK(has(b.data, "<td>a&lt;b GPU 5000</td>") && !has(b.data, "a<b"));
    CHECK(has(b.data, "2 nodes"));
    sbuf_free(&b);
    json_decref(values);
    sbuf_init(&b);
    values = json_array();
    CHECK(heatmap_render(&b, "t", "u", values, true) == 0 && has(b.data, "0 devices"));
    sbuf_free(&b);
    json_decref(values);
    CHECK(heatmap_deviation_pct(90, 100) == -10 && heatmap_deviation_pct(5, 0) == 0 &&
          heatmap_deviation_pct(-110, -100) == -10);

    /* A finding's place once: the message names its host (as the programs' and the baseline's do), or not. */
    char text[400];
    json_t *f = json_pack("{s:s, s:i, s:s}", "host", "gpu-node-03", "gpu", 5, "message",
                          "gemm_flops tflops_bf16 500 TFLOP/s on gpu-node-03 GPU 5 is below the baseline");
    suite_finding_text(f, text, sizeof text);
    CHECK_STR(text, "gemm_flops tflops_bf16 500 TFLOP/s on gpu-node-03 GPU 5 is below the baseline");
    json_decref(f);
    /* "gpu-node-1" is not named by a message about "gpu-node-10", nor by "xgpu-node-1". */
    f = json_pack("{s:s, s:i, s:s}", "host", "gpu-node-1", "gpu", 2, "message",
                  "slower than gpu-node-10 and xgpu-node-1");
    suite_finding_text(f, text, sizeof text);
    CHECK_STR(text, "gpu-node-1 GPU 2: slower than gpu-node-10 and xgpu-node-1");
    json_decref(f);
    f = json_pack("{s:s, s:s}", "host", "gpu-node-1", "message", "node 0 (gpu-node-1): lost");
    suite_finding_text(f, text, sizeof text);
    CHECK_STR(text, "node 0 (gpu-node-1): lost");
    json_decref(f);
    f = json_pack("{s:s}", "message", "driver versions differ");
    suite_finding_text(f, text, sizeof text);
    CHECK_STR(text, "cluster: driver versions differ");
    json_decref(f);
    /* Sizes on the charts' axes come from untrusted reports: a negative, huge or non-finite one is printed,
     * never cast out of a long long's range (UBSan caught -1e300 in suite.fuzz). */
    char lab[64];
    suite_format_bytes(1536, lab, sizeof lab);
    CHECKF(strcmp(lab, "1.5 KiB") == 0, "1536 B: %s", lab);
    suite_format_bytes(1048576, lab, sizeof lab);
    CHECKF(strcmp(lab, "1 MiB") == 0, "1 MiB: %s", lab);
    suite_format_bytes(-1e300, lab, sizeof lab);
    CHECKF(strcmp(lab, "-1e+300 B") == 0, "-1e300: %s", lab);
    suite_format_bytes(1e300, lab, sizeof lab);
    CHECKF(strcmp(lab, "9.09e+287 TiB") == 0, "1e300: %s", lab);
    suite_format_bytes(-INFINITY, lab, sizeof lab);
    CHECKF(strcmp(lab, "-inf B") == 0, "-inf: %s", lab);
    suite_format_bytes(NAN, lab, sizeof lab);
    CHECKF(strstr(lab, "nan B") != NULL, "nan: %s", lab);
    return ga_test_finish();
}
