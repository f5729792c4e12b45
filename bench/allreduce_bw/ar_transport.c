#include "ar_transport.h"

#include <stdio.h>
#include <string.h>

#include "ga_log.h"
#include "ga_transport_capture.h"

/* "IB on 2 of 2 nodes (mlx5_0:1, ...)": what the nodes used between them, in one line. */
static void log_between(const json_t *t)
{
    size_t i, n = json_array_size(json_object_get(t, "nodes"));
    json_t *node;
    char first[256] = "";
    int same = 0;
    json_array_foreach(json_object_get(t, "nodes"), i, node) {
        char line[256] = "";
        const json_t *b = json_object_get(node, "between_nodes");
        size_t k;
        json_t *w;
        json_array_foreach(json_object_get(b, "networks"), k, w)
            snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", k ? "+" : "",
                     json_string_value(w));
        snprintf(line + strlen(line), sizeof line - strlen(line), "%sGDR %s", line[0] ? ", " : "none, ",
                 json_string_value(json_object_get(b, "gdr")));
        ga_debug("COMM", "transport of %s: between nodes %s; inside the node %s",
                 json_string_value(json_object_get(node, "host")), line,
                 json_string_value(json_object_get(json_object_get(node, "inside_node"), "link"))
                     ? json_string_value(json_object_get(json_object_get(node, "inside_node"), "link"))
                     : "-");
        if (i == 0)
            snprintf(first, sizeof first, "%s", line);
        same += strcmp(first, line) == 0;
    }
    if (!json_is_true(json_object_get(t, "multi_node")))
        ga_log("COMM", "transport: one node, nothing between nodes (%s)",
               json_string_value(json_object_get(t, "source")));
    else
        ga_log("COMM", "transport between nodes: %s on %d of %zu nodes%s", first, same, n,
               json_is_true(json_object_get(t, "sockets_intended")) ? "; sockets intended (--allow-sockets)"
                                                                    : "");
}

/* --ib-hcas: whether the devices NCCL used between nodes were compared with the compute ports, in one line.
 */
static void log_hcas(const json_t *t)
{
    const json_t *h = json_object_get(t, "ib_hcas");
    if (!h)
        return;
    long long kept = json_integer_value(json_object_get(h, "nodes_kept")),
              outside = json_integer_value(json_object_get(h, "nodes_outside")),
              unknown = json_integer_value(json_object_get(h, "nodes_not_compared"));
    if (unknown)
        ga_log("COMM",
               "NCCL's devices between nodes not compared with the compute ports (--ib-hcas %s) on %lld "
               "node(s): %s",
               json_string_value(json_object_get(h, "list")), unknown,
               json_string_value(json_object_get(h, "not_compared_why")));
    if (kept || outside)
        ga_log("COMM",
               "NCCL's devices between nodes against --ib-hcas %s: kept on %lld node(s), outside on %lld",
               json_string_value(json_object_get(h, "list")), kept, outside);
}

void ar_transport_report(const ga_ctx *ctx, const ar_opts *o, bool nccl, json_t *report, ga_findings *f)
{
    ga_transport_policy pol = {.expect = o->expect_net,
                               .allow_sockets = o->allow_sockets,
                               .nccl = nccl,
                               .node_count = ctx->node_count,
                               .ib_hcas = o->ib_hcas};
    json_t *t = ga_transport_collect(ctx, &pol, f);
    if (!t)
        return;
    log_between(t);
    log_hcas(t);
    json_object_set_new(report, "transport", t);
}
