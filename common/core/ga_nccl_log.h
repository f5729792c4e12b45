/* What NCCL says it chose, read from its own debug output (NCCL_DEBUG=INFO,
 * NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH): the network of each communicator, the network devices and GPUDirect RDMA
 * of its connections, and the paths inside a node (P2P, SHM, NVLS, NVLink or PCIe). NCCL 2.28 has no API that
 * answers this (nccl.h offers the communicator's count, device and rank only), so the debug lines are the
 * record; the formats parsed here, and where NCCL prints each, are listed in docs/allreduce_bw.md, "The
 * transport NCCL used". Pure: lines in, counts out; the capture (which file, which part of it belongs to
 * which communicator) is ga_nccl_debug.c. */
#ifndef GA_NCCL_LOG_H
#define GA_NCCL_LOG_H

#include <stdbool.h>
#include <stddef.h>

#define GA_NLOG_NETS 4
#define GA_NLOG_DEVS 32

/* One network's devices as NCCL listed them ("NET/IB : Using [0]mlx5_0:1/IB ..."): name and link layer. */
typedef struct {
    char net[24];
    int n;
    char name[GA_NLOG_DEVS][32];
    char link[GA_NLOG_DEVS][8];   /* "IB", "RoCE", "" (sockets, plugins) */
    char vname[GA_NLOG_DEVS][48]; /* "Made virtual device [d] name=..." (merged ports), "" when not said */
} ga_nlog_devices;

/* What a process's log says once for every communicator: the device tables (NCCL initialises a network
 * once per process and prints its devices then), and the warnings. */
typedef struct {
    ga_nlog_devices nets[GA_NLOG_NETS];
    int n_nets;
    int warn_lines;
    /* The libfabric provider the OFI network plugin (aws-ofi-nccl) chose, "efa", "verbs;ofi_rxm", "tcp": its
     * "NET/OFI Selected Provider is efa (found 4 nics)" (or "Selected provider is efa, fabric is
     * efa-direct (found 4 nics)"), printed once when the plugin initialises. "" when not said. */
    char ofi_provider[32];
} ga_nccl_log_process;

/* What the log says about one communicator. -1 where it said nothing. */
typedef struct {
    int lines;                              /* NCCL INFO lines seen */
    char net_name[24];                      /* "Using network X" */
    int nranks, nnodes, local_ranks, mnnvl; /* "comm 0x... rank R nRanks N nNodes K ..." */
    char intra_type[8];       /* the ring graph's path type inside a node: NVL, PIX, SYS, LOC, ... */
    int net_conns, gdr_conns; /* "[send]/[receive] via NET/..." lines, and those with /GDRDMA */
    char conn_net[24];        /* the network those lines name */
    unsigned devs_used;       /* a bit per device index of conn_net */
    int p2p, p2p_indirect, p2p_mnnvl, shm, collnet;
    int nvls_channels; /* "... %d nvls channels ..." */
} ga_nccl_log_comm;

void ga_nccl_log_process_init(ga_nccl_log_process *p);
void ga_nccl_log_comm_init(ga_nccl_log_comm *c);

/* One line of NCCL's debug output (with or without its newline): updates the process's tables and what the
 * line says about each of the n communicators alive when it was written. Lines that are not NCCL's INFO or
 * WARN lines are ignored. */
void ga_nccl_log_line(ga_nccl_log_process *p, ga_nccl_log_comm *const *comms, int n, const char *line);

/* Whether a libfabric provider named by the OFI plugin moves data by RDMA: 1 (efa, verbs, cxi, psm2, psm3,
 * opx, gni: the first name of a "core;utility" pair, "verbs;ofi_rxm" is verbs), 0 (tcp, sockets, net, udp,
 * shm: the data crosses the kernel's TCP/IP stack), -1 unknown (another name, or none). */
int ga_ofi_provider_rdma(const char *provider);

/* The devices NCCL listed for net, or NULL. */
const ga_nlog_devices *ga_nccl_log_devices(const ga_nccl_log_process *p, const char *net);

/* Device d of net as NCCL named it ("mlx5_0:1", "mlx5_0+mlx5_1", "eth0"), and its link layer (may be "");
 * "dev<d>" when the log never listed it. */
void ga_nccl_log_device(const ga_nccl_log_process *p, const char *net, int d, char *name, size_t len,
                        const char **link);

/* A version code as nccl.h's NCCL_VERSION(X, Y, Z) makes it (X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 +
 * Z before): major and minor. */
void ga_nccl_version_split(int code, int *major, int *minor, int *patch);

/* Whether the NCCL library a program loaded (ncclGetVersion) is older in major.minor than the headers it was
 * built with (NCCL_VERSION_CODE): such a library may lack what the program calls (2.27 has no ncclGather,
 * which 2.28's headers declare) or behave otherwise than the code expects. A newer library, or an older
 * patch of the same minor, is not refused: NCCL keeps its ABI within a major version (docs/allreduce_bw.md,
 * "NCCL versions"). */
bool ga_nccl_runtime_older(int runtime_code, int header_code);

/* NCCL_DEBUG_FILE as NCCL expands it (src/debug.cc, ncclDebugInit): %h the host name up to its first '.',
 * %p the pid, %% a '%', any other %x kept as is. 0, or -1 when the result does not fit. */
int ga_nccl_debug_file_expand(const char *pattern, const char *host, long pid, char *out, size_t len);

#endif
