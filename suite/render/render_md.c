/* summary.md: the merged summary as Markdown (render.h), for a terminal, a ticket or a pull request. */
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "escape.h"
#include "merge.h"
#include "render_common.h"
#include "suite_util.h"
#include "hostlist.h"

/* The codes, each with the parts entry names for it ("`ENV_HCA_FIRMWARE_MISMATCH` (mlx5_3)"); entry: a node
 * or abnormal node, or NULL. */
static void codes(sbuf *b, const json_t *arr, const json_t *entry)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c) {
        char parts[200];
        sbuf_puts(b, i ? " " : "");
        sbuf_md_code(b, json_string_value(c));
        render_parts_text(entry, json_string_value(c), parts, sizeof parts);
        if (parts[0]) {
            sbuf_puts(b, " (");
            sbuf_md(b, parts);
            sbuf_puts(b, ")");
        }
    }
}

/* Every program's headline figures, in step order, from the summary's generic list: no program is known
 * here by name. */
static void figures(sbuf *b, const json_t *s)
{
    sbuf_puts(b, "\n## Figures\n\n");
    size_t k, i;
    json_t *st, *h;
    json_array_foreach(sj_arr(s, "steps"), k, st) {
        const char *program = sj_str(st, "program", "?");
        if (!render_has_headlines(s, program)) {
            sbuf_puts(b, "- ");
            sbuf_md(b, program);
            sbuf_puts(b, ": no figures (step ");
            sbuf_md(b, sj_str(st, "status", "not_run"));
            sbuf_puts(b, ")\n");
            continue;
        }
        json_array_foreach(sj_arr(s, "headlines"), i, h) {
            if (strcmp(sj_str(h, "program", ""), program) != 0)
                continue;
            char value[128];
            render_headline_value(h, value, sizeof value);
            sbuf_puts(b, "- ");
            sbuf_md(b, program);
            sbuf_puts(b, ", ");
            sbuf_md(b, sj_str(h, "label", "?"));
            if (strcmp(sj_str(h, "scope", ""), "per_device") == 0) {
                json_t *values = render_device_values(s, program, sj_str(h, "name", ""));
                sbuf_puts(b, ": median ");
                sbuf_md(b, value);
                sbuf_printf(b, " over %zu ", json_array_size(values));
                sbuf_puts(b, render_item_word(values)); /* "GPU" or "rank" */
                sbuf_puts(b, "s\n");
                json_decref(values);
            } else {
                sbuf_puts(b, ": ");
                sbuf_md(b, value);
                sbuf_puts(b, "\n");
            }
        }
    }
}

/* The title, the verdict line and the fault codes. */
static void verdict_head(sbuf *b, const json_t *s)
{
    const json_t *v = json_object_get(s, "verdict");
    bool pass = strcmp(sj_str(v, "result", "fail"), "pass") == 0;
    sbuf_puts(b, pass ? "# Cluster acceptance: PASS\n\n" : "# Cluster acceptance: FAIL\n\n");
    sbuf_printf(b, "Exit code %lld (", sj_int(v, "exit_code", -1));
    sbuf_md(b, sj_str(v, "exit_name", "?"));
    long long fails = sj_int(v, "failures", 0), warns = sj_int(v, "warnings", 0),
              abn = sj_int(v, "abnormal_node_count", 0), nodes = sj_int(s, "node_count", 0),
              gpus = sj_int(s, "gpu_count", 0);
    sbuf_printf(b, "): %lld %s, %lld %s, %lld abnormal %s. %lld %s, %lld %s", fails,
                render_plural(fails, "failure", "failures"), warns,
                render_plural(warns, "warning", "warnings"), abn, render_plural(abn, "node", "nodes"), nodes,
                render_plural(nodes, "node", "nodes"), gpus, render_plural(gpus, "GPU", "GPUs"));
    if (sj_str(s, "gpu_model", NULL)) {
        sbuf_puts(b, " (");
        sbuf_md(b, sj_str(s, "gpu_model", ""));
        sbuf_puts(b, ")");
    }
    sbuf_puts(b, ". ");
    sbuf_md(b, sj_str(json_object_get(s, "launcher"), "detail", "launcher unknown"));
    sbuf_puts(b, ", ");
    sbuf_md(b, sj_str(s, "created_utc", "?"));
    sbuf_puts(b, ".\n");
    if (json_array_size(sj_arr(v, "fault_codes"))) {
        sbuf_puts(b, "\nFault codes: ");
        codes(b, sj_arr(v, "fault_codes"), NULL);
        sbuf_puts(b, "\n");
    }
}

/* Which profile ran and what it did not cover. */
static void profile_line(sbuf *b, const json_t *s)
{
    const json_t *p = json_object_get(s, "profile");
    if (!json_is_object(p))
        return;
    sbuf_puts(b, "\nProfile: ");
    sbuf_md(b, sj_str(p, "name", "?"));
    sbuf_puts(b, " (");
    sbuf_md(b, sj_str(p, "source", "?"));
    sbuf_puts(b, ").");
    size_t i;
    json_t *v;
    json_array_foreach(sj_arr(p, "not_covered"), i, v) {
        sbuf_puts(b, i ? "; " : " Not covered: ");
        sbuf_md(b, json_is_string(v) ? json_string_value(v) : "?");
    }
    sbuf_puts(b, json_array_size(sj_arr(p, "not_covered")) ? ".\n" : "\n");
}

/* The nodes with a failure, with their fault codes. */
static void abnormal_nodes(sbuf *b, const json_t *s)
{
    const json_t *abn = sj_arr(s, "abnormal_nodes");
    sbuf_printf(b, "\n## Abnormal nodes (%zu)\n\n", json_array_size(abn));
    if (json_array_size(abn) == 0)
        sbuf_puts(b, "No node failed a check.\n");
    else
        sbuf_puts(b, "| node | fault codes |\n|---|---|\n");
    size_t i;
    json_t *e;
    json_array_foreach(abn, i, e) {
        sbuf_puts(b, "| ");
        sbuf_md(b, sj_str(e, "host", "?"));
        sbuf_puts(b, " | ");
        codes(b, sj_arr(e, "fault_codes"), e);
        sbuf_puts(b, " |\n");
    }
    /* The same nodes as one Slurm host list, to paste into scontrol, pdsh or a ticket. */
    const char **hosts = calloc(json_array_size(abn) + 1, sizeof *hosts);
    json_array_foreach(abn, i, e)
        if (hosts)
            hosts[i] = sj_str(e, "host", "?");
    char *list = hosts && json_array_size(abn) ? suite_hostlist_compress(hosts, json_array_size(abn)) : NULL;
    if (list) {
        sbuf_puts(b, "\nAbnormal nodes, to copy: ");
        sbuf_md_code(b, list);
        sbuf_puts(b, "\n");
    }
    free(list);
    free(hosts);
}

/* The abnormal links (issue 44, item 6): a slow link between two nodes fine with their other partners is
 * the link's or the path's, not either node's: neither is listed above, drained or resumed for it. */
static void abnormal_links(sbuf *b, const json_t *s)
{
    const json_t *links = sj_arr(s, "abnormal_links");
    if (json_array_size(links) == 0)
        return;
    sbuf_printf(b,
                "\n## Abnormal links (%zu)\n\nLeft to the fabric team: neither end is drained or resumed "
                "for a link.\n\n| link | fault codes | what was found |\n|---|---|---|\n",
                json_array_size(links));
    size_t i;
    json_t *l;
    json_array_foreach(links, i, l) {
        const json_t *hosts = json_object_get(l, "hosts");
        sbuf_puts(b, "| ");
        sbuf_md(b, json_string_value(json_array_get(hosts, 0)));
        sbuf_puts(b, " <-> ");
        sbuf_md(b, json_string_value(json_array_get(hosts, 1)));
        sbuf_puts(b, " | ");
        codes(b, sj_arr(l, "fault_codes"), NULL);
        sbuf_puts(b, " | ");
        sbuf_md(b, sj_str(l, "message", ""));
        sbuf_puts(b, " |\n");
    }
}

/* How each step ended, and the baseline applied. */
static void steps_table(sbuf *b, const json_t *s)
{
    size_t i;
    json_t *e;
    sbuf_puts(b, "\n## Steps\n\n| step | status | exit | ranks | nodes | time | [RESULT] "
                 "|\n|---|---|---|---|---|---|---|\n");
    json_array_foreach(sj_arr(s, "steps"), i, e) {
        char dur[32], ex[16] = "", ws[16] = "", nc[16] = "";
        render_duration(e, dur, sizeof dur);
        if (sj_int(e, "exit_code", -1) >= 0)
            snprintf(ex, sizeof ex, "%lld", sj_int(e, "exit_code", -1));
        if (sj_int(e, "world_size", -1) >= 0)
            snprintf(ws, sizeof ws, "%lld", sj_int(e, "world_size", -1));
        if (sj_int(e, "node_count", -1) >= 0)
            snprintf(nc, sizeof nc, "%lld", sj_int(e, "node_count", -1));
        const char *cells[6] = {sj_str(e, "program", "?"), sj_str(e, "status", "?"), ex, ws, nc, dur};
        for (size_t c = 0; c < 6; c++) {
            sbuf_puts(b, "| ");
            sbuf_md(b, cells[c]);
            sbuf_puts(b, " ");
        }
        sbuf_puts(b, "| ");
        sbuf_md(b, sj_str(e, "result_line", ""));
        sbuf_puts(b, " |\n");
    }
    const json_t *bl = json_object_get(s, "baseline");
    if (json_is_object(bl)) {
        sbuf_puts(b, "\nBaseline ");
        sbuf_md(b, sj_str(bl, "model", "?"));
        sbuf_puts(b, " (");
        sbuf_md(b, sj_str(bl, "file", ""));
        long long checked = sj_int(bl, "checked", 0), regs = sj_int(bl, "regressions", 0);
        sbuf_printf(b, "), tolerance %.4g%%: %lld %s checked, %lld %s.\n", sj_num(bl, "tolerance_pct", 0),
                    checked, render_plural(checked, "figure", "figures"), regs,
                    render_plural(regs, "regression", "regressions"));
    }
}

/* The verdict of each check on each node (abnormal nodes first, healthy ones up to a limit). */
static void nodes_grid(sbuf *b, const json_t *s)
{
    size_t i;
    json_t *e;
    size_t total = json_array_size(sj_arr(s, "nodes")), hidden = 0;
    const json_t **nodes = calloc(total ? total : 1, sizeof *nodes);
    if (nodes && total) {
        size_t nr = render_pick_nodes(s, nodes, SUITE_RENDER_MAX_NODE_ROWS, &hidden);
        sbuf_puts(b, "\n## Nodes by check\n\n| node | verdict |");
        json_array_foreach(sj_arr(s, "steps"), i, e) {
            sbuf_puts(b, " ");
            sbuf_md(b, sj_str(e, "program", "?"));
            sbuf_puts(b, " |");
        }
        sbuf_puts(b, " fault codes |\n|---|---|");
        json_array_foreach(sj_arr(s, "steps"), i, e)
            sbuf_puts(b, "---|");
        sbuf_puts(b, "---|\n");
        for (size_t r = 0; r < nr; r++) {
            sbuf_puts(b, "| ");
            sbuf_md(b, sj_str(nodes[r], "host", "?"));
            sbuf_puts(b, " | ");
            sbuf_md(b, sj_str(nodes[r], "verdict", "?"));
            sbuf_puts(b, " |");
            json_array_foreach(sj_arr(s, "steps"), i, e) {
                sbuf_puts(b, " ");
                sbuf_md(b, sj_str(json_object_get(nodes[r], "checks"), sj_str(e, "program", "?"), "not_run"));
                sbuf_puts(b, " |");
            }
            sbuf_puts(b, " ");
            codes(b, sj_arr(nodes[r], "fault_codes"), nodes[r]);
            sbuf_puts(b, " |\n");
        }
        if (hidden)
            sbuf_printf(b, "\n%zu more %s every check (all are in summary.json).\n", hidden,
                        render_plural((long long)hidden, "node passed", "nodes passed"));
    }
    free(nodes);
}

/* Every finding, failures first (up to 200). */
static void findings_table(sbuf *b, const json_t *s)
{
    size_t i;
    json_t *e;
    const json_t *fs = sj_arr(s, "findings");
    sbuf_printf(b, "\n## Findings (%zu)\n\n", json_array_size(fs));
    if (json_array_size(fs))
        sbuf_puts(b, "| severity | code | step | where | message |\n|---|---|---|---|---|\n");
    const char *order[] = {"fail", "warn", "info"};
    size_t shown = 0;
    for (int o = 0; o < 3; o++)
        json_array_foreach(fs, i, e) {
            if (strcmp(sj_str(e, "severity", "info"), order[o]) != 0 || shown >= 200)
                continue;
            shown++;
            char where[160];
            suite_finding_where(e, where, sizeof where);
            sbuf_puts(b, "| ");
            sbuf_puts(b, order[o]); /* fail, warn or info */
            sbuf_puts(b, " | ");
            sbuf_md_code(b, sj_str(e, "code", "?"));
            sbuf_puts(b, " | ");
            sbuf_md(b, sj_str(e, "program", "?"));
            sbuf_puts(b, " | ");
            sbuf_md(b, where);
            sbuf_puts(b, " | ");
            sbuf_md(b, sj_str(e, "message", ""));
            sbuf_puts(b, " |\n");
        }
    if (shown < json_array_size(fs))
        sbuf_printf(b, "\n%zu more %s in summary.json.\n", json_array_size(fs) - shown,
                    render_plural((long long)(json_array_size(fs) - shown), "finding", "findings"));
}

char *suite_render_md(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    verdict_head(&b, s);
    profile_line(&b, s);
    abnormal_nodes(&b, s);
    abnormal_links(&b, s);
    steps_table(&b, s);
    nodes_grid(&b, s);
    suite_fabric_md(&b, s);
    figures(&b, s);
    findings_table(&b, s);
    if (b.failed) {
        sbuf_free(&b);
        return NULL;
    }
    return b.data;
}
