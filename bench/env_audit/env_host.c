#include "env_host.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int env_host_read(const char *root, const char *path, char *buf, size_t len)
{
    char full[4096];
    snprintf(full, sizeof full, "%s%s", root, path);
    FILE *f = fopen(full, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The entries of root/dir whose name starts with prefix, sorted; -1 when the folder cannot be read. */
static int list_dir(const char *root, const char *dir, const char *prefix, char (*names)[64], int max)
{
    char full[4096];
    snprintf(full, sizeof full, "%s%s", root, dir);
    DIR *d = opendir(full);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;)
        if (e->d_name[0] != '.' && strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            snprintf(names[n++], 64, "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, compare_names);
    return n;
}

int env_host_gpus(const char *root, char (*bdf)[24], int max)
{
    char names[256][64], path[512], vendor[16], cls[16];
    int n = list_dir(root, "/sys/bus/pci/devices", "", names, 256), count = 0;
    for (int i = 0; i < n && count < max; i++) {
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vendor", names[i]);
        if (env_host_read(root, path, vendor, sizeof vendor) != 0 || strcmp(vendor, "0x10de") != 0)
            continue;
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/class", names[i]);
        /* 0x0300xx VGA, 0x0302xx 3D controller; NVSwitches (0x0680xx) are bridges, not GPUs */
        if (env_host_read(root, path, cls, sizeof cls) == 0 && strncmp(cls, "0x030", 5) == 0)
            snprintf(bdf[count++], 24, "%s", names[i]);
    }
    return count;
}

/* DIMMs the memory controllers' EDAC driver lists with a size (dimm* on current kernels, rank* on old ones).
 */
static void probe_dimms(const char *root, env_host *h)
{
    char mcs[64][64], dimms[256][64], path[512], size[32];
    int nmc = list_dir(root, "/sys/devices/system/edac/mc", "mc", mcs, 64), count = 0;
    for (int m = 0; m < nmc; m++) {
        snprintf(path, sizeof path, "/sys/devices/system/edac/mc/%s", mcs[m]);
        int nd = list_dir(root, path, "dimm", dimms, 256);
        if (nd <= 0)
            nd = list_dir(root, path, "rank", dimms, 256);
        for (int d = 0; d < nd; d++) {
            snprintf(path, sizeof path, "/sys/devices/system/edac/mc/%s/%s/size", mcs[m], dimms[d]);
            count += env_host_read(root, path, size, sizeof size) == 0 && atol(size) > 0;
        }
    }
    h->dimm_count = count > 0 ? count : -1;
}

static void probe_hcas(const char *root, env_host *h)
{
    char names[ENV_MAX_NICS][64], ports[8][64], path[512];
    int n = list_dir(root, "/sys/class/infiniband", "", names, ENV_MAX_NICS);
    for (int i = 0; i < n; i++) {
        env_hca *c = &h->hcas[h->hca_count++];
        snprintf(c->name, sizeof c->name, "%.31s", names[i]);
        snprintf(path, sizeof path, "/sys/class/infiniband/%s/fw_ver", names[i]);
        if (env_host_read(root, path, c->fw_ver, sizeof c->fw_ver) != 0)
            c->fw_ver[0] = '\0';
        snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports", names[i]);
        if (list_dir(root, path, "", ports, 8) <= 0)
            continue;
        snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%s/link_layer", names[i], ports[0]);
        if (env_host_read(root, path, c->link_layer, sizeof c->link_layer) != 0)
            c->link_layer[0] = '\0';
    }
}

/* Off without IOMMU units; else the translation type of the first GPU's IOMMU group ("identity" under
 * iommu=pt, "DMA" or "DMA-FQ" when translated), or "on" when no GPU shows one. */
static void probe_iommu(const char *root, env_host *h)
{
    char units[4][64], bdf[1][24], path[512], type[32];
    int n = list_dir(root, "/sys/class/iommu", "", units, 4);
    if (n < 0)
        return;
    if (n == 0) {
        snprintf(h->iommu, sizeof h->iommu, "off");
        return;
    }
    snprintf(h->iommu, sizeof h->iommu, "on");
    if (env_host_gpus(root, bdf, 1) < 1)
        return;
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/iommu_group/type", bdf[0]);
    if (env_host_read(root, path, type, sizeof type) == 0)
        snprintf(h->iommu, sizeof h->iommu, "on (GPU domain %.24s)", type);
}

/* Kernel parameters that change how GPUs, NICs, memory or timing behave; the rest (BOOT_IMAGE, root=, console
 * and quiet) differ between healthy nodes and say nothing about them. */
static const char cmdline_keys[] =
    " iommu intel_iommu amd_iommu iommu.passthrough iommu.strict pci pcie_aspm "
    "pcie_acs_override hugepages hugepagesz default_hugepagesz transparent_hugepage "
    "isolcpus nohz_full rcu_nocbs mitigations nosmt numa_balancing "
    "processor.max_cstate intel_idle.max_cstate idle clocksource tsc mem memmap "
    "init_on_alloc intel_pstate amd_pstate ";

static bool audited_key(const char *token)
{
    char key[64];
    snprintf(key, sizeof key, " %.*s ", (int)strcspn(token, "="), token);
    return strstr(cmdline_keys, key) != NULL;
}

static void probe_cmdline(const char *root, env_host *h)
{
    char line[4096], kept[64][128];
    if (env_host_read(root, "/proc/cmdline", line, sizeof line) != 0)
        return;
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \t\n", &save); t && n < 64;
         t = strtok_r(NULL, " \t\n", &save))
        if (audited_key(t))
            snprintf(kept[n++], sizeof kept[0], "%.127s", t);
    qsort(kept, (size_t)n, sizeof kept[0], compare_names);
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof h->cmdline; i++)
        used += (size_t)snprintf(h->cmdline + used, sizeof h->cmdline - used, "%s%s", i ? " " : "", kept[i]);
    if (n == 0)
        snprintf(h->cmdline, sizeof h->cmdline, "none");
}

/* The word of a "always [madvise] never" line that the kernel marks as chosen. */
static void chosen_word(const char *line, char *out, size_t len)
{
    const char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    snprintf(out, len, "%.*s", close ? (int)(close - open - 1) : 0, open ? open + 1 : "");
}

static void probe_hugepages(const char *root, env_host *h)
{
    char info[8192], thp[128] = "", mode[32] = "";
    if (env_host_read(root, "/proc/meminfo", info, sizeof info) != 0)
        return;
    const char *total = strstr(info, "HugePages_Total:"), *size = strstr(info, "Hugepagesize:");
    if (env_host_read(root, "/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp) == 0)
        chosen_word(thp, mode, sizeof mode);
    snprintf(h->hugepages, sizeof h->hugepages, "HugePages %ld x %ld kB, THP %s",
             total ? atol(total + 16) : 0L, size ? atol(size + 13) : 0L, mode[0] ? mode : "unknown");
}

/* "Video BIOS:" of each GPU's driver information file; no driver, no entry. */
static void probe_vbios(const char *root, env_host *h)
{
    char bdf[ENV_MAX_GPUS][24], path[512], info[4096];
    int n = env_host_gpus(root, bdf, ENV_MAX_GPUS);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", bdf[i]);
        const char *v =
            env_host_read(root, path, info, sizeof info) == 0 ? strstr(info, "Video BIOS:") : NULL;
        if (!v)
            continue;
        env_gpu_fw *fw = &h->gpu_fw[h->gpu_fw_count++];
        v += strspn(v + 11, " \t") + 11;
        snprintf(fw->pci_bus_id, sizeof fw->pci_bus_id, "%s", bdf[i]);
        snprintf(fw->vbios, sizeof fw->vbios, "%.*s", (int)strcspn(v, "\n"), v);
    }
}

void env_host_probe(const char *root, env_host *h)
{
    probe_dimms(root, h);
    probe_hcas(root, h);
    env_host_probe_acs(root, h);
    probe_iommu(root, h);
    probe_cmdline(root, h);
    probe_hugepages(root, h);
    if (env_host_read(root, "/sys/devices/system/clocksource/clocksource0/current_clocksource",
                      h->clocksource, sizeof h->clocksource) != 0)
        h->clocksource[0] = '\0';
    probe_vbios(root, h);
}
