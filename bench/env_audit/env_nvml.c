#include "env_nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "ga_nvml_abi.h"
#include "ga_pci.h"

typedef struct {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*vbios)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*inforom)(nvmlDevice_t, char *, unsigned int);
} nvml_calls;

static void *sym(void *lib, const char *name, const char *fallback)
{
    void *p = dlsym(lib, name);
    return p || !fallback ? p : dlsym(lib, fallback);
}

/* The GPU's entry by bus id, appended when the driver's files did not list it. */
static env_gpu_fw *entry_of(env_host *h, const char *bus_id)
{
    for (int i = 0; i < h->gpu_fw_count; i++)
        if (ga_pci_same(h->gpu_fw[i].pci_bus_id, bus_id))
            return &h->gpu_fw[i];
    if (h->gpu_fw_count == ENV_MAX_GPUS)
        return NULL;
    env_gpu_fw *fw = &h->gpu_fw[h->gpu_fw_count++];
    memset(fw, 0, sizeof *fw);
    snprintf(fw->pci_bus_id, sizeof fw->pci_bus_id, "%s", bus_id);
    return fw;
}

static void read_gpus(const nvml_calls *c, env_host *h)
{
    unsigned n = 0;
    if (c->count(&n) != NVML_SUCCESS)
        return;
    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t d;
        nvmlPciInfo_t pci;
        char bus[24], vbios[NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE] = "",
                      inforom[NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE] = "";
        if (c->handle(i, &d) != NVML_SUCCESS || c->pci(d, &pci) != NVML_SUCCESS ||
            ga_pci_normalise(pci.busId, bus, sizeof bus) != 0)
            continue;
        env_gpu_fw *fw = entry_of(h, bus);
        if (!fw)
            return;
        if (c->vbios(d, vbios, sizeof vbios) == NVML_SUCCESS)
            snprintf(fw->vbios, sizeof fw->vbios, "%s", vbios);
        /* NOT_SUPPORTED for a GPU without an InfoROM: left "", not covered */
        if (c->inforom(d, inforom, sizeof inforom) == NVML_SUCCESS)
            snprintf(fw->inforom, sizeof fw->inforom, "%s", inforom);
    }
}

int env_nvml_firmware(env_host *h, char *why, size_t whylen)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, whylen, "NVML not loaded (no NVIDIA driver?)");
        return -1;
    }
    nvml_calls c;
    *(void **)&c.init = sym(lib, "nvmlInit_v2", "nvmlInit");
    *(void **)&c.shutdown = sym(lib, "nvmlShutdown", NULL);
    *(void **)&c.count = sym(lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    *(void **)&c.handle = sym(lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    *(void **)&c.pci = sym(lib, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
    *(void **)&c.vbios = sym(lib, "nvmlDeviceGetVbiosVersion", NULL);
    *(void **)&c.inforom = sym(lib, "nvmlDeviceGetInforomImageVersion", NULL);
    int rc = -1;
    if (!c.init || !c.shutdown || !c.count || !c.handle || !c.pci || !c.vbios || !c.inforom)
        snprintf(why, whylen, "NVML lacks a call env_audit needs");
    else if (c.init() != NVML_SUCCESS)
        snprintf(why, whylen, "nvmlInit failed");
    else {
        read_gpus(&c, h);
        c.shutdown();
        rc = 0;
    }
    dlclose(lib);
    return rc;
}
