#include "nh_json.h"
#include "ga_text.h"

#include "nh_ports.h"
#include "nh_record.h"

/* -1 is "could not be read": null in the report. */
static json_t *num(int64_t v)
{
    return v < 0 ? json_null() : json_integer(v);
}

static json_t *gpu_json(const nh_gpu *g)
{
    json_t *o = json_pack("{s:i, s:o, s:o, s:o}", "index", g->index, "name", ga_json_text(g->name), "uuid",
                          ga_json_text(g->uuid), "pci_bus_id", ga_json_text(g->pci_bus_id));
    json_object_set_new(o, "numa_node", num(g->numa_node));
    json_object_set_new(o, "handle_rc", json_integer(g->handle_rc));
    json_object_set_new(o, "lost", json_boolean(g->lost_rc != 0));
    json_object_set_new(o, "lost_rc", g->lost_rc ? json_integer(g->lost_rc) : json_null());
    json_object_set_new(o, "ecc_mode", num(g->ecc_mode));
    json_object_set_new(o, "ecc_uncorrected_volatile", num(g->ecc_uncorrected_volatile));
    json_object_set_new(o, "ecc_uncorrected_aggregate", num(g->ecc_uncorrected_aggregate));
    json_object_set_new(o, "ecc_corrected_volatile", num(g->ecc_corrected_volatile));
    json_object_set_new(o, "ecc_corrected_aggregate", num(g->ecc_corrected_aggregate));
    json_object_set_new(o, "remap_pending", num(g->remap_pending));
    json_object_set_new(o, "remap_failed", num(g->remap_failed));
    json_object_set_new(o, "retired_pages_pending", num(g->retired_pages_pending));
    json_object_set_new(o, "pcie_width", num(g->pcie_width));
    json_object_set_new(o, "pcie_max_width", num(g->pcie_max_width));
    json_object_set_new(o, "pcie_gen", num(g->pcie_gen));
    json_object_set_new(o, "pcie_max_gen", num(g->pcie_max_gen));
    json_object_set_new(o, "nvlinks", num(g->nvlinks));
    json_object_set_new(o, "nvlinks_active", num(g->nvlinks >= 0 ? g->nvlinks_active : -1));
    json_object_set_new(o, "nvlink_crc", num(g->nvlink_crc));
    json_object_set_new(o, "nvlink_replay", num(g->nvlink_replay));
    json_object_set_new(o, "nvlink_recovery", num(g->nvlink_recovery));
    json_object_set_new(o, "nvlink_crc_data", num(g->nvlink_crc_data));
    json_object_set_new(o, "nvlink_ecc_data", num(g->nvlink_ecc_data));
    json_object_set_new(o, "nvlink_down_mask", json_integer(g->nvlink_down_mask));
    json_object_set_new(o, "nvlink_sleep_mask", json_integer(g->nvlink_sleep_mask));
    json_object_set_new(o, "clock_event_reasons", num(g->clock_event_reasons));
    json_object_set_new(o, "clock_event_persistent", num(g->clock_event_persistent));
    json_object_set_new(o, "clock_event_samples", json_integer(g->clock_event_samples));
    json_object_set_new(o, "power_limit_mw", num(g->power_limit_mw));
    json_object_set_new(o, "power_default_limit_mw", num(g->power_default_limit_mw));
    json_object_set_new(o, "temperature_c", num(g->temperature_c));
    json_object_set_new(o, "temperature_slowdown_c", num(g->temperature_slowdown_c));
    json_object_set_new(o, "persistence_mode", num(g->persistence_mode));
    json_object_set_new(o, "mig_mode", num(g->mig_mode));
    json_object_set_new(o, "fabric_state", num(g->fabric_state));
    json_object_set_new(o, "unreadable", ga_json_text(g->unreadable));
    return o;
}

static json_t *port_json(const nh_port *p)
{
    json_t *o = json_pack("{s:o, s:i, s:o, s:o, s:o}", "hca", ga_json_text(p->hca), "port", p->port, "state",
                          ga_json_text(p->state_name), "phys_state", ga_json_text(p->phys_state_name),
                          "link_layer", ga_json_text(p->link_layer));
    json_object_set_new(o, "rate_gbps", p->rate_gbps < 0 ? json_null() : json_real(p->rate_gbps));
    json_object_set_new(o, "symbol_error", num(p->symbol_error));
    json_object_set_new(o, "link_downed", num(p->link_downed));
    json_object_set_new(o, "link_error_recovery", num(p->link_error_recovery));
    json_object_set_new(o, "port_rcv_errors", num(p->port_rcv_errors));
    json_object_set_new(o, "numa_node", num(p->numa_node));
    json_object_set_new(o, "is_vf", json_boolean(p->is_vf));
    /* compute / other / vf (nh_ports.h); null where the program did not choose (a record replayed alone) */
    json_object_set_new(o, "role", p->role ? json_string(nh_port_role_name(p->role)) : json_null());
    json_object_set_new(o, "unreadable", ga_json_text(p->unreadable));
    return o;
}

/* -1 unknown: null; else true/false. */
static json_t *tri(int32_t v)
{
    return v < 0 ? json_null() : json_boolean(v);
}

json_t *nh_record_json(const void *record, void *user)
{
    (void)user;
    const nh_record *r = record;
    json_t *gpus = json_array();
    for (int i = 0; i < r->gpu_count && i < NH_MAX_GPUS; i++)
        json_array_append_new(gpus, gpu_json(&r->gpus[i]));
    json_t *o = json_pack("{s:{s:b, s:o, s:o}, s:o}", "nvml", "loaded", r->nvml_loaded, "why",
                          ga_json_text(r->nvml_why), "gpus_on_node", num(r->nvml_gpus_total), "gpus", gpus);
    if (!r->node_checker)
        return o;
    json_t *xids = json_array(), *ports = json_array();
    for (int i = 0; i < r->xid_count && i < NH_MAX_XIDS; i++)
        json_array_append_new(xids, json_pack("{s:i, s:o, s:i, s:o}", "xid", r->xids[i].xid, "pci",
                                              ga_json_text(r->xids[i].pci), "count", r->xids[i].count, "line",
                                              ga_json_text(r->xids[i].first_line))); /* kernel log text */
    for (int i = 0; i < r->port_count && i < NH_MAX_PORTS; i++)
        json_array_append_new(ports, port_json(&r->ports[i]));
    json_t *sxids = json_array();
    for (int i = 0; i < r->sxid_count && i < NH_MAX_SXIDS; i++) {
        const nh_sxid *x = &r->sxids[i];
        json_array_append_new(sxids, json_pack("{s:i, s:o, s:o, s:i, s:o}", "sxid", x->sxid, "pci",
                                               ga_json_text(x->pci), "fatal",
                                               x->fatal < 0 ? json_null() : json_boolean(x->fatal), "count",
                                               x->count, "line", ga_json_text(x->first_line)));
    }
    json_t *gdr = json_pack("{s:o, s:o, s:o}", "nvidia_peermem", tri(r->peermem), "nv_mem", tri(r->nv_mem),
                            "nvidia_open", tri(r->nvidia_open));
    json_object_set_new(
        o, "node",
        json_pack("{s:{s:b, s:o, s:o, s:o, s:i, s:o, s:i}, s:{s:b, s:o, s:i, s:o, s:o}, s:o, s:o}",
                  "kernel_log", "read", r->kernel_log_read, "source", ga_json_text(r->kernel_log_source),
                  "why", ga_json_text(r->kernel_log_why), "xids", xids, "xids_dropped", r->xids_dropped,
                  "sxids", sxids, "sxids_dropped", r->sxids_dropped, "infiniband", "read", r->ib_read, "why",
                  ga_json_text(r->ib_why), "hcas", r->hca_count, "nccl_ib_hca",
                  ga_json_text(r->ib_hca_env[0] ? r->ib_hca_env : NULL), "ports", ports, "nvidia_peermem",
                  tri(r->peermem), "gpudirect_rdma", gdr));
    return o;
}
