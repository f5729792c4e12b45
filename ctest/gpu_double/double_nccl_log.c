/* The test double's NCCL debug output: what NCCL 2.28 prints about the transport it chose, as NCCL prints it
 * (src/debug.cc: NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE with %h and %p, opened once per process at
 * the first line; each line "host:pid:tid [dev] NCCL INFO message"), so that the programs' capture and
 * parsing run as they would against NCCL. The messages follow NCCL's format strings (net_ib.cc,
 * net_socket.cc, init.cc, search.cc, net.cc, p2p.cc); every line is written when a communicator is made, as
 * NCCL does with NCCL_RUNTIME_CONNECT=0.
 *
 * The transport between nodes is chosen by GA_DOUBLE_NET: IB, IB_GDR (the default), RoCE, RoCE_GDR, Socket,
 * or the OFI plugin ("AWS Libfabric") over efa (OFI_EFA), libfabric's tcp (OFI_TCP) or an unsaid provider
 * (OFI); NCCL_IB_DISABLE=1 or NCCL_NET=Socket make it Socket, as they make NCCL. A communicator's nodes are
 * its ranks' host names (as NCCL's host hash), or GA_DOUBLE_NCCL_NODES=K contiguous groups of ranks. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "double_nccl_log.h"

enum { F_INIT = 1, F_NET = 16, F_GRAPH = 32 }; /* NCCL's subsystem bits, as its debug.h numbers them */

#define HOST_LEN 64
#define MAX_HOSTS_RANKS 64

static FILE *log_file;
static int log_state; /* 0 not decided, 1 writing, -1 off */
static unsigned log_mask;
static char host[HOST_LEN];

static unsigned parse_mask(const char *v)
{
    if (!v)
        return F_INIT; /* NCCL's default is INIT, BOOTSTRAP, ENV: of the lines here, INIT's */
    bool invert = v[0] == '^';
    unsigned m = invert ? ~0u : 0u;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v + invert);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        unsigned bit = strcasecmp(w, "INIT") == 0    ? F_INIT
                       : strcasecmp(w, "NET") == 0   ? F_NET
                       : strcasecmp(w, "GRAPH") == 0 ? F_GRAPH
                       : strcasecmp(w, "ALL") == 0   ? ~0u
                                                     : 0;
        m = invert ? m & ~bit : m | bit;
    }
    return m;
}

/* As ncclDebugInit: the level, the mask, and the file (%h, %p, %%), once per process. */
static void log_open(void)
{
    if (log_state)
        return;
    log_state = -1;
    const char *level = getenv("NCCL_DEBUG");
    if (!level || !(strcasecmp(level, "INFO") == 0 || strcasecmp(level, "TRACE") == 0))
        return;
    log_mask = parse_mask(getenv("NCCL_DEBUG_SUBSYS"));
    gethostname(host, sizeof host - 1);
    host[strcspn(host, ".")] = '\0';
    log_file = stdout;
    const char *pattern = getenv("NCCL_DEBUG_FILE");
    if (pattern) {
        char path[1024] = "";
        size_t n = 0;
        for (const char *c = pattern; *c && n < sizeof path - 32; c++) {
            if (*c == '%' && c[1] == 'h')
                n += (size_t)snprintf(path + n, sizeof path - n, "%s", host), c++;
            else if (*c == '%' && c[1] == 'p')
                n += (size_t)snprintf(path + n, sizeof path - n, "%d", (int)getpid()), c++;
            else if (*c == '%' && c[1] == '%')
                path[n++] = '%', c++;
            else
                path[n++] = *c;
        }
        path[n] = '\0';
        FILE *f = fopen(path, "w");
        if (f) {
            setlinebuf(f);
            log_file = f;
        }
    }
    log_state = 1;
}

static void info(unsigned flags, int dev, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void info(unsigned flags, int dev, const char *fmt, ...)
{
    log_open();
    if (log_state != 1 || !(flags & log_mask))
        return;
    char line[1024];
    int n = snprintf(line, sizeof line, "%s:%d:%d [%d] NCCL INFO ", host, (int)getpid(),
                     (int)syscall(SYS_gettid), dev);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(log_file, "%s\n", line);
    fflush(log_file);
}

/* Every rank's host name, through a segment of the communicator's own (its id's name + "-hosts"). */
typedef struct {
    atomic_int written, detached;
    char host[MAX_HOSTS_RANKS][HOST_LEN];
} hosts_seg;

static int share_hosts(const char *id_name, int rank, int nranks, char (*out)[HOST_LEN])
{
    char name[160], me[HOST_LEN] = "";
    snprintf(name, sizeof name, "%.140s-hosts", id_name);
    gethostname(me, sizeof me - 1);
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(hosts_seg)) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    hosts_seg *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (s == MAP_FAILED)
        return -1;
    snprintf(s->host[rank], HOST_LEN, "%s", me);
    atomic_fetch_add(&s->written, 1);
    while (atomic_load(&s->written) < nranks) {
        struct timespec ts = {0, 50 * 1000};
        nanosleep(&ts, NULL);
    }
    memcpy(out, s->host, (size_t)nranks * HOST_LEN);
    if (atomic_fetch_add(&s->detached, 1) + 1 == nranks)
        shm_unlink(name);
    munmap(s, sizeof *s);
    return 0;
}

/* The node of each rank: host names in order of first appearance, or GA_DOUBLE_NCCL_NODES groups. */
static int nodes_of(const char *id_name, int rank, int nranks, int *node)
{
    const char *k = getenv("GA_DOUBLE_NCCL_NODES");
    int forced = k && *k ? atoi(k) : 0;
    if (forced > 0) {
        for (int r = 0; r < nranks; r++)
            node[r] = (int)((long)r * forced / nranks);
        return forced < nranks ? forced : nranks;
    }
    static char hosts[MAX_HOSTS_RANKS][HOST_LEN];
    if (nranks > MAX_HOSTS_RANKS || share_hosts(id_name, rank, nranks, hosts) != 0) {
        for (int r = 0; r < nranks; r++)
            node[r] = 0;
        return 1;
    }
    int n = 0;
    for (int r = 0; r < nranks; r++) {
        node[r] = -1;
        for (int q = 0; q < r && node[r] < 0; q++)
            if (strcmp(hosts[q], hosts[r]) == 0)
                node[r] = node[q];
        if (node[r] < 0)
            node[r] = n++;
    }
    return n;
}

/* The network this process uses, as NCCL would pick it. */
static void pick_net(char *net, size_t len, bool *roce, bool *gdr)
{
    const char *want = getenv("GA_DOUBLE_NET"), *ib = getenv("NCCL_IB_DISABLE"), *nn = getenv("NCCL_NET");
    if (!want || !*want)
        want = "IB_GDR";
    bool socket = strcasecmp(want, "Socket") == 0 || (ib && strtol(ib, NULL, 0) != 0) ||
                  (nn && strcasecmp(nn, "Socket") == 0);
    bool ofi = !socket && strncasecmp(want, "OFI", 3) == 0; /* the OFI plugin, as aws-ofi-nccl names it */
    snprintf(net, len, "%s", socket ? "Socket" : ofi ? "AWS Libfabric" : "IB");
    *roce = strncasecmp(want, "RoCE", 4) == 0;
    *gdr = !socket && strstr(want, "_GDR") != NULL;
}

/* "NET/IB : Using ..." or the socket fallback: once per process, as NCCL initialises a network once. */
static void log_devices(const char *net, bool roce)
{
    static bool done;
    if (done)
        return;
    done = true;
    if (strcmp(net, "Socket") == 0) {
        info(F_INIT | F_NET, 0, "NET/IB : No device found.");
        info(F_INIT | F_NET, 0, "NET/Socket : Using [0]eth0:10.0.0.1<0>");
        return;
    }
    /* aws-ofi-nccl (src/nccl_ofi_net.c): "Selected provider is %s, fabric is %s (found %d nics)" with its
     * "NET/OFI " prefix; GA_DOUBLE_NET=OFI_EFA says efa, OFI_TCP libfabric's tcp, OFI alone nothing */
    if (strcmp(net, "AWS Libfabric") == 0) {
        const char *want = getenv("GA_DOUBLE_NET");
        const char *prov = strcasestr(want, "EFA") ? "efa" : strcasestr(want, "TCP") ? "tcp" : NULL;
        if (prov)
            info(F_INIT | F_NET, 0, "NET/OFI Selected provider is %s, fabric is %s (found 8 nics)", prov,
                 strcmp(prov, "efa") == 0 ? "efa-direct" : "10.0.0.0/24");
        return;
    }
    char line[512] = "";
    for (int d = 0; d < 8; d++)
        snprintf(line + strlen(line), sizeof line - strlen(line), " [%d]mlx5_%d:1/%s", d, d,
                 roce ? "RoCE" : "IB");
    info(F_INIT | F_NET, 0, "NET/IB : Using%s [RO]; OOB eth0:10.0.0.1<0>", line);
}

void double_nccl_log_comm(const char *id_name, const void *comm, int rank, int nranks)
{
    log_open();
    if (log_state != 1)
        return;
    int node[MAX_HOSTS_RANKS];
    if (nranks > MAX_HOSTS_RANKS)
        return;
    int nnodes = nodes_of(id_name, rank, nranks, node), local = 0, lrank = 0;
    for (int r = 0; r < nranks; r++)
        if (node[r] == node[rank])
            lrank += r < rank, local++;
    char net[16];
    bool roce, gdr;
    pick_net(net, sizeof net, &roce, &gdr);
    log_devices(net, roce);
    info(F_INIT, lrank,
         "ncclCommInitRankConfig comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId "
         "0x%x - Init START",
         comm, rank, nranks, lrank, lrank, lrank + 1, (unsigned)nranks);
    info(F_INIT, lrank, "Using network %s", net);
    info(F_INIT, lrank, "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0", comm, rank,
         nranks, nnodes, local, lrank);
    info(F_GRAPH, lrank, "Pattern 4, crossNic 0, nChannels 2, bw 20.000000/%s, type %s/%s, sameChannels 1",
         nnodes > 1 ? "20.000000" : "0.000000", local > 1 ? "NVL" : "LOC", nnodes > 1 ? "PIX" : "LOC");
    int dev = strcmp(net, "Socket") == 0 ? 0 : lrank % 8;
    if (nnodes > 1 && strcmp(net, "IB") == 0)
        info(F_GRAPH | F_NET, lrank, "GPU Direct RDMA %s for GPU %d / HCA %d (distance 3 %s 4)%s",
             gdr ? "Enabled" : "Disabled", lrank, dev, gdr ? "<=" : ">", gdr ? ", read 1 mode Default" : "");
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    for (int ch = 0; ch < 2 && nranks > 1; ch++) {
        int ln = 0, lp = 0; /* the peers' local ranks, their device numbers */
        for (int r = 0; r < nranks; r++)
            ln += node[r] == node[next] && r < next, lp += node[r] == node[prev] && r < prev;
        if (node[next] != node[rank])
            info(F_INIT | F_NET, lrank, "Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/%s/%d%s", ch, rank,
                 lrank, next, ln, net, dev, gdr ? "/GDRDMA" : "");
        else
            info(F_INIT, lrank, "Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read", ch, rank, lrank, next,
                 ln);
        if (node[prev] != node[rank])
            info(F_INIT | F_NET, lrank, "Channel %02d/0 : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s", ch,
                 prev, lp, rank, lrank, net, dev, gdr ? "/GDRDMA" : "");
    }
    info(F_INIT, lrank, "Connected all rings, use ring PXN 0 GDR %d", gdr ? 1 : 0);
    info(F_INIT, lrank,
         "ncclCommInitRankConfig comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId "
         "0x%x - Init COMPLETE",
         comm, rank, nranks, lrank, lrank, lrank + 1, (unsigned)nranks);
}
