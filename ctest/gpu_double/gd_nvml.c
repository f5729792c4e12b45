/* A test double of NVML: libnvidia-ml.so.1, found by node_health's and mem_bw's dlopen through
 * LD_LIBRARY_PATH, answering as the named part does (GA_DOUBLE_NVML_PART), healthy unless a fault says
 * otherwise. Built in every tree (it needs no CUDA): node_health's GPU path runs in CI. The types are NVML's
 * (nvml.h), declared here; only the calls the programs make exist. docs/testing-gpu-paths.md lists the parts
 * and faults.
 *
 * The current PCIe generation is 1 while the GPU is idle (GPUs downshift their link), the trained generation
 * while a host copy of the CUDA double (loaded in the same process) is in flight: what a sample under load
 * reads. GA_DOUBLE_NVML_IDLE_WIDTH=w narrows the idle link to xw as well ("may be reduced when the GPU is not
 * in use", nvidia-smi).
 *
 * A GPU can be lost (GA_DOUBLE_NVML_LOST: nvmlDeviceGetCount still counts it, as the driver does for a GPU
 * that fell off the bus, and its handle answers GPU_IS_LOST, or RESET_REQUIRED with the value 16), clock
 * event reasons can be transient or persistent (GA_DOUBLE_NVML_SLOWDOWN), the NVLink fabric registered or not
 * (GA_DOUBLE_NVML_FABRIC), MIG on (GA_DOUBLE_NVML_MIG), the last n NVLinks asleep in their low-power state
 * (GA_DOUBLE_NVML_NVLINK_ASLEEP) and the DL CRC data counter of every link set
 * (GA_DOUBLE_NVML_NVLINK_CRC_DATA); a GPU can have an older VBIOS (GA_DOUBLE_NVML_VBIOS_OLD) or no InfoROM
 * (GA_DOUBLE_NVML_NO_INFOROM).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define GA_NVML_DEVICE_TYPE struct gd_nvml_gpu *
#include "ga_nvml_abi.h"

/* The parts, as their NVML answers them (names as nvidia-smi prints them; links as NVML lists them). */
typedef struct {
    const char *part, *name;
    int gpus, nvlinks, nvlinks_active, pcie_gen, pcie_width;
} part_info;

static const part_info parts[] = {
    /* HGX H100: 8 SXM5 GPUs, 18 NVLinks each to the NVSwitches */
    {"h100-sxm", "NVIDIA H100 80GB HBM3", 8, 18, 18, 5, 16},
    /* one Grace Hopper superchip: its 18 NVLinks reach a switch only in NVL32 systems */
    {"gh200", "NVIDIA GH200 480GB", 1, 18, 0, 5, 16},
    /* four H200 NVL cards joined by a 4-way NVLink bridge */
    {"h200-nvl", "NVIDIA H200 NVL", 4, 18, 18, 5, 16},
    /* two H100 PCIe cards without an NVLink bridge: 12 links listed, none up */
    {"h100-pcie", "NVIDIA H100 PCIe", 2, 12, 0, 5, 16},
};

struct gd_nvml_gpu {
    int index;
    int clock_reads; /* reads of the clock event reasons, for a transient slowdown */
};
static struct gd_nvml_gpu gpus[16];
static bool initialised;

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

static const part_info *part(void)
{
    const char *want = getenv("GA_DOUBLE_NVML_PART");
    for (size_t i = 0; want && i < sizeof parts / sizeof parts[0]; i++)
        if (strcmp(parts[i].part, want) == 0)
            return &parts[i];
    return &parts[0];
}

static int gpu_count(void)
{
    int n = (int)env_long("GA_DOUBLE_NVML_GPUS", part()->gpus);
    return n < 0 ? 0 : n > 16 ? 16 : n;
}

/* A fault applies to GPU GA_DOUBLE_NVML_GPU (every GPU when unset) and says how much (0: none). */
static long fault(const nvmlDevice_t d, const char *var)
{
    long gpu = env_long("GA_DOUBLE_NVML_GPU", -1);
    return gpu < 0 || gpu == d->index ? env_long(var, 0) : 0;
}

/* Is a host copy of the CUDA double in flight (the link under load)? Without that double: idle. */
static bool link_busy(void)
{
    bool (*busy)(void) = (bool (*)(void))(void (*)(void))dlsym(RTLD_DEFAULT, "gd_host_link_busy");
    return busy && busy();
}

#define DEVICE_CALL(d)                                                                                       \
    do {                                                                                                     \
        if (!initialised)                                                                                    \
            return NVML_ERROR_UNINITIALIZED;                                                                 \
        if (!(d))                                                                                            \
            return NVML_ERROR_INVALID_ARGUMENT;                                                              \
    } while (0)

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    initialised = true;
    for (int i = 0; i < 16; i++)
        gpus[i] = (struct gd_nvml_gpu){.index = i};
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    initialised = false;
    return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == NVML_SUCCESS ? "Success (NVML double)" : "Error (NVML double)";
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    *count = (unsigned)gpu_count();
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *d)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    if ((int)index >= gpu_count())
        return NVML_ERROR_INVALID_ARGUMENT;
    long lost = fault(&gpus[index], "GA_DOUBLE_NVML_LOST");
    if (lost)
        return lost == NVML_ERROR_RESET_REQUIRED ? NVML_ERROR_RESET_REQUIRED : NVML_ERROR_GPU_IS_LOST;
    *d = &gpus[index];
    return NVML_SUCCESS;
}

/* Bus 0x10 + index, as the CUDA double's cudaDeviceGetPCIBusId; the domain written with 4 or 8 digits. */
EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *d)
{
    if (!initialised)
        return NVML_ERROR_UNINITIALIZED;
    const char *colon = bus_id ? strchr(bus_id, ':') : NULL;
    unsigned bus = 0;
    if (!colon || sscanf(colon + 1, "%x", &bus) != 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    int index = (int)bus - 0x10;
    if (index < 0 || index >= gpu_count())
        return NVML_ERROR_NOT_FOUND;
    *d = &gpus[index];
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len)
{
    DEVICE_CALL(d);
    if (strlen(part()->name) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(name, len, "%s", part()->name);
    return NVML_SUCCESS;
}

/* A GPU UUID is 40 characters; GA_DOUBLE_NVML_LONG_UUID=1 answers a longer one, within the 96 bytes NVML
 * documents (NVML_DEVICE_UUID_V2_BUFFER_SIZE), as a caller must be ready for. */
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len)
{
    DEVICE_CALL(d);
    char buf[96];
    snprintf(buf, sizeof buf, "GPU-%08x-1111-2222-3333-%012x%s", 0x5eed0000u + (unsigned)d->index,
             (unsigned)d->index, fault(d, "GA_DOUBLE_NVML_LONG_UUID") ? "-mig-instance-0000-0000-0000" : "");
    if (strlen(buf) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(uuid, len, "%s", buf);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
    DEVICE_CALL(d);
    memset(pci, 0, sizeof *pci);
    pci->bus = 0x10u + (unsigned)d->index;
    snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int *current, int *pending)
{
    DEVICE_CALL(d);
    *current = *pending = 1;
    return NVML_SUCCESS;
}

/* GA_DOUBLE_NVML_REMAPPED_ROW=1: the GPU once had 2 uncorrectable errors and remapped the row (a lifetime
 * count, none since the driver loaded, nothing pending). */
EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type, int counter_type,
                                                unsigned long long *count)
{
    DEVICE_CALL(d);
    *count = error_type == 1 && counter_type == 1 && fault(d, "GA_DOUBLE_NVML_REMAPPED_ROW") ? 2 : 0;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc,
                                              unsigned int *pending, unsigned int *failed)
{
    DEVICE_CALL(d);
    *corr = 0;
    *unc = fault(d, "GA_DOUBLE_NVML_REMAPPED_ROW") ? 1 : 0;
    *pending = *failed = 0;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int *pending)
{
    DEVICE_CALL(d);
    *pending = 0;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
    DEVICE_CALL(d);
    *gen = (unsigned)part()->pcie_gen;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
    return nvmlDeviceGetMaxPcieLinkGeneration(d, gen);
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *width)
{
    DEVICE_CALL(d);
    *width = (unsigned)part()->pcie_width;
    return NVML_SUCCESS;
}

/* GA_DOUBLE_NVML_TRAINED_GEN=g: the link trains at Gen g under load (a Gen4 link in a Gen5 slot). */
EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
    DEVICE_CALL(d);
    long trained = fault(d, "GA_DOUBLE_NVML_TRAINED_GEN");
    *gen = link_busy() ? (unsigned)(trained > 0 ? trained : part()->pcie_gen) : 1u;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *width)
{
    DEVICE_CALL(d);
    long idle = fault(d, "GA_DOUBLE_NVML_IDLE_WIDTH");
    *width = (unsigned)(idle > 0 && !link_busy() ? idle : part()->pcie_width);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int *value)
{
    DEVICE_CALL(d);
    *value = (unsigned)fault(d, "GA_DOUBLE_NVML_REPLAY");
    return NVML_SUCCESS;
}

/* Is the link asleep (the last GA_DOUBLE_NVML_NVLINK_ASLEEP of the active ones)? */
static bool link_asleep(nvmlDevice_t d, unsigned int link)
{
    long asleep = fault(d, "GA_DOUBLE_NVML_NVLINK_ASLEEP");
    return asleep > 0 && (int)link < part()->nvlinks_active && (int)link >= part()->nvlinks_active - asleep;
}

/* Links past the GPU's last answer INVALID_ARGUMENT; a listed link is up or not (a card without a bridge). A
 * sleeping link reads inactive (nvml.h does not say otherwise), its power state low. */
EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active)
{
    DEVICE_CALL(d);
    if (fault(d, "GA_DOUBLE_NVML_NO_NVLINK"))
        return NVML_ERROR_NOT_SUPPORTED; /* no link listed, as an H200 SXM passed through to a VM alone */
    if ((int)link >= part()->nvlinks)
        return NVML_ERROR_INVALID_ARGUMENT;
    *active = (int)link < part()->nvlinks_active && !link_asleep(d, link);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link, int counter,
                                                    unsigned long long *value)
{
    DEVICE_CALL(d);
    if ((int)link >= part()->nvlinks || counter < 0 || counter > 4)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* nvmlNvLinkErrorCounter_t: 3 is NVML_NVLINK_ERROR_DL_CRC_DATA */
    *value = counter == 3 ? (unsigned long long)fault(d, "GA_DOUBLE_NVML_NVLINK_CRC_DATA") : 0;
    return NVML_SUCCESS;
}

/* GA_DOUBLE_NVML_SLOWDOWN=transient: HW slowdown (0x8) on the first read only, as nvml.h says it "May be also
 * reported during PState or clock change"; =persistent: on every read. */
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *reasons)
{
    DEVICE_CALL(d);
    const char *mode = getenv("GA_DOUBLE_NVML_SLOWDOWN");
    long gpu = env_long("GA_DOUBLE_NVML_GPU", -1);
    bool mine = mode && (gpu < 0 || gpu == d->index);
    bool slow =
        mine && (strcmp(mode, "persistent") == 0 || (strcmp(mode, "transient") == 0 && d->clock_reads == 0));
    d->clock_reads++;
    *reasons = 1 | (slow ? 0x8ULL : 0); /* GPU idle */
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw)
{
    DEVICE_CALL(d);
    *mw = 700000;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int *mw)
{
    return nvmlDeviceGetPowerManagementLimit(d, mw);
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c)
{
    DEVICE_CALL(d);
    (void)sensor;
    *c = 35;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int which, unsigned int *c)
{
    DEVICE_CALL(d);
    (void)which;
    *c = 87;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *mode)
{
    DEVICE_CALL(d);
    *mode = 1;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending)
{
    DEVICE_CALL(d);
    *current = *pending = fault(d, "GA_DOUBLE_NVML_MIG") ? 1 : 0;
    return NVML_SUCCESS;
}

/* GA_DOUBLE_NVML_FABRIC: not_started, in_progress, completed (nvmlGpuFabricState_t 1, 2, 3; the status
 * NVML_SUCCESS) or failed (completed, its status an error); unset: NOT_SUPPORTED, as a part outside an
 * NVSwitch system answers. */
EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t *info)
{
    DEVICE_CALL(d);
    memset(info, 0, sizeof *info);
    const char *state = getenv("GA_DOUBLE_NVML_FABRIC");
    long gpu = env_long("GA_DOUBLE_NVML_GPU", -1);
    if (!state || (gpu >= 0 && gpu != d->index))
        return NVML_SUCCESS;
    static const char *const states[] = {"not_supported", "not_started", "in_progress", "completed",
                                         "failed"};
    for (unsigned char i = 0; i < 5; i++)
        if (strcmp(state, states[i]) == 0) {
            info->state = i == 4 ? 3 : i;
            info->status = i == 4 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
        }
    return NVML_SUCCESS;
}

/* GA_DOUBLE_NVML_RECOVERY=n: the driver's recovery action (nvmlDeviceGpuRecoveryAction_t). */
EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *values)
{
    DEVICE_CALL(d);
    for (int i = 0; i < count; i++) {
        values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        if (values[i].fieldId == NVML_FI_DEV_GET_GPU_RECOVERY_ACTION) {
            values[i].nvmlReturn = NVML_SUCCESS;
            values[i].value.uiVal = (unsigned)fault(d, "GA_DOUBLE_NVML_RECOVERY");
        } else if (values[i].fieldId == NVML_FI_DEV_NVLINK_GET_POWER_STATE &&
                   (int)values[i].scopeId < part()->nvlinks) {
            values[i].nvmlReturn = NVML_SUCCESS;
            values[i].value.uiVal = link_asleep(d, values[i].scopeId) ? 1 : 0;
        }
    }
    return NVML_SUCCESS;
}

/* Answers text as NVML does: INSUFFICIENT_SIZE when it does not fit in len with its terminating NUL. */
static nvmlReturn_t answer_text(const char *text, char *out, unsigned int len)
{
    if (strlen(text) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(out, len, "%s", text);
    return NVML_SUCCESS;
}

/* The VBIOS as nvidia-smi prints it; GA_DOUBLE_NVML_VBIOS_OLD=1 answers an older one (a GPU not reflashed).
 */
EXPORT nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *version, unsigned int len)
{
    DEVICE_CALL(d);
    return answer_text(fault(d, "GA_DOUBLE_NVML_VBIOS_OLD") ? "96.00.61.00.01" : "96.00.89.00.01", version,
                       len);
}

/* The InfoROM image version; GA_DOUBLE_NVML_NO_INFOROM=1: NOT_SUPPORTED, NVML's answer for a GPU without an
 * InfoROM. */
EXPORT nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t d, char *version, unsigned int len)
{
    DEVICE_CALL(d);
    if (fault(d, "GA_DOUBLE_NVML_NO_INFOROM"))
        return NVML_ERROR_NOT_SUPPORTED;
    return answer_text("G520.0200.00.05", version, len);
}
