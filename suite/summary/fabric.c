#include "fabric.h"

#include "escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_ib_list.h"
#include "ga_str.h"

/* A report's list of strings as "a, b, c" (at most len). */
static void joined(const json_t *arr, const char *sep, char *out, size_t len)
{
    out[0] = '\0';
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (!json_is_string(v))
            continue;
        size_t have = strlen(out);
        snprintf(out + have, len - have, "%s%s", have ? sep : "", json_string_value(v));
    }
}

/* One node's row: "IB (mlx5_0:1, mlx5_1:1)", "all", "P2P, NVLS over NVLink". */
static json_t *node_row(const json_t *n)
{
    const json_t *b = json_object_get(n, "between_nodes"), *in = json_object_get(n, "inside_node");
    char nets[128], devs[256], between[420], paths[128], inside[200];
    joined(sj_arr(b, "networks"), "+", nets, sizeof nets);
    joined(sj_arr(b, "devices"), ", ", devs, sizeof devs);
    snprintf(between, sizeof between, "%s%s%s%s", nets[0] ? nets : "none", devs[0] ? " (" : "", devs,
             devs[0] ? ")" : "");
    if (sj_str(b, "forced_by", NULL))
        snprintf(between + strlen(between), sizeof between - strlen(between), "; %s",
                 sj_str(b, "forced_by", ""));
    joined(sj_arr(in, "paths"), ", ", paths, sizeof paths);
    snprintf(inside, sizeof inside, "%s%s%s", paths[0] ? paths : "-",
             sj_str(in, "link", NULL) ? " over " : "", sj_str(in, "link", ""));
    json_t *nets_arr = sj_arr(b, "networks");
    return json_pack("{s:s, s:s, s:s, s:s, s:o}", "host", sj_str(n, "host", "?"), "between_nodes", between,
                     "gdr", sj_str(b, "gdr", "n/a"), "inside_node", inside, "networks",
                     nets_arr ? json_deep_copy(nets_arr) : json_array());
}

/* The report whose transport the summary shows: allreduce_bw's (it checks it), else ddp_smoke's. */
static const json_t *transport_report(const json_t *reports)
{
    const char *order[] = {"allreduce_bw", "ddp_smoke"};
    for (size_t k = 0; k < 2; k++) {
        size_t i;
        json_t *r;
        json_array_foreach(reports, i, r)
            if (ga_streq(sj_str(r, "program", NULL), order[k]) &&
                json_is_object(json_object_get(r, "transport")))
                return r;
    }
    return NULL;
}

/* Appends a line to summary.profile.not_covered (nothing without a profile). */
static void not_covered_add(json_t *summary, const char *line)
{
    json_t *profile = json_object_get(summary, "profile");
    if (!json_is_object(profile))
        return;
    json_t *nc = json_object_get(profile, "not_covered");
    if (!json_is_array(nc)) {
        nc = json_array();
        json_object_set_new(profile, "not_covered", nc);
    }
    json_array_append_new(nc, json_string(line));
}

void suite_fabric_merge(json_t *summary, const json_t *reports)
{
    const json_t *r = transport_report(reports);
    if (!r) {
        json_object_set_new(summary, "fabric", json_null());
        return;
    }
    const json_t *t = json_object_get(r, "transport");
    json_t *rows = json_array();
    size_t i;
    json_t *n;
    json_array_foreach(sj_arr(t, "nodes"), i, n)
        if (json_is_object(n))
            json_array_append_new(rows, node_row(n));
    bool exercised = sj_bool(t, "ib_exercised", false);
    const char *why = sj_str(t, "ib_not_exercised_why", "the transport between nodes is unknown");
    json_object_set_new(summary, "fabric",
                        json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:s?, s:o}", "program",
                                  sj_str(r, "program", "?"), "source", sj_str(t, "source", "?"), "expect_net",
                                  sj_str(t, "expect_net", "any"), "multi_node",
                                  sj_bool(t, "multi_node", false), "ib_exercised", exercised,
                                  "sockets_intended", sj_bool(t, "sockets_intended", false),
                                  "ib_not_exercised_why", exercised ? NULL : why, "nodes", rows));
    char line[320];
    if (!exercised) {
        snprintf(line, sizeof line, "InfiniBand not exercised: %s (%s)", why, sj_str(r, "program", "?"));
        not_covered_add(summary, line);
    }
    /* --ib-hcas given, yet some nodes' devices could not be held to it: said, never counted as a pass */
    const json_t *hcas = json_object_get(t, "ib_hcas");
    long long unchecked = sj_int(hcas, "nodes_not_compared", 0);
    if (exercised && unchecked > 0) {
        snprintf(line, sizeof line,
                 "NCCL's devices not compared with the compute ports on %lld node%s: %s (%s)", unchecked,
                 unchecked == 1 ? "" : "s", sj_str(hcas, "not_compared_why", "unknown"),
                 sj_str(r, "program", "?"));
        not_covered_add(summary, line);
    }
}

#define FABRIC_ROWS_MAX 200

static const char *between_line(const json_t *f, char *buf, size_t len)
{
    if (!sj_bool(f, "multi_node", false))
        snprintf(buf, len, "one node: nothing went between nodes");
    else if (sj_bool(f, "ib_exercised", false))
        snprintf(buf, len, "InfiniBand (or RoCE, or an RDMA plugin) between every pair of nodes measured");
    else
        snprintf(buf, len, "InfiniBand not exercised: %s", sj_str(f, "ib_not_exercised_why", "?"));
    return buf;
}

void suite_fabric_md(sbuf *b, const json_t *s)
{
    const json_t *f = json_object_get(s, "fabric");
    if (!json_is_object(f))
        return;
    char line[400];
    sbuf_puts(b, "\n## Fabric\n\n");
    sbuf_md(b, between_line(f, line, sizeof line));
    sbuf_puts(b, ". From ");
    sbuf_md(b, sj_str(f, "program", "?"));
    sbuf_puts(b, ": ");
    sbuf_md(b, sj_str(f, "source", "?"));
    sbuf_puts(b, ".\n");
    if (sj_bool(f, "sockets_intended", false))
        sbuf_puts(b, "\n**Sockets between nodes were intended (--allow-sockets).**\n");
    sbuf_puts(b, "\n| node | between nodes | GPUDirect RDMA | inside the node |\n|---|---|---|---|\n");
    size_t i;
    json_t *n;
    json_array_foreach(sj_arr(f, "nodes"), i, n) {
        if (i == FABRIC_ROWS_MAX) {
            sbuf_printf(b, "\n%zu more nodes in summary.json.\n", json_array_size(sj_arr(f, "nodes")) - i);
            break;
        }
        const char *cells[] = {sj_str(n, "host", "?"), sj_str(n, "between_nodes", "?"), sj_str(n, "gdr", "?"),
                               sj_str(n, "inside_node", "?")};
        for (size_t c = 0; c < 4; c++) {
            sbuf_puts(b, "| ");
            sbuf_md(b, cells[c]);
            sbuf_puts(b, " ");
        }
        sbuf_puts(b, "|\n");
    }
}

void suite_fabric_html(sbuf *b, const json_t *s)
{
    const json_t *f = json_object_get(s, "fabric");
    if (!json_is_object(f))
        return;
    char line[400];
    sbuf_puts(b, "<section id=\"fabric\"><h2>Fabric</h2><p>");
    sbuf_html(b, between_line(f, line, sizeof line));
    sbuf_puts(b, ". From ");
    sbuf_html(b, sj_str(f, "program", "?"));
    sbuf_puts(b, ": ");
    sbuf_html(b, sj_str(f, "source", "?"));
    sbuf_puts(b, ".</p>");
    if (sj_bool(f, "sockets_intended", false))
        sbuf_puts(b, "<p class=\"sockets-intended\"><b>Sockets between nodes were intended "
                     "(--allow-sockets).</b></p>");
    sbuf_puts(
        b,
        "<table><tr><th>node</th><th>between nodes</th><th>GPUDirect RDMA</th><th>inside the node</th></tr>");
    size_t i;
    json_t *n;
    json_array_foreach(sj_arr(f, "nodes"), i, n) {
        if (i == FABRIC_ROWS_MAX)
            break;
        const char *cells[] = {sj_str(n, "host", "?"), sj_str(n, "between_nodes", "?"), sj_str(n, "gdr", "?"),
                               sj_str(n, "inside_node", "?")};
        sbuf_puts(b, "<tr>");
        for (size_t c = 0; c < 4; c++) {
            sbuf_puts(b, "<td>");
            sbuf_html(b, cells[c]);
            sbuf_puts(b, "</td>");
        }
        sbuf_puts(b, "</tr>");
    }
    sbuf_puts(b, "</table></section>\n");
}

static int cmp_rate_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* A node's active port rates summed: the expect_hcas fastest when its SKU says how many there are. */
static double node_rate(const json_t *node, int *ports)
{
    double rates[64];
    int n = 0;
    size_t i;
    json_t *p;
    json_array_foreach(sj_arr(node, "ports_active"), i, p)
        if (n < 64 && sj_num(p, "rate_gbps", 0) > 0)
            rates[n++] = sj_num(p, "rate_gbps", 0);
    qsort(rates, (size_t)n, sizeof rates[0], cmp_rate_desc);
    long long want = sj_int(node, "expect_hcas", -1);
    int k = want > 0 && want < n ? (int)want : n;
    double sum = 0;
    for (int j = 0; j < k; j++)
        sum += rates[j];
    *ports = k;
    return sum;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A node's compute port names (node_health's compute_port_names), sorted, comma-joined into out; the
 * node's order into in_order. false when the node names none. */
static bool node_port_names(const json_t *node, char *sorted, size_t slen, char *in_order, size_t olen)
{
    const char *names[64];
    size_t n = 0, i;
    json_t *v;
    json_array_foreach(sj_arr(node, "compute_port_names"), i, v)
        if (json_is_string(v) && n < 64)
            names[n++] = json_string_value(v);
    in_order[0] = sorted[0] = '\0';
    for (i = 0; i < n; i++)
        snprintf(in_order + strlen(in_order), olen - strlen(in_order), "%s%s", i ? "," : "", names[i]);
    qsort(names, n, sizeof names[0], cmp_str);
    for (i = 0; i < n; i++)
        snprintf(sorted + strlen(sorted), slen - strlen(sorted), "%s%s", i ? "," : "", names[i]);
    return n > 0;
}

/* {compute_hcas}: the list of compute ports every node has, by name, for allreduce_bw's --ib-hcas; NCCL
 * names its devices "mlx5_0:1" (net_ib.cc, "NET/IB : Using [0]mlx5_0:1/IB"), and '=' makes the names exact
 * (net_ib.cc, ncclIbInitDevices), so that mlx5_1 does not keep mlx5_10. Nodes that differ get none: one
 * list for all would fail a node for its own healthy naming. */
static void compute_hcas_facts(const json_t *nodes, suite_fabric_facts *f)
{
    char first[1024] = "", sorted[1024], order[1024], why[160];
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        if (!node_port_names(n, sorted, sizeof sorted, order, sizeof order)) {
            snprintf(f->compute_hcas_why, sizeof f->compute_hcas_why,
                     "node_health chose no compute port on %s", sj_str(n, "host", "?"));
            return;
        }
        if (i == 0) {
            snprintf(first, sizeof first, "%s", sorted);
            snprintf(f->compute_hcas, sizeof f->compute_hcas, "=%s", order);
        } else if (strcmp(first, sorted) != 0) {
            snprintf(f->compute_hcas_why, sizeof f->compute_hcas_why,
                     "nodes differ (%s's compute ports are not %s's)", sj_str(n, "host", "?"),
                     sj_str(json_array_get(nodes, 0), "host", "?"));
            f->compute_hcas[0] = '\0';
            return;
        }
    }
    if (f->compute_hcas[0] && ga_ib_list_check(f->compute_hcas, why, sizeof why) != 0) {
        snprintf(f->compute_hcas_why, sizeof f->compute_hcas_why, "the compute ports make no list: %s", why);
        f->compute_hcas[0] = '\0';
    }
}

void suite_fabric_facts_from(const json_t *r, const char *why, suite_fabric_facts *f)
{
    memset(f, 0, sizeof *f);
    const json_t *nodes = sj_arr(json_object_get(json_object_get(r, "summary"), "fabric"), "nodes");
    if (!r || !nodes || json_array_size(nodes) == 0) {
        snprintf(f->why, sizeof f->why, "%s", r ? "node_health's report has no fabric summary" : why);
        snprintf(f->compute_hcas_why, sizeof f->compute_hcas_why, "%s", f->why);
        return;
    }
    f->have = true;
    compute_hcas_facts(nodes, f);
    long long world = sj_int(r, "world_size", 0), count = sj_int(r, "node_count", 0);
    f->ranks_per_node = count > 0 && world % count == 0 ? (int)(world / count) : 0;
    size_t i;
    json_t *n;
    bool first = true;
    json_array_foreach(nodes, i, n) {
        int ports = 0;
        double rate = node_rate(n, &ports);
        f->nodes++;
        bool hca = ports > 0 || sj_int(n, "expect_hcas", 0) > 0;
        f->nodes_with_hca += hca;
        f->gdr_required |= hca && sj_bool(n, "require_peermem", false);
        if (first || rate < f->min_rate_gbps) {
            f->min_rate_gbps = rate;
            snprintf(f->min_host, sizeof f->min_host, "%s", sj_str(n, "host", "?"));
        }
        first = false;
    }
}

void suite_fabric_facts_read(const char *report_dir, const char *run_id, suite_fabric_facts *f)
{
    char path[4200], err[512] = "";
    snprintf(path, sizeof path, "%s/node_health.json", report_dir);
    json_t *r = suite_load_json(path, err, sizeof err);
    if (r && !ga_streq(sj_str(r, "run_id", NULL), run_id)) {
        json_decref(r);
        r = NULL;
        snprintf(err, sizeof err, "its report is of another run");
    }
    char why[600];
    snprintf(why, sizeof why, "node_health left no report (%s)", err[0] ? err : "not run");
    suite_fabric_facts_from(r, why, f);
    json_decref(r);
}
