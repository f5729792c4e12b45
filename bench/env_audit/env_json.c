#include "env_json.h"

#include "ga_text.h"

/* The record's data: the probe fills the versions in this order, the JSON and the audit read them by name. */
const char *const env_version_names[ENV_V_COUNT] = {"nvidia_driver", "cuda_driver",  "cuda_runtime",
                                                    "cublas",        "nccl_library", "nccl_header",
                                                    "mpi_library",   "hwloc",        "jansson"};

static json_t *numa_json(int numa)
{
    return numa < 0 ? json_null() : json_integer(numa);
}

static json_t *versions_json(const env_record *r)
{
    json_t *o = json_object();
    for (int i = 0; i < ENV_V_COUNT; i++) {
        const env_version *v = &r->versions[i];
        json_object_set_new(o, env_version_names[i],
                            v->value[0] ? json_pack("{s:o}", "value", ga_json_text(v->value))
                                        : json_pack("{s:n, s:o}", "value", "why", ga_json_text(v->why)));
    }
    return o;
}

static json_t *gpus_json(const env_record *r)
{
    json_t *arr = json_array();
    for (int i = 0; i < r->gpu_count && i < ENV_MAX_GPUS; i++) {
        const env_gpu *g = &r->gpus[i];
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
        json_array_append_new(arr, json_pack("{s:i, s:o, s:o, s:o, s:f, s:i, s:s, s:o}", "index", i, "name",
                                             ga_json_text(g->name), "uuid", ga_json_text(g->uuid),
                                             "pci_bus_id", ga_json_text(g->pci_bus_id), "memory_gib",
                                             (double)g->memory_gib, "sm_count", g->sm_count,
                                             "compute_capability", cc, "numa_node", numa_json(g->numa_node)));
    }
    return arr;
}

static json_t *nics_json(const env_record *r)
{
    json_t *arr = json_array();
    for (int i = 0; i < r->nic_count && i < ENV_MAX_NICS; i++) {
        const env_nic *n = &r->nics[i];
        json_t *o = json_pack("{s:o, s:o, s:o}", "name", ga_json_text(n->name), "kind", ga_json_text(n->kind),
                              "numa_node", numa_json(n->numa_node));
        if (n->link_layer[0])
            json_object_set_new(o, "link_layer", ga_json_text(n->link_layer));
        if (n->state[0])
            json_object_set_new(o, "port_state", ga_json_text(n->state));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* A host setting's text, null when not covered. */
static json_t *setting_json(const char *v)
{
    return v[0] ? ga_json_text(v) : json_null();
}

static json_t *host_json(const env_host *h)
{
    json_t *hcas = json_array(), *fw = json_array();
    for (int i = 0; i < h->hca_count && i < ENV_MAX_NICS; i++)
        json_array_append_new(hcas, json_pack("{s:o, s:o, s:o}", "name", ga_json_text(h->hcas[i].name),
                                              "fw_ver", setting_json(h->hcas[i].fw_ver), "link_layer",
                                              setting_json(h->hcas[i].link_layer)));
    for (int i = 0; i < h->gpu_fw_count && i < ENV_MAX_GPUS; i++)
        json_array_append_new(
            fw, json_pack("{s:o, s:o, s:o}", "pci_bus_id", ga_json_text(h->gpu_fw[i].pci_bus_id), "vbios",
                          setting_json(h->gpu_fw[i].vbios), "inforom", setting_json(h->gpu_fw[i].inforom)));
    json_t *o = json_pack(
        "{s:o, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "dimms",
        h->dimm_count > 0 ? json_integer(h->dimm_count) : json_null(), "sockets", h->sockets,
        "threads_per_core", h->threads_per_core, "hcas", hcas, "gpu_firmware", fw, "pcie_acs",
        setting_json(h->acs), "pcie_acs_source", ga_json_text(h->acs_why), "iommu", setting_json(h->iommu),
        "kernel_cmdline", setting_json(h->cmdline), "hugepages", setting_json(h->hugepages), "clocksource",
        setting_json(h->clocksource), "time_sync", setting_json(h->time_sync), "not_covered",
        json_pack("{s:o, s:s}", "inforom", h->fw_why[0] ? ga_json_text(h->fw_why) : json_null(),
                  "fabric_manager",
                  "its version is not readable without running nv-fabricmanager; each GPU's fabric state is "
                  "node_health's"));
    return o;
}

json_t *env_record_json(const void *record, void *user)
{
    (void)user;
    const env_record *r = record;
    json_t *env = json_object();
    for (int i = 0; i < r->var_count && i < ENV_MAX_VARS; i++)
        json_object_set_new(env, r->vars[i].name,
                            ga_json_text(r->vars[i].value)); /* cut anywhere: see ga_text.h */
    json_t *o =
        json_pack("{s:o, s:o, s:{s:o, s:i, s:i, s:i, s:f}}", "os", ga_json_text(r->os), "kernel",
                  ga_json_text(r->kernel), "cpu", "model", ga_json_text(r->cpu_model), "cores", r->cores,
                  "threads", r->pus, "numa_nodes", r->numa_nodes, "memory_gib", r->memory_gib);
    json_object_set_new(json_object_get(o, "cpu"), "cpus_allowed", json_integer(r->cpus_allowed));
    json_object_set_new(o, "versions", versions_json(r));
    json_object_set_new(o, "gpu_count", json_integer(r->gpu_count));
    if (r->gpu_count == 0)
        json_object_set_new(o, "gpu_why_none", ga_json_text(r->gpu_why));
    json_object_set_new(o, "gpus", gpus_json(r));
    json_object_set_new(o, "network_adapters", nics_json(r));
    json_object_set_new(o, "environment", env);
    json_object_set_new(o, "host_settings", host_json(&r->host));
    if (r->vars_dropped)
        json_object_set_new(o, "environment_dropped", json_integer(r->vars_dropped));
    return o;
}
