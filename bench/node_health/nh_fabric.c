#include "nh_fabric.h"

#include <stdio.h>

#include "ga_text.h"

/* A port by NCCL's name of it ("mlx5_0:1"), as valid UTF-8 (ga_text.h): sysfs names it. */
static json_t *port_name(const nh_port *pt)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s:%d", pt->hca, pt->port);
    return ga_json_text(buf);
}

static json_t *node_json(const nh_record *all, int n, int node, const nh_check_opts *opts)
{
    const char *gpu_name = NULL;
    for (int i = 0; i < n; i++)
        if (all[i].hdr.node_index == node && all[i].gpu_count > 0 && !gpu_name)
            gpu_name = all[i].gpus[0].name;
    nh_port_roles roles;
    const nh_record *lead = nh_node_port_roles(all, n, node, opts, &roles);
    if (!lead)
        return NULL;
    nh_expect e = nh_expect_for(opts, gpu_name);
    /* the compute ports only: a storage or management port is not the collectives' path (issue 40) */
    json_t *ports = json_array(), *names = json_array();
    for (int p = 0; p < lead->port_count && p < NH_MAX_PORTS; p++) {
        const nh_port *pt = &lead->ports[p];
        /* every compute port by NCCL's name of it ("mlx5_0:1", net_ib.cc's "NET/IB : Using [0]mlx5_0:1"),
         * active or not: gpuaccept run hands them to allreduce_bw's --ib-hcas (suite/run/profile.c) */
        if (roles.role[p] == NH_PORT_ROLE_COMPUTE)
            json_array_append_new(names, port_name(pt));
        if (roles.role[p] == NH_PORT_ROLE_COMPUTE && pt->state == 4 && pt->rate_gbps > 0) /* 4: ACTIVE */
            json_array_append_new(ports, json_pack("{s:o, s:i, s:f, s:o}", "hca", ga_json_text(pt->hca),
                                                   "port", pt->port, "rate_gbps", pt->rate_gbps, "link_layer",
                                                   ga_json_text(pt->link_layer)));
    }
    bool gdr = e.require_gdr && e.name[0];
    /* require_peermem: the key gpuaccept run reads (suite/summary/fabric.c), kept with require_gdr's value */
    json_t *o =
        json_pack("{s:o, s:i, s:o, s:b, s:b, s:o, s:o}", "host", ga_json_text(lead->hdr.host), "node", node,
                  "sku", ga_json_text(e.name[0] ? e.name : NULL), "require_gdr", gdr, "require_peermem", gdr,
                  "compute_ports", ga_json_text(roles.how), "ports_active", ports);
    json_object_set_new(o, "compute_port_names", names);
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
