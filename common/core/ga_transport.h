/* The transport a rank's collectives used, as a fixed-size record every rank fills and rank 0 gathers: per
 * kind of communicator (the world, the node's, the pairs', others) the network NCCL chose between nodes (IB,
 * RoCE, sockets, a plugin; which devices; GPUDirect RDMA) and the paths inside a node (P2P over NVLink or
 * PCIe, SHM, NVLS); on the host path the Open MPI components in use. Then the check of a multi-node run:
 * traffic between nodes over sockets where InfiniBand is expected is COMM_TRANSPORT_FALLBACK naming the
 * nodes. Pure: the capture is ga_nccl_debug.c (NCCL) and ga_mpi_transport.c (Open MPI). */
#ifndef GA_TRANSPORT_H
#define GA_TRANSPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ga_findings.h"
#include "ga_nccl_log.h"
#include "ga_record.h"

enum { GA_TR_WORLD, GA_TR_NODE, GA_TR_PAIRS, GA_TR_OTHER, GA_TR_SCOPES };

/* networks between nodes */
#define GA_NET_IB 0x1u       /* NCCL's IB network over InfiniBand ports, or Open MPI's openib/uct BTL */
#define GA_NET_ROCE 0x2u     /* NCCL's IB network over RoCE (Ethernet) ports */
#define GA_NET_SOCKET 0x4u   /* NCCL's Socket network, or Open MPI's TCP BTL */
#define GA_NET_PLUGIN 0x8u   /* another NCCL network plugin, or an MPI layer that picks its own (UCX, OFI) */
#define GA_NET_COLLNET 0x10u /* CollNet (SHARP) */
/* An NCCL network plugin whose log names an RDMA transport (the OFI plugin's libfabric provider efa, verbs,
 * ...: ga_ofi_provider_rdma). GA_NET_PLUGIN alone is a plugin whose transport the log does not establish:
 * the OFI plugin runs over libfabric's tcp provider too, so a plugin is RDMA only with that evidence. */
#define GA_NET_PLUGIN_RDMA 0x20u
/* paths inside a node */
#define GA_INTRA_P2P 0x1u
#define GA_INTRA_P2P_INDIRECT 0x2u
#define GA_INTRA_SHM 0x4u
#define GA_INTRA_NVLS 0x8u
#define GA_INTRA_MNNVL 0x10u
#define GA_INTRA_NVLINK 0x20u /* the ring's path between GPUs: NVLink (NVL, NVB) */
#define GA_INTRA_PCIE 0x40u   /* ... or PCIe or the CPU (PIX, PXB, PHB, SYS) */

/* The environment that forces NCCL onto sockets. */
#define GA_FORCED_IB_DISABLE 0x1u /* NCCL_IB_DISABLE=1 */
#define GA_FORCED_NET_SOCKET 0x2u /* NCCL_NET=Socket */

enum { GA_TR_LOG_NONE, GA_TR_LOG_READ, GA_TR_LOG_UNREADABLE };

typedef struct {
    int32_t comms, comms_multi_node; /* communicators seen; those NCCL said span more than one node */
    int32_t comms_silent;            /* communicators the log said nothing about */
    uint32_t net, intra;             /* GA_NET_*, GA_INTRA_* */
    int32_t net_conns, gdr_conns;    /* connections over a network, and those with GPUDirect RDMA */
    char net_name[24];               /* NCCL's name of the network ("IB", "Socket", a plugin's) */
    char devices[128];               /* the network devices the connections used, comma-separated */
    char ib_devices[128];            /* those of NCCL's IB network ("IB", "IBext"): HCA ports, by name */
    char provider[32];               /* the OFI plugin's libfabric provider ("efa", "tcp"), "" not said */
} ga_transport_scope;

typedef struct {
    int32_t log_state; /* GA_TR_LOG_*: NONE where no NCCL communicator was made */
    char log_why[128]; /* UNREADABLE: why */
    char log_path[160];
    uint32_t forced;      /* GA_FORCED_* */
    char forced_text[64]; /* "NCCL_IB_DISABLE=1" */
    int32_t warn_lines;   /* NCCL WARN lines in the log */
    char mpi_pml[16];     /* Open MPI's PML in use ("ob1", "ucx"), "" unknown */
    char mpi_btl[64];     /* its BTLs in use ("self,tcp,vader") */
    uint32_t mpi_net;     /* GA_NET_* of what Open MPI uses between nodes */
    ga_transport_scope scope[GA_TR_SCOPES];
} ga_transport_rec;

/* A rank's record as gathered: who, and its transport. */
typedef struct {
    ga_record_header hdr;
    ga_transport_rec tr;
} ga_transport_record;

/* The scope of a communicator by its label: "world...", "node ...", "pair ...", else other. */
int ga_transport_scope_of(const char *label);
const char *ga_transport_scope_name(int scope);

/* Adds what the log said about one communicator (label: ga_nccl's) to the rank's record. */
void ga_transport_add_comm(ga_transport_rec *r, const char *label, const ga_nccl_log_process *p,
                           const ga_nccl_log_comm *c);

/* Open MPI's components in use, from the names of the MPI_T categories that are valid after MPI_Init
 * ("ompi_pml_ob1", "opal_btl_tcp"; Open MPI deregisters the categories of the components it closes). */
void ga_transport_mpi_components(ga_transport_rec *r, const char *const *categories, int n);

/* NCCL_IB_DISABLE and NCCL_NET as the environment getter answers. */
void ga_transport_forced_from_env(ga_transport_rec *r, const char *(*get)(const char *name));

/* What a multi-node run expects between nodes. */
typedef enum { GA_EXPECT_NET_ANY, GA_EXPECT_NET_IB, GA_EXPECT_NET_IB_GDR } ga_expect_net;
const char *ga_expect_net_name(ga_expect_net e);
/* --expect-net VALUE: any, ib, ib-gdr. 0, or -1 with a message. */
int ga_parse_expect_net(const char *arg, ga_expect_net *out, char *err, size_t errlen);

typedef struct {
    ga_expect_net expect;
    bool allow_sockets; /* sockets between nodes are intended: neither they nor the environment fail */
    bool nccl;          /* the NCCL path ran (else Open MPI's transports are judged) */
    int node_count;
    /* --ib-hcas: the compute ports in NCCL_IB_HCA's syntax (ga_ib_list.h), NULL or "" for none. Every device
     * NCCL's IB network used between nodes must be one the list keeps, else COMM_NET_NOT_COMPUTE. */
    const char *ib_hcas;
} ga_transport_policy;

/* A run is multi-node when MPI counts several nodes, or (NCCL path) NCCL said a communicator spans several.
 * Per node: what was used between nodes and inside the node; the findings of the check (in node order);
 * whether InfiniBand (or RoCE, or an RDMA plugin) carried traffic between nodes, and if not why; with
 * pol->ib_hcas, the devices NCCL used between nodes against it ("ib_hcas"). Returns the report's "transport"
 * object. */
json_t *ga_transport_analyse(const ga_transport_record *all, int n, const ga_transport_policy *pol,
                             ga_findings *f);

#endif
