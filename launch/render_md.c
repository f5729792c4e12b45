#include "render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "render_common.h"
#include "suite_util.h"

static void codes(sbuf *b, const json_t *arr)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c) sbuf_printf(b, "%s`%s`", i ? " " : "", json_string_value(c));
}

static void figures(sbuf *b, const json_t *s)
{
    sbuf_puts(b, "\n## Figures\n\n");
    const json_t *g = render_figures(s, "gemm_flops");
    size_t i;
    json_t *e;
    json_array_foreach(sj_arr(g, "dtypes"), i, e)
    {
        sbuf_printf(b, "- GEMM %s: median %.4g TFLOP/s per %s", sj_str(e, "dtype", "?"),
                    sj_num(e, "median_tflops", NAN), render_item_word(sj_arr(e, "gpus")));
        if (sj_is_num(e, "peak_tflops"))
            sbuf_printf(b, " (peak %.4g)", sj_num(e, "peak_tflops", 0));
        sbuf_puts(b, "\n");
    }
    const json_t *m = render_figures(s, "mem_bw");
    json_array_foreach(sj_arr(m, "tests"), i, e)
        sbuf_printf(b, "- Memory %s: median %.4g GB/s per %s\n", sj_str(e, "test", "?"),
                    sj_num(e, "median_GBps", NAN), render_item_word(sj_arr(e, "gpus")));
    const json_t *a = render_figures(s, "allreduce_bw");
    if (sj_is_num(a, "busbw_at_max_GBps"))
        sbuf_printf(b, "- allreduce busbw at the largest size: %.4g GB/s (average %.4g GB/s)\n",
                    sj_num(a, "busbw_at_max_GBps", 0), sj_num(a, "avg_busbw_GBps", NAN));
    const json_t *d = render_figures(s, "ddp_smoke");
    if (sj_is_num(d, "loss_start"))
        sbuf_printf(b, "- DDP: loss %.4g -> %.4g, %.4g samples/s, step %.4g ms, replicas identical: %s\n",
                    sj_num(d, "loss_start", 0), sj_num(d, "loss_end", NAN), sj_num(d, "samples_per_s", NAN),
                    sj_num(d, "step_time_ms", NAN),
                    json_is_boolean(json_object_get(d, "replicas_identical"))
                        ? (sj_bool(d, "replicas_identical", false) ? "yes" : "NO")
                        : "-");
    for (size_t k = 0; k < suite_n_programs; k++) {
        if (strcmp(suite_programs[k].name, "env_audit") == 0 || render_figures(s, suite_programs[k].name))
            continue;
        const json_t *st = suite_summary_step(s, suite_programs[k].name);
        sbuf_printf(b, "- %s: no figures (step %s)\n", suite_programs[k].name,
                    sj_str(st, "status", "not_run"));
    }
}

char *suite_render_md(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    const json_t *v = json_object_get(s, "verdict");
    bool pass = strcmp(sj_str(v, "result", "fail"), "pass") == 0;
    sbuf_printf(&b, "# Cluster acceptance: %s\n\n", pass ? "PASS" : "FAIL");
    sbuf_printf(
        &b, "Exit code %lld (%s): %lld failures, %lld warnings, %lld abnormal nodes. %lld nodes, %lld GPUs",
        sj_int(v, "exit_code", -1), sj_str(v, "exit_name", "?"), sj_int(v, "failures", 0),
        sj_int(v, "warnings", 0), sj_int(v, "abnormal_node_count", 0), sj_int(s, "node_count", 0),
        sj_int(s, "gpu_count", 0));
    if (sj_str(s, "gpu_model", NULL))
        sbuf_printf(&b, " (%s)", sj_str(s, "gpu_model", ""));
    sbuf_printf(&b, ". %s, %s.\n", sj_str(json_object_get(s, "launcher"), "detail", "launcher unknown"),
                sj_str(s, "created_utc", "?"));
    if (json_array_size(sj_arr(v, "fault_codes"))) {
        sbuf_puts(&b, "\nFault codes: ");
        codes(&b, sj_arr(v, "fault_codes"));
        sbuf_puts(&b, "\n");
    }

    const json_t *abn = sj_arr(s, "abnormal_nodes");
    sbuf_printf(&b, "\n## Abnormal nodes (%zu)\n\n", json_array_size(abn));
    if (json_array_size(abn) == 0)
        sbuf_puts(&b, "No node failed a check.\n");
    else
        sbuf_puts(&b, "| node | fault codes |\n|---|---|\n");
    size_t i;
    json_t *e;
    json_array_foreach(abn, i, e)
    {
        sbuf_puts(&b, "| ");
        sbuf_md_cell(&b, sj_str(e, "host", "?"));
        sbuf_puts(&b, " | ");
        codes(&b, sj_arr(e, "fault_codes"));
        sbuf_puts(&b, " |\n");
    }

    sbuf_puts(&b, "\n## Steps\n\n| step | status | exit | ranks | nodes | time | [RESULT] "
                  "|\n|---|---|---|---|---|---|---|\n");
    json_array_foreach(sj_arr(s, "steps"), i, e)
    {
        char dur[32], ex[16] = "", ws[16] = "", nc[16] = "";
        render_duration(e, dur, sizeof dur);
        if (sj_int(e, "exit_code", -1) >= 0)
            snprintf(ex, sizeof ex, "%lld", sj_int(e, "exit_code", -1));
        if (sj_int(e, "world_size", -1) >= 0)
            snprintf(ws, sizeof ws, "%lld", sj_int(e, "world_size", -1));
        if (sj_int(e, "node_count", -1) >= 0)
            snprintf(nc, sizeof nc, "%lld", sj_int(e, "node_count", -1));
        sbuf_printf(&b, "| %s | %s | %s | %s | %s | %s | ", sj_str(e, "program", "?"),
                    sj_str(e, "status", "?"), ex, ws, nc, dur);
        sbuf_md_cell(&b, sj_str(e, "result_line", ""));
        sbuf_puts(&b, " |\n");
    }
    const json_t *bl = json_object_get(s, "baseline");
    if (json_is_object(bl))
        sbuf_printf(&b, "\nBaseline %s (%s), tolerance %.4g%%: %lld figures checked, %lld regressions.\n",
                    sj_str(bl, "model", "?"), sj_str(bl, "file", ""), sj_num(bl, "tolerance_pct", 0),
                    sj_int(bl, "checked", 0), sj_int(bl, "regressions", 0));

    size_t total = json_array_size(sj_arr(s, "nodes")), hidden = 0;
    const json_t **nodes = calloc(total ? total : 1, sizeof *nodes);
    if (nodes && total) {
        size_t nr = render_pick_nodes(s, nodes, SUITE_RENDER_MAX_NODE_ROWS, &hidden);
        sbuf_puts(&b, "\n## Nodes by check\n\n| node | verdict |");
        json_array_foreach(sj_arr(s, "steps"), i, e) sbuf_printf(&b, " %s |", sj_str(e, "program", "?"));
        sbuf_puts(&b, " fault codes |\n|---|---|");
        json_array_foreach(sj_arr(s, "steps"), i, e) sbuf_puts(&b, "---|");
        sbuf_puts(&b, "---|\n");
        for (size_t r = 0; r < nr; r++) {
            sbuf_puts(&b, "| ");
            sbuf_md_cell(&b, sj_str(nodes[r], "host", "?"));
            sbuf_printf(&b, " | %s |", sj_str(nodes[r], "verdict", "?"));
            json_array_foreach(sj_arr(s, "steps"), i, e) sbuf_printf(
                &b, " %s |",
                sj_str(json_object_get(nodes[r], "checks"), sj_str(e, "program", "?"), "not_run"));
            sbuf_puts(&b, " ");
            codes(&b, sj_arr(nodes[r], "fault_codes"));
            sbuf_puts(&b, " |\n");
        }
        if (hidden)
            sbuf_printf(&b, "\n%zu more nodes passed every check (all are in summary.json).\n", hidden);
    }
    free(nodes);

    figures(&b, s);

    const json_t *fs = sj_arr(s, "findings");
    sbuf_printf(&b, "\n## Findings (%zu)\n\n", json_array_size(fs));
    if (json_array_size(fs))
        sbuf_puts(&b, "| severity | code | step | where | message |\n|---|---|---|---|---|\n");
    const char *order[] = {"fail", "warn", "info"};
    size_t shown = 0;
    for (int o = 0; o < 3; o++)
        json_array_foreach(fs, i, e)
        {
            if (strcmp(sj_str(e, "severity", "info"), order[o]) != 0 || shown >= 200)
                continue;
            shown++;
            char where[160];
            render_where(e, where, sizeof where);
            sbuf_printf(&b, "| %s | `%s` | %s | ", order[o], sj_str(e, "code", "?"),
                        sj_str(e, "program", "?"));
            sbuf_md_cell(&b, where);
            sbuf_puts(&b, " | ");
            sbuf_md_cell(&b, sj_str(e, "message", ""));
            sbuf_puts(&b, " |\n");
        }
    if (shown < json_array_size(fs))
        sbuf_printf(&b, "\n%zu more findings in summary.json.\n", json_array_size(fs) - shown);
    if (b.failed) {
        sbuf_free(&b);
        return NULL;
    }
    return b.data;
}
