#include "nh_nvml.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "nh_node.h"

/* The few NVML types node_health uses, declared here as nvml.h declares them (its ABI is stable), so that
 * building needs neither the driver nor its header. */
typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INVALID_ARGUMENT 2
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct {
    unsigned char clusterUuid[16];
    nvmlReturn_t status;
    unsigned int cliqueId;
    unsigned char state;
} nvmlGpuFabricInfo_t;

/* nvmlFieldValue_t, for nvmlDeviceGetFieldValues (its value is a union of at most 8 bytes). */
typedef struct {
    unsigned int fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    union {
        double dVal;
        unsigned int uiVal;
        unsigned long long ullVal;
    } value;
} nvmlFieldValue_t;
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230

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

/* A call's answer: true when it answered; a call the GPU does not support leaves the field unknown without
 * complaint (MIG on a GPU without it), any other failure names the field as unreadable. */
static bool answered(nh_gpu *g, const char *field, bool present, nvmlReturn_t rc)
{
    if (present && rc == NVML_SUCCESS)
        return true;
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
    g->clock_event_reasons = -1;
    g->power_limit_mw = g->power_default_limit_mw = g->temperature_c = g->temperature_slowdown_c = -1;
    g->persistence_mode = g->mig_mode = g->fabric_state = -1;
}

static void probe_identity(const nvml_api *a, nvmlDevice_t d, const char *sysfs_root, nh_gpu *g)
{
    if (a->name(d, g->name, sizeof g->name) != NVML_SUCCESS)
        unreadable(g, "name");
    if (a->uuid(d, g->uuid, sizeof g->uuid) != NVML_SUCCESS)
        unreadable(g, "uuid");
    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    if (a->pci(d, &pci) == NVML_SUCCESS) {
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", pci.busId);
        g->numa_node = nh_sysfs_pci_numa(sysfs_root, g->pci_bus_id);
    } else
        unreadable(g, "pci");
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

static void probe_nvlinks(const nvml_api *a, nvmlDevice_t d, nh_gpu *g)
{
    if (!a->nvlink_state) {
        unreadable(g, "nvlink_state");
        return;
    }
    /* A link the GPU does not have answers NOT_SUPPORTED (or INVALID_ARGUMENT past the last). */
    int links = 0, active = 0;
    int64_t sums[3] = {0, 0, 0}; /* counter 0 replay, 1 recovery, 2 CRC flit */
    bool counters_ok = a->nvlink_errors != NULL;
    for (unsigned l = 0; l < NH_MAX_NVLINKS; l++) {
        int is_active = 0;
        nvmlReturn_t rc = a->nvlink_state(d, l, &is_active);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT)
            continue;
        links++;
        if (rc == NVML_SUCCESS && is_active)
            active++;
        else
            g->nvlink_down_mask |= 1u << l;
        for (int c = 0; c < 3 && counters_ok; c++) {
            unsigned long long n = 0;
            if (a->nvlink_errors(d, l, c, &n) == NVML_SUCCESS)
                sums[c] += (int64_t)n;
            else
                counters_ok = false;
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
    } else
        unreadable(g, "nvlink_error_counters");
}

/* What the driver asks for, clocks, power, temperature and the GPU's modes. */
static void probe_state(const nvml_api *a, nvmlDevice_t d, nh_gpu *g)
{
    unsigned long long v = 0;
    unsigned int u = 0;
    int state = 0;
    /* What the driver asks for before the GPU is used again (R550 and newer; older drivers lack the field).
     */
    nvmlFieldValue_t fv;
    memset(&fv, 0, sizeof fv);
    fv.fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
    if (a->field_values && a->field_values(d, 1, &fv) == NVML_SUCCESS && fv.nvmlReturn == NVML_SUCCESS)
        g->recovery_action = (int32_t)fv.value.uiVal;
    if (answered(g, "clock_event_reasons", a->clock_reasons, a->clock_reasons ? a->clock_reasons(d, &v) : 0))
        g->clock_event_reasons = (int64_t)(v & 0x7fffffffffffffffULL);
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
    if (a->mig_mode && a->mig_mode(d, &mig, &mig_pending) == NVML_SUCCESS)
        g->mig_mode = mig != 0;
    nvmlGpuFabricInfo_t fi;
    memset(&fi, 0, sizeof fi);
    if (a->fabric && a->fabric(d, &fi) == NVML_SUCCESS) {
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
        r->nvml_loaded = 1;
        r->nvml_gpus_total = (int32_t)count;
        for (unsigned i = 0; i < count; i++) {
            if ((int)(i % (unsigned)(local_size > 0 ? local_size : 1)) != local_rank ||
                r->gpu_count >= NH_MAX_GPUS)
                continue;
            nvmlDevice_t d = NULL;
            nh_gpu *g = &r->gpus[r->gpu_count++];
            if (a.handle(i, &d) == NVML_SUCCESS)
                probe_gpu(&a, d, (int)i, sysfs_root, g);
            else {
                memset(g, 0, sizeof *g);
                g->index = (int32_t)i;
                snprintf(g->unreadable, sizeof g->unreadable, "handle (the GPU did not answer NVML)");
                g->ecc_mode = g->remap_pending = g->remap_failed = g->retired_pages_pending = -1;
                g->nvlinks = g->pcie_width = g->persistence_mode = g->mig_mode = g->fabric_state = -1;
                g->ecc_uncorrected_volatile = g->ecc_uncorrected_aggregate = g->ecc_corrected_volatile = -1;
                g->ecc_corrected_aggregate = g->clock_event_reasons = -1;
                g->power_limit_mw = g->temperature_c = g->numa_node = -1;
                g->pcie_replay = g->recovery_action = -1;
            }
        }
    }
    a.shutdown();
    dlclose(a.lib);
}
