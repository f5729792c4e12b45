/* env_audit's host probe on a fake sysfs/procfs tree built in a temporary folder: a GPU and an RDMA adapter
 * under one PCIe switch (ACS on one of its downstream ports, then off, then config space cut at 64 bytes as a
 * user without root reads it), EDAC DIMMs, the kernel command line's audited keys, huge pages, IOMMU, clock
 * source and VBIOS; and an empty root, where everything is not covered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env_host.h"
#include "ga_test.h"

static char root[256];

/* Writes root/path (its folders made first). */
static void put(const char *path, const void *data, size_t len)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", root, path);
    for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(full, 0755);
        *p = '/';
    }
    FILE *f = fopen(full, "wb");
    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

static void put_text(const char *path, const char *text)
{
    put(path, text, strlen(text));
}

static void link_to(const char *target, const char *path)
{
    char t[1024], p[1024];
    snprintf(t, sizeof t, "%s%s", root, target);
    snprintf(p, sizeof p, "%s%s", root, path);
    put_text(path, "");
    unlink(p);
    CHECK(symlink(t, p) == 0);
}

#define SWITCH "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
#define GPU_PORT SWITCH "/0000:02:00.0"
#define NIC_PORT SWITCH "/0000:02:01.0"
#define GPU GPU_PORT "/0000:03:00.0"
#define NIC NIC_PORT "/0000:04:00.0"

/* A bridge's 4 KiB config space: AER at 0x100, then ACS at 0x148 with the given control register. */
static void put_config(const char *bridge, unsigned acs_ctl, size_t len)
{
    unsigned char cfg[4096] = {0};
    unsigned aer = 0x0001 | 1u << 16 | 0x148u << 20, acs = 0x000d | 1u << 16;
    memcpy(cfg + 0x100, &aer, 4); /* little-endian host: as the kernel hands it over */
    memcpy(cfg + 0x148, &acs, 4);
    cfg[0x148 + 6] = (unsigned char)(acs_ctl & 0xff);
    cfg[0x148 + 7] = (unsigned char)(acs_ctl >> 8);
    char path[512];
    snprintf(path, sizeof path, "%s/config", bridge);
    put(path, cfg, len);
}

static void build_tree(void)
{
    put_text(GPU "/vendor", "0x10de\n");
    put_text(GPU "/class", "0x030200\n");
    put_text(GPU "/iommu_group/type", "identity\n");
    put_text(NIC "/vendor", "0x15b3\n");
    put_text(NIC "/class", "0x020700\n");
    link_to(GPU, "/sys/bus/pci/devices/0000:03:00.0");
    link_to(NIC, "/sys/bus/pci/devices/0000:04:00.0");
    link_to(NIC, "/sys/class/infiniband/mlx5_0/device");
    put_text("/sys/class/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
    put_text("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
    put_text("/sys/class/iommu/dmar0/name", "dmar0\n");
    for (int d = 0; d < 4; d++) {
        char path[128];
        snprintf(path, sizeof path, "/sys/devices/system/edac/mc/mc0/dimm%d/size", d);
        put_text(path, d == 3 ? "0\n" : "65536\n"); /* an empty slot has no size */
    }
    put_text("/proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.8 root=UUID=1 ro quiet iommu=pt intel_iommu=on\n");
    put_text("/proc/meminfo",
             "MemTotal: 2113000000 kB\nHugePages_Total:      16\nHugepagesize:    1048576 kB\n");
    put_text("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    put_text("/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
    put_text("/proc/driver/nvidia/gpus/0000:03:00.0/information",
             "Model: \t\t NVIDIA H100\nVideo BIOS: \t 96.00.89.00.01\n");
    put_config(GPU_PORT, 0x0001, 4096); /* source validation only: peer-to-peer is not redirected */
    put_config(NIC_PORT, 0x001d, 4096); /* ReqRedir and CmpltRedir: as a kernel with ACS enabled leaves it */
}

static void test_settings(void)
{
    env_host h = {0};
    env_host_probe(root, &h);
    CHECK(h.dimm_count == 3);
    CHECK(h.hca_count == 1);
    CHECK_STR(h.hcas[0].fw_ver, "28.39.1002");
    CHECK_STR(h.hcas[0].link_layer, "InfiniBand");
    CHECK_STR(h.cmdline, "intel_iommu=on iommu=pt");
    CHECK_STR(h.hugepages, "HugePages 16 x 1048576 kB, THP madvise");
    CHECK_STR(h.iommu, "on (GPU domain identity)");
    CHECK_STR(h.clocksource, "tsc");
    CHECK(h.gpu_fw_count == 1);
    CHECK_STR(h.gpu_fw[0].pci_bus_id, "0000:03:00.0");
    CHECK_STR(h.gpu_fw[0].vbios, "96.00.89.00.01");
    CHECK_STR(h.acs, "on at 0000:02:01.0 (ACSCtl 0x001d)");
}

static void test_acs_off_and_unreadable(void)
{
    put_config(NIC_PORT, 0x0000, 4096);
    env_host h = {0};
    env_host_probe(root, &h);
    CHECK_STR(h.acs, "off");
    CHECK_STR(h.acs_why, "2 switch ports between GPU and NIC checked");
    put_config(NIC_PORT, 0x001d, 64); /* what a user without root reads */
    memset(&h, 0, sizeof h);
    env_host_probe(root, &h);
    CHECK_STR(h.acs, "");
    CHECKF(strstr(h.acs_why, "needs root") != NULL, "%s", h.acs_why);
}

static void test_nothing_readable(void)
{
    env_host h = {0};
    env_host_probe("/nonexistent-gpuaccept-root", &h);
    CHECK(h.dimm_count == -1);
    CHECK(h.hca_count == 0 && h.gpu_fw_count == 0);
    CHECK(!h.acs[0] && !h.iommu[0] && !h.cmdline[0] && !h.hugepages[0] && !h.clocksource[0]);
}

int main(void)
{
    snprintf(root, sizeof root, "%s/gpuaccept-host-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root))
        return 1;
    build_tree();
    test_settings();
    test_acs_off_and_unreadable();
    test_nothing_readable();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return ga_test_finish();
}
