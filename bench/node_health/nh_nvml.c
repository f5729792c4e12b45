#include "nh_nvml.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ga_nvml_abi.h"
#include "nh_node.h"

/* nvmlNvLinkErrorCounter_t (nvml.h): DL_REPLAY 0, DL_RECOVERY 1, DL_CRC_FLIT 2, DL_CRC_DATA 3, DL_ECC_DATA 4.
 */
#define NH_NVLINK_COUNTERS 5

typedef struct {
    void *lib;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int *, int *);
    nvmlReturn_t (*total_ecc)(nvmlDevice_t, int, int, unsigned long long *);
    nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *,
                                  unsigned int *);
    nvmlReturn_t (*retired_pending)(nvmlDevice_t, int *);
    nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*pcie_max_gen)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned int, int *);
    nvmlReturn_t (*nvlink_errors)(nvmlDevice_t, unsigned int, int, unsigned long long *);
    nvmlReturn_t (*clock_reasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*power_default)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*temperature_threshold)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*persistence)(nvmlDevice_t, int *);
    nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned int *, unsigned int *);
    nvmlReturn_t (*fabric)(nvmlDevice_t, nvmlGpuFabricInfo_t *);
    nvmlReturn_t (*pcie_replay)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*field_values)(nvmlDevice_t, int, nvmlFieldValue_t *);
} nvml_api;

static void *sym(void *lib, const char *name, const char *fallback)
{
    void *p = dlsym(lib, name);
    return p || !fallback ? p : dlsym(lib, fallback);
}

/* 0 when the library is loaded, initialised and has the calls every probe needs; else why in r. */
static int nvml_open(nvml_api *a, nh_record *r)
{
    memset(a, 0, sizeof *a);
    a->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) {
        const char *e = dlerror();
        snprintf(r->nvml_why, sizeof r->nvml_why, "NVML not loaded (no NVIDIA driver?): %s",
                 e ? e : "dlopen failed");
        return -1;
    }
    *(void **)&a->init = sym(a->lib, "nvmlInit_v2", "nvmlInit");
    *(void **)&a->shutdown = sym(a->lib, "nvmlShutdown", NULL);
    *(void **)&a->error_string = sym(a->lib, "nvmlErrorString", NULL);
    *(void **)&a->count = sym(a->lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    *(void **)&a->handle = sym(a->lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    *(void **)&a->name = sym(a->lib, "nvmlDeviceGetName", NULL);
    *(void **)&a->uuid = sym(a->lib, "nvmlDeviceGetUUID", NULL);
    *(void **)&a->pci = sym(a->lib, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
    *(void **)&a->ecc_mode = sym(a->lib, "nvmlDeviceGetEccMode", NULL);
    *(void **)&a->total_ecc = sym(a->lib, "nvmlDeviceGetTotalEccErrors", NULL);
    *(void **)&a->remapped_rows = sym(a->lib, "nvmlDeviceGetRemappedRows", NULL);
    *(void **)&a->retired_pending = sym(a->lib, "nvmlDeviceGetRetiredPagesPendingStatus", NULL);
    *(void **)&a->pcie_width = sym(a->lib, "nvmlDeviceGetCurrPcieLinkWidth", NULL);
    *(void **)&a->pcie_max_width = sym(a->lib, "nvmlDeviceGetMaxPcieLinkWidth", NULL);
    *(void **)&a->pcie_gen = sym(a->lib, "nvmlDeviceGetCurrPcieLinkGeneration", NULL);
    *(void **)&a->pcie_max_gen = sym(a->lib, "nvmlDeviceGetMaxPcieLinkGeneration", NULL);
    *(void **)&a->nvlink_state = sym(a->lib, "nvmlDeviceGetNvLinkState", NULL);
    *(void **)&a->nvlink_errors = sym(a->lib, "nvmlDeviceGetNvLinkErrorCounter", NULL);
    *(void **)&a->clock_reasons =
        sym(a->lib, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
    *(void **)&a->power_limit = sym(a->lib, "nvmlDeviceGetPowerManagementLimit", NULL);
    *(void **)&a->power_default = sym(a->lib, "nvmlDeviceGetPowerManagementDefaultLimit", NULL);
    *(void **)&a->temperature = sym(a->lib, "nvmlDeviceGetTemperature", NULL);
    *(void **)&a->temperature_threshold = sym(a->lib, "nvmlDeviceGetTemperatureThreshold", NULL);
    *(void **)&a->persistence = sym(a->lib, "nvmlDeviceGetPersistenceMode", NULL);
    *(void **)&a->mig_mode = sym(a->lib, "nvmlDeviceGetMigMode", NULL);
    *(void **)&a->fabric = sym(a->lib, "nvmlDeviceGetGpuFabricInfo", NULL);
    *(void **)&a->pcie_replay = sym(a->lib, "nvmlDeviceGetPcieReplayCounter", NULL);
    *(void **)&a->field_values = sym(a->lib, "nvmlDeviceGetFieldValues", NULL);
    if (!a->init || !a->shutdown || !a->count || !a->handle || !a->name || !a->uuid || !a->pci) {
        snprintf(r->nvml_why, sizeof r->nvml_why, "libnvidia-ml.so.1 lacks the basic device calls");
        dlclose(a->lib);
        return -1;
    }
    nvmlReturn_t rc = a->init();
    if (rc != NVML_SUCCESS) {
        snprintf(r->nvml_why, sizeof r->nvml_why, "nvmlInit failed: %s",
                 a->error_string ? a->error_string(rc) : "unknown error");
        dlclose(a->lib);
        return -1;
    }
    return 0;
}

static void unreadable(nh_gpu *g, const char *field)
{
    size_t used = strlen(g->unreadable);
    snprintf(g->unreadable + used, sizeof g->unreadable - used, "%s%s", used ? "," : "", field);
}

/* GPU_IS_LOST / RESET_REQUIRED from any call: the GPU itself is gone until it is reset (nvml.h: "the GPU has
 * fallen off the bus or has otherwise become inaccessible"; "the GPU requires a reset"), never a field that
 * merely could not be read. */
static void note_lost(nh_gpu *g, nvmlReturn_t rc)
{
    if ((rc == NH_NVML_GPU_IS_LOST || rc == NH_NVML_RESET_REQUIRED) && !g->lost_rc)
        g->lost_rc = rc;
}

/* A call's answer: true when it answered; a call the GPU does not support leaves the field unknown without
 * complaint (MIG on a GPU without it), any other failure names the field as unreadable. */
static bool answered(nh_gpu *g, const char *field, bool present, nvmlReturn_t rc)
{
    if (present && rc == NVML_SUCCESS)
        return true;
    note_lost(g, present ? rc : NVML_SUCCESS);
    if (!present || rc != NVML_ERROR_NOT_SUPPORTED)
        unreadable(g, field);
    return false;
}

/* Every field starts unknown (-1): a field NVML does not answer stays so and is not judged. */
static void gpu_unknown(nh_gpu *g, int index)
{
    memset(g, 0, sizeof *g);
    g->index = index;
    g->numa_node = -1;
    g->ecc_mode = g->remap_pending = g->remap_failed = g->retired_pages_pending = -1;
    g->ecc_uncorrected_volatile = g->ecc_uncorrected_aggregate = -1;
    g->ecc_corrected_volatile = g->ecc_corrected_aggregate = -1;
    g->pcie_width = g->pcie_max_width = g->pcie_gen = g->pcie_max_gen = -1;
    g->pcie_replay = g->recovery_action = -1;
    g->nvlinks = -1;
    g->nvlink_crc = g->nvlink_replay = g->nvlink_recovery = -1;
    g->nvlink_crc_data = g->nvlink_ecc_data = -1;
    g->clock_event_reasons = g->clock_event_persistent = -1;
    g->power_limit_mw = g->power_default_limit_mw = g->temperature_c = g->temperature_slowdown_c = -1;
    g->persistence_mode = g->mig_mode = g->fabric_state = -1;
}

static void probe_identity(const nvml_api *a, nvmlDevice_t d, const char *sysfs_root, nh_gpu *g)
{
    answered(g, "name", true, a->name(d, g->name, sizeof g->name));
    answered(g, "uuid", true, a->uuid(d, g->uuid, sizeof g->uuid));
    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    if (answered(g, "pci", true, a->pci(d, &pci))) {
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", pci.busId);
        g->numa_node = nh_sysfs_pci_numa(sysfs_root, g->pci_bus_id);
    }
}

/* ECC mode and counters, remapped rows, retired pages. */
static void probe_memory(const nvml_api *a, nvmlDevice_t d, nh_gpu *g)
{
    int cur = 0, pend = 0;
    if (answered(g, "ecc_mode", a->ecc_mode, a->ecc_mode ? a->ecc_mode(d, &cur, &pend) : 0))
        g->ecc_mode = cur != 0;
    unsigned long long v = 0;
    /* error type 1 uncorrected, 0 corrected; counter type 0 volatile, 1 aggregate */
    int64_t *ecc[2][2] = {{&g->ecc_corrected_volatile, &g->ecc_corrected_aggregate},
                          {&g->ecc_uncorrected_volatile, &g->ecc_uncorrected_aggregate}};
    static const char *const ecc_names[2][2] = {{"ecc_corrected_volatile", "ecc_corrected_aggregate"},
                                                {"ecc_uncorrected_volatile", "ecc_uncorrected_aggregate"}};
    for (int type = 0; type < 2; type++)
        for (int counter = 0; counter < 2; counter++)
            if (answered(g, ecc_names[type][counter], a->total_ecc,
                         a->total_ecc ? a->total_ecc(d, type, counter, &v) : 0))
                *ecc[type][counter] = (int64_t)v;
    unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
    if (answered(g, "remapped_rows", a->remapped_rows,
                 a->remapped_rows ? a->remapped_rows(d, &corr, &unc, &pending, &failed) : 0)) {
        g->remap_pending = pending != 0;
        g->remap_failed = failed != 0;
    }
    int state = 0;
    if (answered(g, "retired_pages_pending", a->retired_pending,
                 a->retired_pending ? a->retired_pending(d, &state) : 0))
        g->retired_pages_pending = state != 0;
}

static void probe_pcie(const nvml_api *a, nvmlDevice_t d, nh_gpu *g)
{
    unsigned int u = 0;
    if (answered(g, "pcie_width", a->pcie_width, a->pcie_width ? a->pcie_width(d, &u) : 0))
        g->pcie_width = (int32_t)u;
    if (answered(g, "pcie_max_width", a->pcie_max_width, a->pcie_max_width ? a->pcie_max_width(d, &u) : 0))
        g->pcie_max_width = (int32_t)u;
    if (answered(g, "pcie_gen", a->pcie_gen, a->pcie_gen ? a->pcie_gen(d, &u) : 0))
        g->pcie_gen = (int32_t)u;
    if (answered(g, "pcie_max_gen", a->pcie_max_gen, a->pcie_max_gen ? a->pcie_max_gen(d, &u) : 0))
        g->pcie_max_gen = (int32_t)u;
    if (answered(g, "pcie_replay", a->pcie_replay, a->pcie_replay ? a->pcie_replay(d, &u) : 0))
        g->pcie_replay = u;
}

/* Is link l asleep (NVLink's low-power state, entered after an idle period:
 * NVML_FI_DEV_NVLINK_GET_POWER_STATE answers LOW_SPEED)? nvml.h does not say what nvmlDeviceGetNvLinkState
 * answers for a sleeping link, so a link read inactive whose power state says asleep is not called down. */
static bool nvlink_asleep(const nvml_api *a, nvmlDevice_t d, unsigned l)
{
    if (!a->field_values)
        return false;
    nvmlFieldValue_t fv;
    memset(&fv, 0, sizeof fv);
    fv.fieldId = NVML_FI_DEV_NVLINK_GET_POWER_STATE;
    fv.scopeId = l;
    return a->field_values(d, 1, &fv) == NVML_SUCCESS && fv.nvmlReturn == NVML_SUCCESS &&
           fv.value.uiVal == NVML_NVLINK_LOW_POWER;
}

static void probe_nvlinks(const nvml_api *a, nvmlDevice_t d, nh_gpu *g)
{
    if (!a->nvlink_state) {
        unreadable(g, "nvlink_state");
        return;
    }
    /* A link the GPU does not have answers NOT_SUPPORTED (or INVALID_ARGUMENT past the last). */
    int links = 0, active = 0;
    int64_t sums[NH_NVLINK_COUNTERS] = {0};
    bool counters_ok = a->nvlink_errors != NULL, newer_ok = counters_ok;
    for (unsigned l = 0; l < NH_MAX_NVLINKS; l++) {
        int is_active = 0;
        nvmlReturn_t rc = a->nvlink_state(d, l, &is_active);
        note_lost(g, rc);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT)
            continue;
        links++;
        if (rc == NVML_SUCCESS && is_active)
            active++;
        else if (rc == NVML_SUCCESS && nvlink_asleep(a, d, l)) {
            active++;
            g->nvlink_sleep_mask |= 1u << l;
        } else
            g->nvlink_down_mask |= 1u << l;
        /* Replay, recovery and CRC flit are on every NVLink GPU; CRC data and ECC data (3, 4) are not on all
         * (DCGM reads 4 of the 5), so their absence leaves them unknown without marking the others. */
        for (int c = 0; c < NH_NVLINK_COUNTERS && counters_ok; c++) {
            unsigned long long n = 0;
            nvmlReturn_t crc = a->nvlink_errors(d, l, c, &n);
            note_lost(g, crc);
            if (crc == NVML_SUCCESS)
                sums[c] += (int64_t)n;
            else if (c < 3)
                counters_ok = false;
            else
                newer_ok = false;
        }
    }
    /* No link at all: recorded as 0, not unread, so that a SKU that wires NVLinks fails the GPU (an H200 SXM
     * passed through to a VM alone answered this way, issue 30); a part without NVLink expects none. */
    g->nvlinks = links;
    if (links == 0) {
        g->nvlinks_active = 0;
        return;
    }
    g->nvlinks_active = active;
    if (counters_ok) {
        g->nvlink_replay = sums[0];
        g->nvlink_recovery = sums[1];
        g->nvlink_crc = sums[2];
        if (newer_ok) {
            g->nvlink_crc_data = sums[3];
            g->nvlink_ecc_data = sums[4];
        }
    } else
        unreadable(g, "nvlink_error_counters");
}

/* A link read down once is read again after the clock samples' wait: a link that came up (it was training, or
 * waking) is not down. */
static void reread_nvlinks(const nvml_api *a, nvmlDevice_t d, nh_gpu *g)
{
    for (unsigned l = 0; l < NH_MAX_NVLINKS && g->nvlinks > 0; l++) {
        int is_active = 0;
        if (!(g->nvlink_down_mask & (1u << l)) || a->nvlink_state(d, l, &is_active) != NVML_SUCCESS)
            continue;
        if (is_active || nvlink_asleep(a, d, l)) {
            g->nvlink_down_mask &= ~(1u << l);
            g->nvlink_sleep_mask |= is_active ? 0 : 1u << l;
            g->nvlinks_active++;
        }
    }
}

/* One read of the clock event reasons, folded into the record: any sample's bits, and the bits every sample
 * had. nvml.h on nvmlClocksEventReasonHwSlowdown: "May be also reported during PState or clock change", so
 * one read cannot tell a held-down GPU from one changing its clocks; only the bits present in every read are.
 */
static void sample_clock_reasons(const nvml_api *a, nvmlDevice_t d, nh_gpu *g)
{
    unsigned long long v = 0;
    if (!a->clock_reasons) {
        if (!strstr(g->unreadable, "clock_event_reasons"))
            unreadable(g, "clock_event_reasons");
        return;
    }
    nvmlReturn_t rc = a->clock_reasons(d, &v);
    note_lost(g, rc);
    if (rc != NVML_SUCCESS) {
        if (rc != NVML_ERROR_NOT_SUPPORTED && !strstr(g->unreadable, "clock_event_reasons"))
            unreadable(g, "clock_event_reasons");
        return;
    }
    int64_t bits = (int64_t)(v & 0x7fffffffffffffffULL);
    g->clock_event_reasons = g->clock_event_samples ? g->clock_event_reasons | bits : bits;
    g->clock_event_persistent = g->clock_event_samples ? g->clock_event_persistent & bits : bits;
    g->clock_event_samples++;
}

/* What the driver asks for, clocks, power, temperature and the GPU's modes. */
static void probe_state(const nvml_api *a, nvmlDevice_t d, nh_gpu *g)
{
    unsigned int u = 0;
    int state = 0;
    /* What the driver asks for before the GPU is used again (R550 and newer; older drivers lack the field).
     */
    nvmlFieldValue_t fv;
    memset(&fv, 0, sizeof fv);
    fv.fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
    if (a->field_values && a->field_values(d, 1, &fv) == NVML_SUCCESS && fv.nvmlReturn == NVML_SUCCESS)
        g->recovery_action = (int32_t)fv.value.uiVal;
    if (answered(g, "power_limit", a->power_limit, a->power_limit ? a->power_limit(d, &u) : 0))
        g->power_limit_mw = (int32_t)u;
    if (answered(g, "power_default_limit", a->power_default, a->power_default ? a->power_default(d, &u) : 0))
        g->power_default_limit_mw = (int32_t)u;
    /* NVML_TEMPERATURE_GPU = 0; NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1 */
    if (answered(g, "temperature", a->temperature, a->temperature ? a->temperature(d, 0, &u) : 0))
        g->temperature_c = (int32_t)u;
    if (answered(g, "temperature_slowdown", a->temperature_threshold,
                 a->temperature_threshold ? a->temperature_threshold(d, 1, &u) : 0))
        g->temperature_slowdown_c = (int32_t)u;
    if (answered(g, "persistence_mode", a->persistence, a->persistence ? a->persistence(d, &state) : 0))
        g->persistence_mode = state != 0;
    unsigned int mig = 0, mig_pending = 0;
    nvmlReturn_t rc = a->mig_mode ? a->mig_mode(d, &mig, &mig_pending) : NVML_ERROR_NOT_SUPPORTED;
    note_lost(g, rc);
    if (rc == NVML_SUCCESS)
        g->mig_mode = mig != 0;
    nvmlGpuFabricInfo_t fi;
    memset(&fi, 0, sizeof fi);
    rc = a->fabric ? a->fabric(d, &fi) : NVML_ERROR_NOT_SUPPORTED;
    note_lost(g, rc);
    if (rc == NVML_SUCCESS) {
        g->fabric_state = fi.state;
        g->fabric_status = fi.status;
    }
}

static void probe_gpu(const nvml_api *a, nvmlDevice_t d, int index, const char *sysfs_root, nh_gpu *g)
{
    gpu_unknown(g, index);
    probe_identity(a, d, sysfs_root, g);
    probe_memory(a, d, g);
    probe_pcie(a, d, g);
    probe_nvlinks(a, d, g);
    probe_state(a, d, g);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A GPU without a handle: every field unknown, and why. A lost GPU (GPU_IS_LOST, RESET_REQUIRED) is kept
 * apart from one NVML merely could not open. */
static void gpu_without_handle(const nvml_api *a, unsigned i, nvmlReturn_t rc, nh_gpu *g)
{
    gpu_unknown(g, (int)i);
    g->handle_rc = rc;
    note_lost(g, rc);
    snprintf(g->unreadable, sizeof g->unreadable, "handle (%s)",
             a->error_string ? a->error_string(rc) : "the GPU did not answer NVML");
}

/* The clock reasons of every GPU of the rank are read NH_CLOCK_SAMPLES times, NH_CLOCK_SAMPLE_MS apart, all
 * GPUs in one round (the wait is paid once, not per GPU); the links read down are read again at the end. */
static void sample_gpus(const nvml_api *a, nvmlDevice_t *handles, nh_gpu *gpus, int n)
{
    for (int s = 0; s < NH_CLOCK_SAMPLES; s++) {
        if (s)
            sleep_ms(NH_CLOCK_SAMPLE_MS);
        for (int k = 0; k < n; k++)
            if (handles[k] && !gpus[k].lost_rc)
                sample_clock_reasons(a, handles[k], &gpus[k]);
    }
    for (int k = 0; k < n; k++)
        if (handles[k] && !gpus[k].lost_rc && gpus[k].nvlink_down_mask)
            reread_nvlinks(a, handles[k], &gpus[k]);
}

void nh_nvml_probe(int local_rank, int local_size, const char *sysfs_root, nh_record *r)
{
    nvml_api a;
    r->nvml_gpus_total = -1;
    if (nvml_open(&a, r))
        return;
    unsigned int count = 0;
    nvmlReturn_t rc = a.count(&count);
    if (rc != NVML_SUCCESS) {
        snprintf(r->nvml_why, sizeof r->nvml_why, "nvmlDeviceGetCount failed: %s",
                 a.error_string ? a.error_string(rc) : "unknown error");
    } else {
        nvmlDevice_t handles[NH_MAX_GPUS] = {0};
        r->nvml_loaded = 1;
        r->nvml_gpus_total = (int32_t)count;
        for (unsigned i = 0; i < count; i++) {
            if ((int)(i % (unsigned)(local_size > 0 ? local_size : 1)) != local_rank ||
                r->gpu_count >= NH_MAX_GPUS)
                continue;
            nvmlDevice_t d = NULL;
            int k = r->gpu_count++;
            /* nvmlDeviceGetCount counts a GPU that fell off the bus; its handle answers GPU_IS_LOST. */
            rc = a.handle(i, &d);
            if (rc == NVML_SUCCESS) {
                handles[k] = d;
                probe_gpu(&a, d, (int)i, sysfs_root, &r->gpus[k]);
            } else
                gpu_without_handle(&a, i, rc, &r->gpus[k]);
        }
        sample_gpus(&a, handles, r->gpus, r->gpu_count);
    }
    a.shutdown();
    dlclose(a.lib);
}
