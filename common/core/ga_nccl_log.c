#include "ga_nccl_log.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ga_nccl_log_process_init(ga_nccl_log_process *p)
{
    memset(p, 0, sizeof *p);
}

void ga_nccl_log_comm_init(ga_nccl_log_comm *c)
{
    memset(c, 0, sizeof *c);
    c->nranks = c->nnodes = c->local_ranks = c->mnnvl = c->nvls_channels = -1;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void copy_word(char *dst, size_t len, const char *src, const char *stop)
{
    size_t n = strcspn(src, stop);
    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static ga_nlog_devices *devices_of(ga_nccl_log_process *p, const char *net, bool create)
{
    for (int i = 0; i < p->n_nets; i++)
        if (strcmp(p->nets[i].net, net) == 0)
            return &p->nets[i];
    if (!create || p->n_nets == GA_NLOG_NETS)
        return NULL;
    ga_nlog_devices *d = &p->nets[p->n_nets++];
    memset(d, 0, sizeof *d);
    snprintf(d->net, sizeof d->net, "%s", net);
    return d;
}

const ga_nlog_devices *ga_nccl_log_devices(const ga_nccl_log_process *p, const char *net)
{
    return devices_of((ga_nccl_log_process *)p, net, false);
}

/* "NET/<net> : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>" (net_ib.cc) or
 * "NET/Socket : Using [0]eth0:10.0.0.1<0> [1]..." (net_socket.cc): the devices, in index order. */
static void parse_using(ga_nccl_log_process *p, const char *msg)
{
    char net[24];
    copy_word(net, sizeof net, msg + 4, " ");
    const char *s = strstr(msg, " : Using");
    if (!s || !net[0])
        return;
    ga_nlog_devices *d = devices_of(p, net, true);
    if (!d)
        return;
    s += strlen(" : Using");
    d->n = 0;
    while (*s == ' ' && s[1] == '[' && isdigit((unsigned char)s[2])) {
        char *end;
        long idx = strtol(s + 2, &end, 10);
        if (*end != ']' || idx < 0 || idx >= GA_NLOG_DEVS)
            break;
        const char *tok = end + 1;
        size_t toklen = strcspn(tok, " ;");
        char token[96];
        snprintf(token, sizeof token, "%.*s", (int)(toklen < sizeof token ? toklen : sizeof token - 1), tok);
        char *slash = strchr(token, '/');
        /* an IB device is "name:port/LINK" (the RDMA plugin adds "/SHARP"); a socket "ifname:address<n>",
         * named by its interface */
        if (slash && strchr(token, '<') == NULL) {
            *slash = '\0';
            copy_word(d->link[idx], sizeof d->link[idx], slash + 1, "/");
            snprintf(d->name[idx], sizeof d->name[idx], "%s", token);
        } else {
            d->link[idx][0] = '\0';
            copy_word(d->name[idx], sizeof d->name[idx], token, ":");
        }
        if (idx + 1 > d->n)
            d->n = (int)idx + 1;
        s = tok + toklen;
    }
}

/* "NET/IB : Made virtual device [1] name=mlx5_2+mlx5_3 speed=800000 ndevs=2" (net_ib.cc): merged ports are
 * one device of the index the connections name. */
static void parse_vdevice(ga_nccl_log_process *p, const char *msg)
{
    char net[24];
    int idx = -1;
    copy_word(net, sizeof net, msg + 4, " ");
    const char *s = strstr(msg, "Made virtual device [");
    const char *nm = strstr(msg, " name=");
    if (!s || !nm || sscanf(s, "Made virtual device [%d]", &idx) != 1 || idx < 0 || idx >= GA_NLOG_DEVS)
        return;
    ga_nlog_devices *d = devices_of(p, net, true);
    if (d)
        copy_word(d->vname[idx], sizeof d->vname[idx], nm + 6, " ");
}

/* "... [send] via NET/IB/0/GDRDMA", "... [receive] via NET/IB/3(1)/GDRDMA(PCI)/Shared", "... via
 * NET/Socket/0" (net.cc sendSetup/recvSetup). */
static void parse_net_conn(ga_nccl_log_comm *c, const char *via)
{
    char net[24];
    copy_word(net, sizeof net, via, "/");
    const char *s = via + strlen(net);
    if (*s != '/' || !isdigit((unsigned char)s[1]))
        return;
    int dev = atoi(s + 1);
    c->net_conns++;
    if (strstr(s, "/GDRDMA"))
        c->gdr_conns++;
    if (!c->conn_net[0])
        snprintf(c->conn_net, sizeof c->conn_net, "%s", net);
    if (dev >= 0 && dev < 32 && strcmp(c->conn_net, net) == 0)
        c->devs_used |= 1u << dev;
}

static void parse_comm_line(ga_nccl_log_comm *c, const char *msg)
{
    /* "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read" (p2p.cc), "Channel 00 : 0[0] -> 1[1] via SHM/direct/
     * direct" (shm.cc), "Channel 00/0 : 1[1] -> 8[0] [send] via NET/IB/0/GDRDMA" (net.cc), "CollNet 00/0 : 0
     * [send] via COLLNET/SHARP/0/GDRDMA" (coll_net.cc) */
    const char *via = strstr(msg, " via ");
    if ((starts(msg, "Channel ") || starts(msg, "CollNet ")) && via) {
        via += 5;
        if (starts(via, "NET/"))
            parse_net_conn(c, via + 4);
        else if (starts(via, "P2P/indirect"))
            c->p2p_indirect++;
        else if (starts(via, "P2P/MNNVL"))
            c->p2p_mnnvl++;
        else if (starts(via, "P2P/"))
            c->p2p++;
        else if (starts(via, "SHM/"))
            c->shm++;
        else if (starts(via, "COLLNET/"))
            c->collnet++;
        return;
    }
    if (starts(msg, "Using network ")) { /* init.cc */
        copy_word(c->net_name, sizeof c->net_name, msg + strlen("Using network "), "\r\n");
        return;
    }
    int rank, nranks, nnodes, lranks, lrank, mnnvl;
    /* "comm 0x55d0c8 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0" (init.cc) */
    if (starts(msg, "comm ") &&
        sscanf(msg, "comm %*s rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d", &rank,
               &nranks, &nnodes, &lranks, &lrank, &mnnvl) == 6) {
        c->nranks = nranks, c->nnodes = nnodes, c->local_ranks = lranks, c->mnnvl = mnnvl;
        return;
    }
    /* "Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PIX, sameChannels 1" (search.cc
     * ncclTopoPrintGraph): the first one is the ring graph (init.cc prints it before the tree's) */
    char intra[8];
    if (starts(msg, "Pattern ") && !c->intra_type[0]) {
        const char *t = strstr(msg, ", type ");
        if (t && sscanf(t, ", type %7[^/]/", intra) == 1)
            snprintf(c->intra_type, sizeof c->intra_type, "%s", intra);
        return;
    }
    /* "32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer" */
    int coll, cn, nvls;
    if (sscanf(msg, "%d coll channels, %d collnet channels, %d nvls channels", &coll, &cn, &nvls) == 3)
        c->nvls_channels = nvls;
}

/* aws-ofi-nccl (src/nccl_ofi_net.c, nccl_net_ofi_create_plugin): NCCL_OFI_INFO(NCCL_INIT | NCCL_NET,
 * "Selected Provider is %s (found %d nics)", prov_name, ...), printed with the "NET/OFI " prefix of its
 * NCCL_OFI_INFO; later releases write "Selected provider is %s, fabric is %s (found %d nics)". */
static void parse_ofi_provider(ga_nccl_log_process *p, const char *msg)
{
    const char *s = strcasestr(msg, "Selected provider is ");
    if (s)
        copy_word(p->ofi_provider, sizeof p->ofi_provider, s + strlen("Selected provider is "), " ,(");
}

int ga_ofi_provider_rdma(const char *provider)
{
    static const char *const rdma[] = {"efa", "verbs", "cxi", "psm2", "psm3", "opx", "gni"};
    static const char *const tcp[] = {"tcp", "sockets", "net", "udp", "shm"};
    char core[32];
    copy_word(core, sizeof core, provider ? provider : "", ";");
    for (size_t i = 0; i < sizeof rdma / sizeof rdma[0]; i++)
        if (strcasecmp(core, rdma[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof tcp / sizeof tcp[0]; i++)
        if (strcasecmp(core, tcp[i]) == 0)
            return 0;
    return -1;
}

void ga_nccl_log_line(ga_nccl_log_process *p, ga_nccl_log_comm *const *comms, int n, const char *line)
{
    /* "host:pid:tid [dev] NCCL INFO message", perhaps after a time stamp (debug.cc ncclDebugLog) */
    const char *msg = strstr(line, " NCCL INFO ");
    if (!msg) {
        const char *warn = strstr(line, " NCCL WARN ");
        if (warn)
            p->warn_lines++;
        /* the OFI plugin says its provider as a warning when it found no RDMA one ("NCCL WARN NET/OFI
         * Selected provider is tcp, ..."): the same fact */
        if (warn && starts(warn + strlen(" NCCL WARN "), "NET/OFI "))
            parse_ofi_provider(p, warn + strlen(" NCCL WARN "));
        return;
    }
    msg += strlen(" NCCL INFO ");
    char buf[1024];
    copy_word(buf, sizeof buf, msg, "\r\n");
    for (int i = 0; i < n; i++)
        comms[i]->lines++;
    if (starts(buf, "NET/") && strstr(buf, " : Using [")) {
        parse_using(p, buf);
        return;
    }
    if (starts(buf, "NET/") && strstr(buf, "Made virtual device [")) {
        parse_vdevice(p, buf);
        return;
    }
    if (starts(buf, "NET/OFI ")) {
        parse_ofi_provider(p, buf);
        return;
    }
    for (int i = 0; i < n; i++)
        parse_comm_line(comms[i], buf);
}

void ga_nccl_log_device(const ga_nccl_log_process *p, const char *net, int d, char *name, size_t len,
                        const char **link)
{
    const ga_nlog_devices *t = ga_nccl_log_devices(p, net);
    if (!t && strncmp(net, "IB", 2) == 0)
        t = ga_nccl_log_devices(p, "IB"); /* the RDMA plugin's "IBext" lists its devices as "NET/IB" */
    *link = "";
    if (!t || d < 0 || d >= GA_NLOG_DEVS || (!t->vname[d][0] && !t->name[d][0])) {
        snprintf(name, len, "dev%d", d);
        return;
    }
    if (t->vname[d][0]) {
        snprintf(name, len, "%s", t->vname[d]);
        /* a merged device's link is its first port's */
        for (int i = 0; i < t->n; i++)
            if (t->name[i][0] && strncmp(t->vname[d], t->name[i], strcspn(t->name[i], ":")) == 0) {
                *link = t->link[i];
                break;
            }
        return;
    }
    snprintf(name, len, "%s", t->name[d]);
    *link = t->link[d];
}

int ga_nccl_debug_file_expand(const char *pattern, const char *host, long pid, char *out, size_t len)
{
    size_t n = 0;
    char piece[64];
    for (const char *c = pattern; *c; c++) {
        const char *add = piece;
        if (*c != '%' || c[1] == '\0') {
            snprintf(piece, sizeof piece, "%c", *c);
        } else {
            c++;
            if (*c == '%')
                add = "%";
            else if (*c == 'h')
                snprintf(piece, sizeof piece, "%.*s", (int)strcspn(host, "."), host);
            else if (*c == 'p')
                snprintf(piece, sizeof piece, "%ld", pid);
            else
                snprintf(piece, sizeof piece, "%%%c", *c);
        }
        size_t k = strlen(add);
        if (n + k >= len)
            return -1;
        memcpy(out + n, add, k);
        n += k;
    }
    if (n >= len)
        return -1;
    out[n] = '\0';
    return 0;
}

void ga_nccl_version_split(int code, int *major, int *minor, int *patch)
{
    int base = code >= 10000 ? 10000 : 1000; /* nccl.h: NCCL_VERSION changed scale at 2.9 */
    *major = code / base;
    *minor = (code % base) / 100;
    *patch = code % 100;
}

bool ga_nccl_runtime_older(int runtime_code, int header_code)
{
    int rmaj, rmin, hmaj, hmin, patch;
    ga_nccl_version_split(runtime_code, &rmaj, &rmin, &patch);
    ga_nccl_version_split(header_code, &hmaj, &hmin, &patch);
    return rmaj < hmaj || (rmaj == hmaj && rmin < hmin);
}
