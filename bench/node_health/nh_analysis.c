#include "nh_analysis.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nh_node.h"

/* The Xids that name a bad GPU, its memory or its links (docs/node_health.md, "The Xids that fail", from
 * NVIDIA's Xid catalogue). The others (13, 31, 43, 45, ...) are usually raised by an application's fault and
 * only warn; so do 63 and 94, which NVIDIA's GPU memory error management guide calls "successful recording of
 * a row-remapping entry" and "a contained ECC error": the remap state read from NVML decides. */
static const int failing_xids[] = {48, 62, 64, 74, 79, 92, 95, 119, 120, 140, 154};

bool nh_xid_is_failure(int xid)
{
    for (size_t i = 0; i < sizeof failing_xids / sizeof failing_xids[0]; i++)
        if (failing_xids[i] == xid)
            return true;
    return false;
}

nh_expect nh_expect_for(const nh_check_opts *opts, const char *gpu_name)
{
    nh_expect e = nh_expect_none();
    const nh_expect *sku = NULL;
    if (opts->skus)
        sku = opts->sku ? nh_sku_by_name(opts->skus, opts->sku)
                        : (gpu_name && gpu_name[0] ? nh_sku_match(opts->skus, gpu_name) : NULL);
    if (sku)
        e = *sku;
    if (opts->expect_gpus >= 0)
        e.gpus = opts->expect_gpus;
    if (opts->expect_hcas >= 0)
        e.hcas = opts->expect_hcas;
    if (opts->expect_ib_rate_gbps > 0)
        e.ib_rate_gbps = opts->expect_ib_rate_gbps;
    return e;
}

/* The GPU by NVML's index and by its PCI bus id, which CUDA programs' findings share (issue 40). */
static ga_where gpu_where(const nh_record *r, const nh_gpu *g)
{
    return (ga_where){r->hdr.host, r->hdr.node_index, r->hdr.world_rank, g->index, g->pci_bus_id};
}

/* ECC, row remapping and retired pages. */
static void check_gpu_memory(const nh_gpu *g, const char *id, ga_where w, const nh_thresholds *th,
                             ga_findings *f)
{
    if (g->unreadable[0])
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_UNREADABLE", w, "%s: NVML could not read %s: not checked", id,
                        g->unreadable);
    if (g->ecc_mode == 0)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_ECC_DISABLED", w, "%s: ECC is off", id);
    /* A GPU that remapped a row keeps its lifetime count for ever: the remap state (below) decides, as
     * NVIDIA's memory error management does; errors since the driver loaded, a pending or a failed remap
     * fail. */
    if (g->ecc_uncorrected_volatile > 0)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_ECC_UNCORRECTABLE", w,
                        "%s: %" PRId64 " uncorrectable ECC errors since the driver loaded (%" PRId64
                        " in its lifetime)",
                        id, g->ecc_uncorrected_volatile,
                        g->ecc_uncorrected_aggregate > 0 ? g->ecc_uncorrected_aggregate : 0);
    else if (g->ecc_uncorrected_aggregate > 0)
        ga_findings_add(f, GA_SEV_INFO, "HEALTH_ECC_UNCORRECTABLE_HISTORY", w,
                        "%s: %" PRId64 " uncorrectable ECC errors in its lifetime, none since the driver "
                        "loaded; remapped rows are checked below",
                        id, g->ecc_uncorrected_aggregate);
    if (g->ecc_corrected_volatile > th->ecc_corrected_volatile)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_ECC_CORRECTABLE", w,
                        "%s: %" PRId64 " correctable ECC errors since boot (threshold %" PRId64 ")", id,
                        g->ecc_corrected_volatile, th->ecc_corrected_volatile);
    if (g->remap_pending == 1)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_ROW_REMAP_PENDING", w,
                        "%s: a row remap is pending: the GPU must be reset before it is used", id);
    if (g->remap_failed == 1)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_ROW_REMAP_FAILED", w,
                        "%s: a row remap failed: the GPU has run out of spare rows", id);
    if (g->retired_pages_pending == 1)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_RETIRED_PAGES_PENDING", w,
                        "%s: retired pages are pending: the GPU must be reset", id);
}

/* PCIe width and generation, NVLinks and the error counters of both. */
static void check_gpu_links(const nh_gpu *g, const char *id, ga_where w, const nh_expect *e,
                            const nh_thresholds *th, ga_findings *f)
{
    /* The link's capability (nvmlDeviceGetMaxPcieLinkWidth: "the maximum PCIe link width possible with this
     * device and system", so a GPU in a narrower slot reads it) is judged against the SKU. The current width
     * is not: nvidia-smi's documentation says the current link width and generation "may be reduced when the
     * GPU is not in use", and node_health reads an idle GPU. mem_bw judges the link under load
     * (MEM_PCIE_DEGRADED). */
    if (g->pcie_max_width > 0 && e->pcie_width > 0 && g->pcie_max_width < e->pcie_width)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_PCIE_DEGRADED", w,
                        "%s: PCIe link capable of x%d at most, expected x%d", id, g->pcie_max_width,
                        e->pcie_width);
    else if (g->pcie_width > 0 && ((g->pcie_max_width > 0 && g->pcie_width < g->pcie_max_width) ||
                                   (e->pcie_width > 0 && g->pcie_width < e->pcie_width)))
        ga_findings_add(f, GA_SEV_INFO, "HEALTH_PCIE_IDLE_WIDTH", w,
                        "%s: PCIe link at x%d while idle, capable of x%d: an idle GPU may narrow its link; "
                        "mem_bw judges it under load",
                        id, g->pcie_width, g->pcie_max_width);
    if (g->pcie_max_gen > 0 && e->pcie_gen > 0 && g->pcie_max_gen < e->pcie_gen)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_PCIE_DEGRADED", w,
                        "%s: PCIe link capable of Gen%d at most, expected Gen%d", id, g->pcie_max_gen,
                        e->pcie_gen);
    if (g->nvlinks >= 0) {
        /* Only a SKU says how many links the platform wires: PCIe parts without a bridge have NVLinks that
         * NVML lists and that are never up. Without one, inactive links are reported, not failed. */
        if (e->nvlinks_per_gpu > 0 && g->nvlinks == 0)
            ga_findings_add(
                f, GA_SEV_FAIL, "HEALTH_NVLINK_DOWN", w,
                "%s: NVML lists no NVLink, %d expected (links absent or not exposed: a GPU passed "
                "through to a virtual machine alone has none)",
                id, e->nvlinks_per_gpu);
        else if (e->nvlinks_per_gpu >= 0 && g->nvlinks_active < e->nvlinks_per_gpu)
            ga_findings_add(f, GA_SEV_FAIL, "HEALTH_NVLINK_DOWN", w,
                            "%s: %d of %d NVLinks active (down mask 0x%05x)", id, g->nvlinks_active,
                            e->nvlinks_per_gpu, (unsigned)g->nvlink_down_mask);
        else if (e->nvlinks_per_gpu < 0 && g->nvlinks_active < g->nvlinks)
            ga_findings_add(f, GA_SEV_INFO, "HEALTH_NVLINK_INACTIVE", w,
                            "%s: %d of its %d NVLinks active (down mask 0x%05x); no SKU says how many this "
                            "platform wires (a PCIe card without a bridge wires none): not failed",
                            id, g->nvlinks_active, g->nvlinks, (unsigned)g->nvlink_down_mask);
        if (g->nvlink_sleep_mask)
            ga_findings_add(f, GA_SEV_INFO, "HEALTH_NVLINK_ASLEEP", w,
                            "%s: NVLinks 0x%05x read inactive in their low-power state (asleep): counted "
                            "active",
                            id, (unsigned)g->nvlink_sleep_mask);
        /* nvmlNvLinkErrorCounter_t: DL replay, recovery, CRC flit, CRC data and ECC data (nvml.h). */
        int64_t errors = (g->nvlink_crc > 0 ? g->nvlink_crc : 0) +
                         (g->nvlink_replay > 0 ? g->nvlink_replay : 0) +
                         (g->nvlink_recovery > 0 ? g->nvlink_recovery : 0) +
                         (g->nvlink_crc_data > 0 ? g->nvlink_crc_data : 0) +
                         (g->nvlink_ecc_data > 0 ? g->nvlink_ecc_data : 0);
        if (errors > th->nvlink_counter)
            ga_findings_add(f, GA_SEV_WARN, "HEALTH_NVLINK_ERRORS", w,
                            "%s: NVLink errors: CRC flit %" PRId64 ", CRC data %" PRId64 ", ECC data %" PRId64
                            ", replay %" PRId64 ", recovery %" PRId64 " (threshold %" PRId64 " in all)",
                            id, g->nvlink_crc, g->nvlink_crc_data, g->nvlink_ecc_data, g->nvlink_replay,
                            g->nvlink_recovery, th->nvlink_counter);
    }
    if (g->pcie_replay > th->pcie_replay_counter)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_PCIE_REPLAYS", w,
                        "%s: %" PRId64 " PCIe replays (threshold %" PRId64 "): a marginal link", id,
                        g->pcie_replay, th->pcie_replay_counter);
}

/* What the driver asks for, clocks, power, temperature and the GPU's modes. */
/* The clock event reasons NVML reported across the samples: held down (fail), passing (info), power cap. */
static void check_clock_reasons(const nh_gpu *g, const char *id, ga_where w, ga_findings *f)
{
    if (g->clock_event_reasons <= 0)
        return;
    /* Only a bit set in every sample holds the clocks down: nvml.h says HW slowdown "May be also reported
     * during PState or clock change" (nvmlClocksEventReasonHwSlowdown), which one read cannot tell apart.
     * A record of one sample (or none said) is judged on that sample. */
    uint64_t hw = NH_CLOCK_HW_SLOWDOWN | NH_CLOCK_HW_THERMAL | NH_CLOCK_SW_THERMAL | NH_CLOCK_HW_POWER_BRAKE;
    uint64_t any = (uint64_t)g->clock_event_reasons;
    uint64_t held = g->clock_event_samples > 1 && g->clock_event_persistent >= 0
                        ? (uint64_t)g->clock_event_persistent
                        : any;
    uint64_t bad = held & hw, passing = any & hw & ~held;
    if (bad)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_THROTTLE", w,
                        "%s: clocks held down by%s%s%s%s in every sample (%d, %d ms apart)", id,
                        bad & NH_CLOCK_HW_SLOWDOWN ? " HW slowdown" : "",
                        bad & NH_CLOCK_HW_THERMAL ? " HW thermal" : "",
                        bad & NH_CLOCK_SW_THERMAL ? " SW thermal" : "",
                        bad & NH_CLOCK_HW_POWER_BRAKE ? " HW power brake" : "",
                        g->clock_event_samples > 0 ? g->clock_event_samples : 1, NH_CLOCK_SAMPLE_MS);
    if (passing)
        ga_findings_add(f, GA_SEV_INFO, "HEALTH_THROTTLE_TRANSIENT", w,
                        "%s: clock event reasons 0x%" PRIx64 " in some of %d samples only (a clock or "
                        "PState change reports them): not failed",
                        id, passing, g->clock_event_samples);
    if (held & NH_CLOCK_SW_POWER_CAP)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_THROTTLE_POWER_CAP", w,
                        "%s: clocks held down by the software power cap", id);
}

/* The GPU's modes: MIG on a training SKU, and NVLink fabric registration. */
static void check_gpu_modes(const nh_gpu *g, const char *id, ga_where w, const nh_expect *e, ga_findings *f)
{
    /* MIG on a node held to an NVLink training SKU (all of its GPUs, NVLinks to each) fails: NVLink P2P is
     * not available to MIG instances (NVIDIA MIG User Guide, "Application Considerations": "No GPU to GPU P2P
     * (either PCIe or NVLink) is supported"), so NCCL falls back to the host. Elsewhere it is a choice: a
     * warning. */
    bool training = e->gpus >= 8 && e->nvlinks_per_gpu > 0;
    if (g->mig_mode == 1)
        ga_findings_add(f, training ? GA_SEV_FAIL : GA_SEV_WARN, "HEALTH_MIG_ENABLED", w,
                        "%s: MIG is on: the GPU is split into instances%s", id,
                        training ? ", which have no NVLink peer access: not a GPU of an 8-GPU NVLink node"
                                 : "");
    if (g->fabric_state > NH_FABRIC_NOT_SUPPORTED &&
        (g->fabric_state != NH_FABRIC_COMPLETED || g->fabric_status))
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_FABRIC_NOT_READY", w,
                        "%s: NVLink fabric registration %s (state %d, status %d)", id,
                        g->fabric_state == NH_FABRIC_COMPLETED ? "failed" : "not complete", g->fabric_state,
                        g->fabric_status);
}

static void check_gpu_state(const nh_gpu *g, const char *id, ga_where w, const nh_expect *e, ga_findings *f)
{
    if (g->recovery_action > 0) {
        static const char *const actions[] = {"none",
                                              "a GPU reset",
                                              "a node reboot",
                                              "draining P2P",
                                              "draining P2P and a GPU reset",
                                              "recovering the IMEX domain"};
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_RECOVERY_ACTION", w,
                        "%s: the driver asks for %s (recovery action %d)", id,
                        g->recovery_action <= 5 ? actions[g->recovery_action] : "an unknown action",
                        g->recovery_action);
    }
    check_clock_reasons(g, id, w, f);
    if (g->power_limit_mw > 0 && g->power_default_limit_mw > 0 &&
        g->power_limit_mw < g->power_default_limit_mw)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_POWER_LIMIT_LOW", w,
                        "%s: power limit %d W, below its default %d W", id, g->power_limit_mw / 1000,
                        g->power_default_limit_mw / 1000);
    if (g->temperature_c > 0 && g->temperature_slowdown_c > 0 &&
        g->temperature_c >= g->temperature_slowdown_c)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_TEMPERATURE_HIGH", w,
                        "%s: %d C, at or above its slowdown %d C", id, g->temperature_c,
                        g->temperature_slowdown_c);
    if (g->persistence_mode == 0)
        ga_findings_add(
            f, GA_SEV_WARN, "HEALTH_PERSISTENCE_OFF", w,
            "%s: persistence mode is off: the driver unloads between jobs, which resets the volatile ECC "
            "counters the ECC check reads (errors of an earlier job are not seen) and re-initialises "
            "the GPU for every job",
            id);
    check_gpu_modes(g, id, w, e, f);
}

/* A GPU NVML answered GPU_IS_LOST or RESET_REQUIRED for (its handle or any call): gone until reset. nvml.h:
 * NVML_ERROR_GPU_IS_LOST "The GPU has fallen off the bus or has otherwise become inaccessible",
 * NVML_ERROR_RESET_REQUIRED "The GPU requires a reset before it can be used again". */
static bool gpu_lost(const nh_gpu *g)
{
    return g->lost_rc == NH_NVML_GPU_IS_LOST || g->lost_rc == NH_NVML_RESET_REQUIRED;
}

/* A GPU with no handle for another reason (no permission, ...): nothing of it was read. */
static bool gpu_unopened(const nh_gpu *g)
{
    return g->handle_rc != 0 && !gpu_lost(g);
}

/* Returns whether the GPU was checked (NVML answered for it). */
static bool check_gpu(const nh_record *r, const nh_gpu *g, const nh_expect *e, const nh_thresholds *th,
                      ga_findings *f)
{
    ga_where w = gpu_where(r, g);
    char id[160];
    snprintf(id, sizeof id, "GPU %d (%s, %s)", g->index, g->uuid, g->pci_bus_id);
    if (gpu_lost(g)) {
        ga_findings_add(
            f, GA_SEV_FAIL, "HEALTH_GPU_LOST", w, "%s: NVML answers %s: the GPU %s; not counted as present",
            id, g->lost_rc == NH_NVML_GPU_IS_LOST ? "NVML_ERROR_GPU_IS_LOST" : "NVML_ERROR_RESET_REQUIRED",
            g->lost_rc == NH_NVML_GPU_IS_LOST ? "has fallen off the bus or become inaccessible"
                                              : "must be reset before it can be used again");
        return false;
    }
    if (gpu_unopened(g)) {
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_UNREADABLE", w, "%s: NVML could not open it: %s: not checked",
                        id, g->unreadable);
        return false;
    }
    check_gpu_memory(g, id, w, th, f);
    check_gpu_links(g, id, w, e, th, f);
    check_gpu_state(g, id, w, e, f);
    return true;
}

/* The GPU of node's records whose PCI address the kernel log names, or NULL. */
static const nh_gpu *gpu_at(const nh_record *all, int n, int node, const char *pci, const nh_record **owner)
{
    for (int i = 0; i < n; i++) {
        if (all[i].hdr.node_index != node)
            continue;
        for (int g = 0; g < all[i].gpu_count && g < NH_MAX_GPUS; g++)
            if (nh_pci_same_device(all[i].gpus[g].pci_bus_id, pci)) {
                *owner = &all[i];
                return &all[i].gpus[g];
            }
    }
    return NULL;
}

/* What the node's records say together: the rank that read the node-wide sources, and the GPUs. */
typedef struct {
    const nh_record *all, *lead;
    int n, node, gpus, nvml_ranks;
    const char *gpu_name, *nvml_why;
    ga_where where;
    nh_expect expect;
    nh_port_roles roles; /* of lead's ports: the compute fabric's and the others */
} node_view;

static bool node_view_of(const nh_record *all, int n, int node, const nh_check_opts *opts, node_view *v)
{
    *v = (node_view){.all = all, .n = n, .node = node, .nvml_why = ""};
    int ranks = 0;
    for (int i = 0; i < n; i++) {
        const nh_record *r = &all[i];
        if (r->hdr.node_index != node)
            continue;
        ranks++;
        if (r->node_checker && !v->lead)
            v->lead = r;
        if (r->nvml_loaded)
            v->nvml_ranks++;
        else
            v->nvml_why = r->nvml_why;
        /* A lost GPU is not present: it does not count toward the expected number. */
        for (int g = 0; g < r->gpu_count && g < NH_MAX_GPUS; g++) {
            v->gpus += !gpu_lost(&r->gpus[g]);
            if (!v->gpu_name && r->gpus[g].name[0])
                v->gpu_name = r->gpus[g].name;
        }
    }
    if (!ranks)
        return false;
    if (!v->lead) /* cannot happen with the program's records; a malformed fixture still gets a name */
        for (int i = 0; i < n && !v->lead; i++)
            if (all[i].hdr.node_index == node)
                v->lead = &all[i];
    v->where = (ga_where){v->lead->hdr.host, node, -1, -1, NULL};
    v->expect = nh_expect_for(opts, v->gpu_name);
    nh_port_roles_choose(v->lead, &v->expect, opts->ib_hcas, &v->roles);
    return true;
}

const nh_record *nh_node_port_roles(const nh_record *all, int n, int node, const nh_check_opts *opts,
                                    nh_port_roles *roles)
{
    node_view v;
    if (!node_view_of(all, n, node, opts, &v) || !v.lead->node_checker)
        return NULL;
    *roles = v.roles;
    return v.lead;
}

void nh_fill_port_roles(nh_record *all, int n, const nh_check_opts *opts)
{
    for (int i = 0; i < n; i++) {
        nh_port_roles roles;
        if (!all[i].node_checker ||
            nh_node_port_roles(all, n, all[i].hdr.node_index, opts, &roles) != &all[i])
            continue;
        for (int p = 0; p < all[i].port_count && p < NH_MAX_PORTS; p++)
            all[i].ports[p].role = roles.role[p];
    }
}

static void check_node_gpus(const node_view *v, const nh_thresholds *th, ga_findings *f, nh_outcome *out)
{
    const nh_expect *e = &v->expect;
    if (v->nvml_ranks == 0) {
        out->nodes_without_nvml++;
        ga_findings_add(f, e->gpus > 0 ? GA_SEV_FAIL : GA_SEV_WARN, "HEALTH_NVML_UNAVAILABLE", v->where,
                        "GPUs not checked: %s%s", v->nvml_why,
                        e->gpus > 0 ? " (GPUs are expected on this node)" : "");
    } else if (e->gpus >= 0 && v->gpus < e->gpus)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_GPU_MISSING", v->where, "%d GPUs present, expected %d",
                        v->gpus, e->gpus);
    for (int i = 0; i < v->n; i++)
        if (v->all[i].hdr.node_index == v->node)
            for (int g = 0; g < v->all[i].gpu_count && g < NH_MAX_GPUS; g++)
                out->gpus_checked += check_gpu(&v->all[i], &v->all[i].gpus[g], e, th, f);
}

static void check_node_xids(const node_view *v, ga_findings *f, nh_outcome *out)
{
    const nh_record *lead = v->lead;
    if (!lead->kernel_log_read) {
        out->nodes_without_kernel_log++;
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_KERNEL_LOG_UNREADABLE", v->where, "Xids not checked: %s",
                        lead->kernel_log_why[0] ? lead->kernel_log_why : "the kernel log could not be read");
    }
    if (lead->xids_older > 0)
        ga_findings_add(f, GA_SEV_INFO, "HEALTH_XID_OLD", v->where,
                        "%d Xid lines older than --xid-since %g s not judged", lead->xids_older,
                        lead->xid_since_s);
    for (int x = 0; x < lead->xid_count && x < NH_MAX_XIDS; x++) {
        const nh_xid *xid = &lead->xids[x];
        const nh_record *owner = lead;
        const nh_gpu *g = gpu_at(v->all, v->n, v->node, xid->pci, &owner);
        bool bad = nh_xid_is_failure(xid->xid);
        out->xids++;
        out->xids_failing += bad;
        ga_where w = g ? gpu_where(owner, g) : v->where;
        ga_findings_add(f, bad ? GA_SEV_FAIL : GA_SEV_WARN, bad ? "HEALTH_XID" : "HEALTH_XID_OTHER", w,
                        "Xid %d on PCI %s%s%s%s, %d time%s: %s", xid->xid, xid->pci, g ? " (GPU " : "",
                        g ? g->uuid : "", g ? ")" : "", xid->count, xid->count == 1 ? "" : "s",
                        xid->first_line);
    }
}

/* NVSwitch errors of the kernel log. The driver tags each SXid line "Fatal" or "Non-fatal" (error_nvswitch.h,
 * NVSWITCH_REPORT_FATAL / _NONFATAL); NVIDIA's Fabric Manager user guide ("NVSwitch SXid Errors"): a fatal
 * SXid leaves the switch (and the GPUs' traffic through it) needing a reset, a non-fatal one is reported and
 * the fabric runs on. So fatal fails, non-fatal (or a line that says neither) warns. */
static void check_node_sxids(const node_view *v, ga_findings *f)
{
    const nh_record *lead = v->lead;
    if (lead->sxids_older > 0)
        ga_findings_add(f, GA_SEV_INFO, "HEALTH_XID_OLD", v->where,
                        "%d NVSwitch SXid lines older than --xid-since %g s not judged", lead->sxids_older,
                        lead->xid_since_s);
    for (int x = 0; x < lead->sxid_count && x < NH_MAX_SXIDS; x++) {
        const nh_sxid *s = &lead->sxids[x];
        bool bad = s->fatal == 1;
        ga_findings_add(f, bad ? GA_SEV_FAIL : GA_SEV_WARN, bad ? "HEALTH_SXID" : "HEALTH_SXID_OTHER",
                        v->where, "NVSwitch SXid %d (%s) on PCI %s, %d time%s: %s", s->sxid,
                        s->fatal == 1   ? "fatal"
                        : s->fatal == 0 ? "non-fatal"
                                        : "severity not logged",
                        s->pci, s->count, s->count == 1 ? "" : "s", s->first_line);
    }
    if (lead->sxids_dropped)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_SXID_OTHER", v->where,
                        "%d further distinct NVSwitch SXids not kept (the first %d are)", lead->sxids_dropped,
                        NH_MAX_SXIDS);
}

/* The ports that are not the compute fabric's, in one line: reported, never judged (docs/node_health.md,
 * "Compute ports"). */
static void note_other_ports(const node_view *v, ga_findings *f)
{
    const nh_record *lead = v->lead;
    if (v->roles.other + v->roles.vfs == 0)
        return;
    char list[200] = "";
    int listed = 0;
    for (int p = 0; p < lead->port_count && p < NH_MAX_PORTS; p++) {
        const nh_port *port = &lead->ports[p];
        size_t used = strlen(list);
        if (v->roles.role[p] != NH_PORT_ROLE_OTHER || used + 48 >= sizeof list)
            continue;
        snprintf(list + used, sizeof list - used, "%s%s:%d %s %s %g", listed ? ", " : "", port->hca,
                 port->port, port->state_name[0] ? port->state_name : "?",
                 port->link_layer[0] ? port->link_layer : "?", port->rate_gbps);
        listed++;
    }
    ga_findings_add(f, GA_SEV_INFO, "HEALTH_IB_PORT_OTHER", v->where,
                    "%d ports not judged (compute: %s): %s%s%d virtual functions",
                    v->roles.other + v->roles.vfs, v->roles.how, list,
                    listed < v->roles.other ? ", ...; "
                    : listed                ? "; "
                                            : "",
                    v->roles.vfs);
}

/* One compute port against the state, rate and error rules. */
static void check_compute_port(const node_view *v, const nh_port *port, const nh_thresholds *th,
                               ga_findings *f, nh_outcome *out)
{
    const nh_expect *e = &v->expect;
    ga_where node_w = v->where;
    int64_t limit = th->ib_port_counter;
    char name[64];
    snprintf(name, sizeof name, "%s port %d", port->hca, port->port);
    out->ports_checked++;
    if (port->unreadable[0])
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_UNREADABLE", node_w, "%s: unreadable %s: not checked", name,
                        port->unreadable);
    if ((port->state >= 0 && port->state != 4) || (port->phys_state >= 0 && port->phys_state != 5))
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_IB_PORT_DOWN", node_w, "%s is %s / %s (%s)", name,
                        port->state_name, port->phys_state_name, port->link_layer);
    else if (port->state == 4)
        out->ports_active++;
    if (port->rate_gbps >= 0 && e->ib_rate_gbps > 0 && port->rate_gbps < e->ib_rate_gbps)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_IB_RATE_LOW", node_w, "%s at %g Gb/s, expected %g", name,
                        port->rate_gbps, e->ib_rate_gbps);
    if (port->symbol_error > limit || port->link_downed > limit || port->link_error_recovery > limit ||
        port->port_rcv_errors > limit)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_IB_ERRORS", node_w,
                        "%s error counters: symbol_error %" PRId64 ", link_downed %" PRId64
                        ", link_error_recovery %" PRId64 ", port_rcv_errors %" PRId64 " (threshold %" PRId64
                        ")",
                        name, port->symbol_error, port->link_downed, port->link_error_recovery,
                        port->port_rcv_errors, limit);
}

/* InfiniBand / RoCE: the compute ports (nh_ports.h) against those expected, then each of them; the others are
 * reported in one line. */
static void check_node_ib(const node_view *v, const nh_thresholds *th, ga_findings *f, nh_outcome *out)
{
    const nh_record *lead = v->lead;
    const nh_expect *e = &v->expect;
    ga_where node_w = v->where;
    if (!lead->ib_read || lead->hca_count == 0) {
        out->nodes_without_ib++;
        if (e->hcas > 0)
            ga_findings_add(f, GA_SEV_FAIL, "HEALTH_IB_HCA_MISSING", node_w, "no HCA found, expected %d%s%s",
                            e->hcas, lead->ib_why[0] ? ": " : "", lead->ib_why);
        else
            ga_findings_add(f, GA_SEV_WARN, "HEALTH_IB_UNCHECKED", node_w,
                            "no InfiniBand/RoCE HCA found, nothing expected: the network is not checked%s%s",
                            lead->ib_why[0] ? ": " : "", lead->ib_why);
    } else if (e->hcas > 0 && v->roles.compute < e->hcas)
        ga_findings_add(f, GA_SEV_FAIL, "HEALTH_IB_HCA_MISSING", node_w,
                        "%d compute ports (%s), expected %d%s%s", v->roles.compute, v->roles.how, e->hcas,
                        v->roles.missing[0] ? "; not found: " : "", v->roles.missing);
    for (int p = 0; p < lead->port_count && p < NH_MAX_PORTS; p++)
        if (v->roles.role[p] == NH_PORT_ROLE_COMPUTE)
            check_compute_port(v, &lead->ports[p], th, f, out);
    note_other_ports(v, f);
    if (lead->ports_dropped)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_UNREADABLE", node_w,
                        "%d ports beyond the first %d not checked", lead->ports_dropped, NH_MAX_PORTS);
}

/* GPUDirect RDMA: what the node shows of the paths NCCL 2.28 can take (nh_node.c, read_gdr_paths). Never a
 * failure here: whether NCCL took one is in its own connection lines, which allreduce_bw judges
 * (--expect-net ib-gdr); a peer-memory module is not needed where DMA-BUF works (NCCL_DMABUF_ENABLE defaults
 * to 1, src/init.cc), and with the open kernel modules it is often not loaded on a healthy node. */
static void check_node_gdr(const node_view *v, ga_findings *f)
{
    const nh_record *lead = v->lead;
    if (v->roles.compute == 0 || (v->gpus == 0 && v->expect.gpus <= 0) || lead->peermem == 1 ||
        lead->nv_mem == 1)
        return;
    if (lead->nvidia_open == 1)
        ga_findings_add(f, GA_SEV_INFO, "HEALTH_GDR_DMABUF", v->where,
                        "no peer-memory module (nvidia_peermem, nv_mem): GPUDirect RDMA is left to DMA-BUF "
                        "(the open kernel modules are loaded), which NCCL probes at run time; allreduce_bw "
                        "--expect-net ib-gdr shows whether it is used");
    else
        ga_findings_add(
            f, GA_SEV_WARN, "HEALTH_GDR_UNSEEN", v->where,
            "no GPUDirect RDMA path visible: no peer-memory module (nvidia_peermem, nv_mem) and the "
            "nvidia module %s: NCCL may stage inter-node traffic in host memory; allreduce_bw "
            "--expect-net ib-gdr decides",
            lead->nvidia_open == 0 ? "is not the open flavour, whose DMA-BUF export NCCL uses"
                                   : "flavour is unknown (module/nvidia/taint unreadable)");
}

/* Locality: each GPU against the NUMA nodes of the compute ports. */
static void check_node_locality(const node_view *v, ga_findings *f, nh_outcome *out)
{
    const nh_record *lead = v->lead;
    check_node_gdr(v, f);
    if (lead->hca_count <= 0)
        return;
    for (int i = 0; i < v->n; i++) {
        if (v->all[i].hdr.node_index != v->node)
            continue;
        for (int g = 0; g < v->all[i].gpu_count && g < NH_MAX_GPUS; g++) {
            const nh_gpu *gpu = &v->all[i].gpus[g];
            int known = 0, near = 0;
            for (int p = 0; p < lead->port_count && p < NH_MAX_PORTS; p++) {
                int numa = lead->ports[p].numa_node;
                if (v->roles.role[p] != NH_PORT_ROLE_COMPUTE)
                    continue;
                known += numa >= 0;
                near += numa >= 0 && numa == gpu->numa_node;
            }
            if (gpu->numa_node < 0 || !known)
                out->gpus_locality_unknown++;
            else if (!near)
                ga_findings_add(f, GA_SEV_WARN, "HEALTH_NIC_FAR", gpu_where(&v->all[i], gpu),
                                "GPU %d (%s) on NUMA node %d has no compute HCA on its NUMA node", gpu->index,
                                gpu->pci_bus_id, gpu->numa_node);
        }
    }
}

static void check_node(const nh_record *all, int n, int node, const nh_check_opts *opts, ga_findings *f,
                       nh_outcome *out)
{
    node_view v;
    if (!node_view_of(all, n, node, opts, &v))
        return;
    out->nodes++;
    if (v.expect.gpus >= 0)
        out->gpus_expected = (out->gpus_expected < 0 ? 0 : out->gpus_expected) + v.expect.gpus;
    if (!v.expect.name[0] && v.gpu_name)
        ga_findings_add(f, GA_SEV_WARN, "HEALTH_SKU_UNKNOWN", v.where,
                        "no SKU in the SKU file matches '%s': only --expect-* options are checked",
                        v.gpu_name);
    check_node_gpus(&v, &opts->skus->thresholds, f, out);
    check_node_xids(&v, f, out);
    check_node_sxids(&v, f);
    check_node_ib(&v, &opts->skus->thresholds, f, out);
    check_node_locality(&v, f, out);
}

int nh_check(const nh_record *all, int n, const nh_check_opts *opts, ga_findings *f, nh_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->gpus_expected = -1;
    if (!opts->skus || (opts->sku && !nh_sku_by_name(opts->skus, opts->sku)))
        return -1;
    int max_node = -1;
    for (int i = 0; i < n; i++)
        if (all[i].hdr.node_index > max_node)
            max_node = all[i].hdr.node_index;
    for (int node = 0; node <= max_node; node++)
        check_node(all, n, node, opts, f, out);
    out->fail = ga_findings_count(f, GA_SEV_FAIL);
    out->warn = ga_findings_count(f, GA_SEV_WARN);
    return 0;
}
