#include "nh_fabric.h"

static json_t *node_json(const nh_record *all, int n, int node, const nh_check_opts *opts)
{
    const nh_record *lead = NULL;
    const char *gpu_name = NULL;
    for (int i = 0; i < n; i++) {
        const nh_record *r = &all[i];
        if (r->hdr.node_index != node)
            continue;
        if (r->node_checker && !lead)
            lead = r;
        if (r->gpu_count > 0 && !gpu_name)
            gpu_name = r->gpus[0].name;
    }
    if (!lead)
        return NULL;
    nh_expect e = nh_expect_for(opts, gpu_name);
    json_t *ports = json_array();
    for (int p = 0; p < lead->port_count && p < NH_MAX_PORTS; p++) {
        const nh_port *pt = &lead->ports[p];
        if (pt->state == 4 && pt->rate_gbps > 0) /* 4: ACTIVE */
            json_array_append_new(ports, json_pack("{s:s, s:i, s:f, s:s}", "hca", pt->hca, "port", pt->port,
                                                   "rate_gbps", pt->rate_gbps, "link_layer", pt->link_layer));
    }
    json_t *o = json_pack("{s:s, s:i, s:s?, s:b, s:o}", "host", lead->hdr.host, "node", node, "sku",
                          e.name[0] ? e.name : NULL, "require_peermem", e.require_peermem && e.name[0],
                          "ports_active", ports);
    json_object_set_new(o, "expect_hcas", e.hcas >= 0 ? json_integer(e.hcas) : json_null());
    return o;
}

json_t *nh_fabric_json(const nh_record *all, int n, const nh_check_opts *opts)
{
    int nodes = 0;
    for (int i = 0; i < n; i++)
        nodes = all[i].hdr.node_index + 1 > nodes ? all[i].hdr.node_index + 1 : nodes;
    json_t *list = json_array();
    for (int k = 0; k < nodes; k++) {
        json_t *o = node_json(all, n, k, opts);
        if (o)
            json_array_append_new(list, o);
    }
    return json_pack("{s:o}", "nodes", list);
}
