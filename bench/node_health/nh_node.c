#include "nh_node.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int nh_sysfs_root_check(const char *root, char *err, size_t errlen)
{
    DIR *d = opendir(root);
    if (!d) {
        snprintf(err, errlen, "cannot read the directory '%s': %s", root, strerror(errno));
        return -1;
    }
    closedir(d);
    return 0;
}

static void note_unreadable(char *list, const char *field)
{
    size_t used = strlen(list);
    snprintf(list + used, NH_UNREADABLE_LEN - used, "%s%s", used ? "," : "", field);
}

/* The first line of a small sysfs file, without its newline; -1 when it cannot be read or is empty. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *got = fgets(buf, (int)len, f);
    fclose(f);
    if (!got)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] ? 0 : -1;
}

/* A whole decimal integer (sysfs counters, numa_node); -1 when absent or malformed. */
static int read_int64(const char *path, int64_t *out)
{
    char buf[64], *end = NULL;
    if (read_line(path, buf, sizeof buf))
        return -1;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    while (end && isspace((unsigned char)*end))
        end++;
    if (errno || end == buf || *end)
        return -1;
    *out = v;
    return 0;
}

/* "4: ACTIVE" / "5: LinkUp": the number and the name; -1 when malformed. */
static int read_numbered_state(const char *path, int32_t *num, char *name, size_t namelen)
{
    char buf[64], *end = NULL;
    if (read_line(path, buf, sizeof buf))
        return -1;
    long v = strtol(buf, &end, 10);
    if (end == buf || *end != ':' || v < 0 || v > 64)
        return -1;
    end++;
    while (isspace((unsigned char)*end))
        end++;
    if (!*end)
        return -1;
    *num = (int32_t)v;
    snprintf(name, namelen, "%s", end);
    return 0;
}

/* "400 Gb/sec (4X NDR)": 400; -1 when malformed. */
static int read_rate(const char *path, double *gbps)
{
    char buf[96], *end = NULL;
    if (read_line(path, buf, sizeof buf))
        return -1;
    double v = strtod(buf, &end);
    if (end == buf || v < 0 || strncmp(end, " Gb/sec", 7) != 0)
        return -1;
    *gbps = v;
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int not_dot(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

static void read_port(const char *hca_dir, const char *hca, const char *port_name, int32_t numa, nh_port *p)
{
    char path[4096];
    memset(p, 0, sizeof *p);
    snprintf(p->hca, sizeof p->hca, "%s", hca);
    p->port = (int32_t)strtol(port_name, NULL, 10);
    p->numa_node = numa;
#define PORT_FILE(f) (snprintf(path, sizeof path, "%s/ports/%s/%s", hca_dir, port_name, f), path)
    if (read_numbered_state(PORT_FILE("state"), &p->state, p->state_name, sizeof p->state_name)) {
        p->state = -1;
        note_unreadable(p->unreadable, "state");
    }
    if (read_numbered_state(PORT_FILE("phys_state"), &p->phys_state, p->phys_state_name,
                            sizeof p->phys_state_name)) {
        p->phys_state = -1;
        note_unreadable(p->unreadable, "phys_state");
    }
    if (read_line(PORT_FILE("link_layer"), p->link_layer, sizeof p->link_layer))
        note_unreadable(p->unreadable, "link_layer");
    if (read_rate(PORT_FILE("rate"), &p->rate_gbps)) {
        p->rate_gbps = -1;
        note_unreadable(p->unreadable, "rate");
    }
    static const char *const counters[] = {"symbol_error", "link_downed", "link_error_recovery",
                                           "port_rcv_errors"};
    int64_t *slots[] = {&p->symbol_error, &p->link_downed, &p->link_error_recovery, &p->port_rcv_errors};
    for (int i = 0; i < 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "counters/%s", counters[i]);
        if (read_int64(PORT_FILE(name), slots[i])) {
            *slots[i] = -1;
            note_unreadable(p->unreadable, counters[i]);
        }
    }
#undef PORT_FILE
}

/* Whether root/rel exists (a link counts, whatever it points to). */
static int exists(const char *root, const char *rel)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", root, rel);
    return lstat(path, &st) == 0;
}

/* The GPUDirect RDMA paths a node shows. The peer-memory modules as NCCL 2.28 looks for them
 * (src/transport/net_ib.cc, ibGdrSupportInitOnce: access() on /sys/kernel/mm/memory_peers/nv_mem/version,
 * .../nv_mem_nc/version and /sys/module/nvidia_peermem/version). DMA-BUF needs no module: NCCL probes
 * ibv_reg_dmabuf_mr and CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED at run time (net_ib.cc,
 * ibDmaBufSupportInitOnce; init.cc, dmaBufSupported), which no file shows; what sysfs shows is the flavour of
 * the GPU driver that exports the memory: the open kernel modules (kernel-open/nvidia/nv.c:
 * MODULE_LICENSE("Dual MIT/GPL"), the dma-buf exporter in nv-dmabuf.c) do not taint the kernel proprietary,
 * so module/nvidia/taint has no 'P' (Documentation/ABI/testing/sysfs-module, /sys/module/<module>/taint). */
static void read_gdr_paths(const char *root, nh_record *r)
{
    r->peermem = exists(root, "module/nvidia_peermem/version");
    r->nv_mem = exists(root, "kernel/mm/memory_peers/nv_mem/version") ||
                exists(root, "kernel/mm/memory_peers/nv_mem_nc/version");
    char path[4096], taint[32] = "";
    snprintf(path, sizeof path, "%s/module/nvidia/taint", root);
    FILE *f = fopen(path, "r");
    if (!f) { /* nvidia not loaded, or a kernel before 3.3 */
        r->nvidia_open = -1;
        return;
    }
    if (!fgets(taint, sizeof taint, f))
        taint[0] = '\0'; /* an empty file: nothing taints the module */
    fclose(f);
    r->nvidia_open = strchr(taint, 'P') == NULL;
}

void nh_sysfs_read_node(const char *root, nh_record *r)
{
    char path[4096];
    read_gdr_paths(root, r);

    snprintf(path, sizeof path, "%s/class/infiniband", root);
    struct dirent **hcas = NULL;
    int n = scandir(path, &hcas, not_dot, by_name);
    if (n < 0) {
        /* No InfiniBand class at all: no RDMA driver loaded (or none on this machine). */
        r->ib_read = 0;
        snprintf(r->ib_why, sizeof r->ib_why, "%s: %s", path, strerror(errno));
        return;
    }
    r->ib_read = 1;
    for (int h = 0; h < n; h++) {
        char hca_dir[4096], ports_dir[4200];
        snprintf(hca_dir, sizeof hca_dir, "%s/%s", path, hcas[h]->d_name);
        snprintf(ports_dir, sizeof ports_dir, "%s/ports", hca_dir);
        r->hca_count++;
        int64_t numa = -1;
        char numa_path[4300];
        snprintf(numa_path, sizeof numa_path, "%s/device/numa_node", hca_dir);
        if (read_int64(numa_path, &numa) || numa < -1 || numa > 1023)
            numa = -1;
        char physfn[4300];
        snprintf(physfn, sizeof physfn, "class/infiniband/%s/device/physfn", hcas[h]->d_name);
        int is_vf = exists(root, physfn); /* Documentation/ABI/testing/sysfs-bus-pci: physfn */
        struct dirent **ports = NULL;
        int np = scandir(ports_dir, &ports, not_dot, by_name);
        if (np <= 0 && r->port_count < NH_MAX_PORTS) {
            /* An HCA without readable ports is one port we know nothing of, not a healthy HCA. */
            nh_port *p = &r->ports[r->port_count++];
            memset(p, 0, sizeof *p);
            snprintf(p->hca, sizeof p->hca, "%s", hcas[h]->d_name);
            p->port = 0;
            p->state = p->phys_state = -1;
            p->rate_gbps = -1;
            p->symbol_error = p->link_downed = p->link_error_recovery = p->port_rcv_errors = -1;
            p->numa_node = (int32_t)numa;
            p->is_vf = is_vf;
            note_unreadable(p->unreadable, "ports");
        }
        for (int i = 0; i < np; i++) {
            if (r->port_count < NH_MAX_PORTS) {
                read_port(hca_dir, hcas[h]->d_name, ports[i]->d_name, (int32_t)numa,
                          &r->ports[r->port_count]);
                r->ports[r->port_count++].is_vf = is_vf;
            } else
                r->ports_dropped++;
            free(ports[i]);
        }
        free(ports);
        free(hcas[h]);
    }
    free(hcas);
}

/* domain, bus, device of "0000:1b:00", "00000000:1B:00.0" or "0000:1b:00.0"; -1 when malformed. */
static int pci_parse(const char *s, unsigned long *dom, unsigned long *bus, unsigned long *dev)
{
    char *end = NULL;
    *dom = strtoul(s, &end, 16);
    if (end == s || *end != ':')
        return -1;
    s = end + 1;
    *bus = strtoul(s, &end, 16);
    if (end == s || *end != ':')
        return -1;
    s = end + 1;
    *dev = strtoul(s, &end, 16);
    if (end == s || (*end && *end != '.'))
        return -1;
    return 0;
}

int nh_pci_same_device(const char *a, const char *b)
{
    unsigned long d1, b1, v1, d2, b2, v2;
    if (pci_parse(a, &d1, &b1, &v1) || pci_parse(b, &d2, &b2, &v2))
        return 0;
    return d1 == d2 && b1 == b2 && v1 == v2;
}

int nh_sysfs_pci_numa(const char *root, const char *pci_bus_id)
{
    unsigned long dom, bus, dev;
    const char *fn = strrchr(pci_bus_id, '.');
    if (pci_parse(pci_bus_id, &dom, &bus, &dev))
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/bus/pci/devices/%04lx:%02lx:%02lx.%s/numa_node", root, dom, bus, dev,
             fn ? fn + 1 : "0");
    int64_t numa = -1;
    if (read_int64(path, &numa) || numa < -1 || numa > 1023)
        return -1;
    return (int)numa;
}

static void add_xid(nh_record *r, int xid, const char *pci, const char *line, size_t line_len)
{
    for (int i = 0; i < r->xid_count; i++)
        if (r->xids[i].xid == xid && nh_pci_same_device(r->xids[i].pci, pci)) {
            r->xids[i].count++;
            return;
        }
    if (r->xid_count >= NH_MAX_XIDS) {
        r->xids_dropped++;
        return;
    }
    nh_xid *x = &r->xids[r->xid_count++];
    x->xid = xid;
    x->count = 1;
    snprintf(x->pci, sizeof x->pci, "%s", pci);
    size_t n = line_len < sizeof x->first_line - 1 ? line_len : sizeof x->first_line - 1;
    memcpy(x->first_line, line, n);
    x->first_line[n] = '\0';
}

/* An NVSwitch's SXid line, as the driver prints it (NVIDIA open-gpu-kernel-modules,
 * src/common/nvswitch/kernel/inc/common_nvswitch.h NVSWITCH_PRINT_SXID: "nvidia-%s: SXid (PCI:%s): %05d, "
 * then, from error_nvswitch.h's NVSWITCH_REPORT_FATAL / _NONFATAL, "Fatal, Link %02d ..." or "Non-fatal, Link
 * %02d ..."; the lines that follow, "Severity N Engine instance ..." and "Data {...}", repeat the SXid). One
 * entry per switch and SXid, fatal once any of its lines said so. */
static void add_sxid(nh_record *r, int sxid, const char *pci, const char *rest, const char *line)
{
    int fatal = strncmp(rest, "Fatal", 5) == 0 ? 1 : strncmp(rest, "Non-fatal", 9) == 0 ? 0 : -1;
    for (int i = 0; i < r->sxid_count; i++)
        if (r->sxids[i].sxid == sxid && strcmp(r->sxids[i].pci, pci) == 0) {
            nh_sxid *x = &r->sxids[i];
            x->count += fatal >= 0; /* the Severity and Data lines belong to the line before */
            if (fatal > x->fatal) {
                x->fatal = fatal;
                snprintf(x->first_line, sizeof x->first_line, "%s", line);
            }
            return;
        }
    if (r->sxid_count >= NH_MAX_SXIDS) {
        r->sxids_dropped++;
        return;
    }
    nh_sxid *x = &r->sxids[r->sxid_count++];
    x->sxid = sxid;
    x->fatal = fatal;
    x->count = 1;
    snprintf(x->pci, sizeof x->pci, "%s", pci);
    snprintf(x->first_line, sizeof x->first_line, "%s", line);
}

/* "nvidia-nvswitchN: SXid (PCI:0000:05:00.0): 20034, Fatal, ...": the switch's address, the SXid and the
 * text after its comma; 0 when the line is one. */
static int parse_sxid(const char *m, char *pci, size_t pci_len, int *sxid, const char **rest)
{
    static const char marker[] = "SXid (PCI:";
    const char *p = m + sizeof marker - 1, *close = strstr(p, "):");
    size_t plen = close ? (size_t)(close - p) : 0;
    if (!close || plen == 0 || plen >= pci_len)
        return -1;
    memcpy(pci, p, plen);
    pci[plen] = '\0';
    char *end = NULL;
    long v = strtol(close + 2, &end, 10);
    if (end == close + 2 || v <= 0 || v >= 100000)
        return -1;
    *sxid = (int)v;
    while (*end == ',' || *end == ' ')
        end++;
    *rest = end;
    return 0;
}

/* The kernel's timestamp of a line, seconds since boot, or -1. */
static double line_time(const char *line)
{
    double t = -1;
    unsigned long long usec = 0;
    if (line[0] == '[' && sscanf(line + 1, "%lf", &t) == 1)
        return t;
    if (sscanf(line, "%*u,%*u,%llu,", &usec) == 1 && strchr(line, ';'))
        return (double)usec / 1e6;
    return -1;
}

static double newest_time(const char *text, size_t len)
{
    double newest = -1;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        char head[48];
        size_t n = (size_t)((eol ? eol : end) - p);
        n = n < sizeof head - 1 ? n : sizeof head - 1;
        memcpy(head, p, n);
        head[n] = '\0';
        double t = line_time(head);
        newest = t > newest ? t : newest;
        p = eol ? eol + 1 : end;
    }
    return newest;
}

void nh_kernel_log_parse(const char *text, size_t len, double since_s, double now_s, nh_record *r)
{
    static const char marker[] = "NVRM: Xid (PCI:";
    r->xid_since_s = since_s > 0 ? since_s : 0;
    if (since_s > 0 && now_s < 0)
        now_s = newest_time(text, len);
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        size_t line_len = (size_t)(eol - p);
        char line[512];
        size_t n = line_len < sizeof line - 1 ? line_len : sizeof line - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        const char *m = strstr(line, marker);
        const char *sw = strstr(line, "nvidia-nvswitch");
        const char *sm = sw ? strstr(sw, "SXid (PCI:") : NULL;
        double t = (m || sm) && since_s > 0 ? line_time(line) : -1;
        if ((m || sm) && t >= 0 && now_s >= 0 && t < now_s - since_s) {
            r->xids_older += m != NULL;
            r->sxids_older += sm != NULL;
            m = sm = NULL;
        }
        char sw_pci[24];
        int sxid = 0;
        const char *rest = NULL;
        if (sm && parse_sxid(sm, sw_pci, sizeof sw_pci, &sxid, &rest) == 0)
            add_sxid(r, sxid, sw_pci, rest, sw);
        if (m) {
            const char *pci = m + sizeof marker - 1, *close = strstr(pci, "):");
            char pci_buf[24];
            size_t plen = close ? (size_t)(close - pci) : 0;
            if (close && plen > 0 && plen < sizeof pci_buf) {
                memcpy(pci_buf, pci, plen);
                pci_buf[plen] = '\0';
                char *num_end = NULL;
                long xid = strtol(close + 2, &num_end, 10);
                if (num_end != close + 2 && xid > 0 && xid < 100000)
                    add_xid(r, (int)xid, pci_buf, m, strlen(m));
            }
        }
        p = eol + 1;
    }
}

char *nh_read_text_file(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, used = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + used, 1, cap - used, f);
        used += got;
        if (got == 0 || used >= max)
            break;
        if (used == cap) {
            char *bigger = realloc(buf, cap * 2 + 1);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        snprintf(err, errlen, "cannot read '%s'%s", path, buf ? "" : ": out of memory");
        free(buf);
        return NULL;
    }
    buf[used] = '\0';
    *len = used;
    return buf;
}
