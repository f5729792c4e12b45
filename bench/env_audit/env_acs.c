/* PCIe Access Control Services on the path between each GPU and its nearest RDMA adapter. Where both sit
 * under one PCIe switch, GPUDirect RDMA's peer-to-peer traffic crosses only that switch's downstream ports,
 * unless ACS redirects it up to the root complex: NCCL's troubleshooting guide says ACS must be disabled on
 * bare metal. The ACS control register is read from each bridge's config space in sysfs (what `setpci
 * ECAP_ACS+0x6.w` reads); beyond the first 64 bytes that needs root, so without root it is not covered. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env_host.h"

#define PCI_EXT_CAP_START 0x100
#define PCI_EXT_CAP_ACS 0x000d
/* ACS control bits that send peer-to-peer traffic elsewhere: P2P Request Redirect (bit 2), P2P Completion
 * Redirect (bit 3), P2P Egress Control (bit 5); Source Validation and Translation Blocking do not. */
#define ACS_P2P_BITS 0x002c
#define ACS_UNREADABLE (-2)
#define ACS_ABSENT (-1)
#define MAX_DEPTH 16

/* A PCI device's place in the tree: /sys/devices/pci0000:00/<root port>/<switch up>/<switch down>/<dev>. */
typedef struct {
    char base[4096]; /* root + "/sys/devices" as resolved */
    char comp[MAX_DEPTH][32];
    int n;
} pci_path;

static int pci_path_of(const char *root, const char *link, pci_path *p)
{
    char full[4096], real[4096];
    snprintf(full, sizeof full, "%s%s", root, link);
    if (!realpath(full, real))
        return -1;
    char *s = strstr(real, "/sys/devices/");
    if (!s)
        return -1;
    snprintf(p->base, sizeof p->base, "%.*s/sys/devices", (int)(s - real), real);
    p->n = 0;
    for (char *save = NULL, *t = strtok_r(s + 13, "/", &save); t && p->n < MAX_DEPTH;
         t = strtok_r(NULL, "/", &save))
        snprintf(p->comp[p->n++], sizeof p->comp[0], "%.31s", t);
    return 0;
}

static unsigned le(const unsigned char *b, int bytes)
{
    unsigned v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* The ACS control register of the bridge at depth k of p, ACS_ABSENT, or ACS_UNREADABLE. */
static int acs_control(const pci_path *p, int k)
{
    char path[4096];
    size_t used = (size_t)snprintf(path, sizeof path, "%s", p->base);
    for (int i = 0; i <= k && used < sizeof path; i++)
        used += (size_t)snprintf(path + used, sizeof path - used, "/%s", p->comp[i]);
    if (used + 8 >= sizeof path)
        return ACS_UNREADABLE;
    memcpy(path + used, "/config", 8);
    unsigned char cfg[4096];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(cfg, 1, sizeof cfg, f) : 0;
    if (f)
        fclose(f);
    if (n < PCI_EXT_CAP_START + 8)
        return ACS_UNREADABLE; /* without root the kernel gives the first 64 bytes only */
    for (unsigned off = PCI_EXT_CAP_START, hops = 0; off >= PCI_EXT_CAP_START && off + 8 <= n && hops < 64;
         hops++) {
        unsigned head = le(cfg + off, 4);
        if (head == 0 || head == 0xffffffffu)
            break;
        if ((head & 0xffff) == PCI_EXT_CAP_ACS)
            return (int)le(cfg + off + 6, 2);
        off = (head >> 20) & 0xffc;
    }
    return ACS_ABSENT;
}

static int common_depth(const pci_path *a, const pci_path *b)
{
    int c = 0;
    while (c < a->n && c < b->n && strcmp(a->comp[c], b->comp[c]) == 0)
        c++;
    return c;
}

/* The bridges below the common switch on one side (depth c to the device's parent): 1 when one has ACS
 * redirecting P2P (h->acs says where), else counts them into checked/unreadable. */
static int check_side(const pci_path *p, int c, env_host *h, int *checked, int *unreadable)
{
    for (int k = c; k < p->n - 1; k++) {
        int ctl = acs_control(p, k);
        *unreadable += ctl == ACS_UNREADABLE;
        *checked += ctl != ACS_UNREADABLE;
        if (ctl >= 0 && (ctl & ACS_P2P_BITS)) {
            snprintf(h->acs, sizeof h->acs, "on at %s (ACSCtl 0x%04x)", p->comp[k], (unsigned)ctl);
            return 1;
        }
    }
    return 0;
}

/* The adapter sharing the deepest part of the GPU's path; its depth, 0 when none. */
static int nearest_nic(const char *root, const env_host *h, const pci_path *gpu, pci_path *nic)
{
    int best = 0;
    pci_path p;
    char link[256];
    for (int i = 0; i < h->hca_count; i++) {
        snprintf(link, sizeof link, "/sys/class/infiniband/%s/device", h->hcas[i].name);
        int c = pci_path_of(root, link, &p) == 0 ? common_depth(gpu, &p) : 0;
        if (c > best) {
            best = c;
            *nic = p;
        }
    }
    return best;
}

void env_host_probe_acs(const char *root, env_host *h)
{
    char bdf[ENV_MAX_GPUS][24], link[256];
    int gpus = env_host_gpus(root, bdf, ENV_MAX_GPUS), checked = 0, unreadable = 0;
    pci_path *gpu = malloc(sizeof *gpu), *nic = malloc(sizeof *nic);
    for (int g = 0; gpu && nic && g < gpus && h->hca_count > 0; g++) {
        snprintf(link, sizeof link, "/sys/bus/pci/devices/%s", bdf[g]);
        if (pci_path_of(root, link, gpu) != 0)
            continue;
        /* host bridge, root port and a switch's upstream port in common: one switch holds both */
        int c = nearest_nic(root, h, gpu, nic);
        if (c < 3)
            continue;
        if (check_side(gpu, c, h, &checked, &unreadable) || check_side(nic, c, h, &checked, &unreadable))
            break;
    }
    free(gpu);
    free(nic);
    if (h->acs[0])
        snprintf(h->acs_why, sizeof h->acs_why, "PCIe config space of the switch ports between GPU and NIC");
    else if (unreadable || !checked)
        snprintf(h->acs_why, sizeof h->acs_why, "%s",
                 unreadable             ? "not covered: the bridges' extended config space needs root"
                 : gpus && h->hca_count ? "not covered: no GPU shares a PCIe switch with an RDMA adapter"
                                        : "not covered: no GPU or no RDMA adapter");
    else {
        snprintf(h->acs, sizeof h->acs, "off");
        snprintf(h->acs_why, sizeof h->acs_why, "%d switch ports between GPU and NIC checked", checked);
    }
}
