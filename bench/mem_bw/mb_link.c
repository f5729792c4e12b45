#include "mb_link.h"

#include <dlfcn.h>
#include <stdlib.h>

/* The few NVML calls, as nvml.h declares them. */
typedef int nvml_return;
typedef void *nvml_device;

struct mb_link {
    void *lib;
    nvml_device dev;
    nvml_return (*shutdown)(void);
    nvml_return (*gen)(nvml_device, unsigned *);
    nvml_return (*width)(nvml_device, unsigned *);
};

static void *sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

mb_link *mb_link_open(const char *pci_bus_id, mb_record *r)
{
    r->pcie_gen_load = r->pcie_width_load = r->pcie_max_gen = r->pcie_max_width = -1;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return NULL;
    mb_link *l = calloc(1, sizeof *l);
    nvml_return (*init)(void) = NULL;
    nvml_return (*by_bus)(const char *, nvml_device *) = NULL;
    nvml_return (*max_gen)(nvml_device, unsigned *) = NULL, (*max_width)(nvml_device, unsigned *) = NULL;
    *(void **)&init = sym(lib, "nvmlInit_v2");
    *(void **)&by_bus = sym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&max_gen = sym(lib, "nvmlDeviceGetMaxPcieLinkGeneration");
    *(void **)&max_width = sym(lib, "nvmlDeviceGetMaxPcieLinkWidth");
    if (l) {
        *(void **)&l->shutdown = sym(lib, "nvmlShutdown");
        *(void **)&l->gen = sym(lib, "nvmlDeviceGetCurrPcieLinkGeneration");
        *(void **)&l->width = sym(lib, "nvmlDeviceGetCurrPcieLinkWidth");
    }
    if (!l || !init || !by_bus || !max_gen || !max_width || !l->shutdown || !l->gen || !l->width ||
        init() != 0) {
        free(l);
        dlclose(lib);
        return NULL;
    }
    l->lib = lib;
    unsigned g = 0, w = 0;
    if (by_bus(pci_bus_id, &l->dev) != 0 || max_gen(l->dev, &g) != 0 || max_width(l->dev, &w) != 0) {
        mb_link_close(l);
        return NULL;
    }
    r->pcie_max_gen = (int32_t)g;
    r->pcie_max_width = (int32_t)w;
    return l;
}

void mb_link_sample(mb_link *l, mb_record *r)
{
    unsigned g = 0, w = 0;
    if (!l || l->gen(l->dev, &g) != 0 || l->width(l->dev, &w) != 0)
        return;
    if ((int32_t)g > r->pcie_gen_load)
        r->pcie_gen_load = (int32_t)g;
    if ((int32_t)w > r->pcie_width_load)
        r->pcie_width_load = (int32_t)w;
}

void mb_link_close(mb_link *l)
{
    if (!l)
        return;
    l->shutdown();
    dlclose(l->lib);
    free(l);
}
