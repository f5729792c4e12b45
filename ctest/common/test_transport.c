/* The transport record (common/core/ga_nccl_log.c, ga_transport.c, ga_transport_check.c) on NCCL's own debug
 * lines. Each line below is a line NCCL printed in a public log, or (marked "format") one written from the
 * format string at the place in NCCL 2.28.9 that prints it; the comment names both. */
#include <stdlib.h>
#include <string.h>

#include "ga_ib_list.h"
#include "ga_nccl_log.h"
#include "ga_test.h"
#include "ga_text.h"
#include "ga_transport.h"

static void feed(ga_nccl_log_process *p, ga_nccl_log_comm *c, const char *const *lines)
{
    ga_nccl_log_comm *one[1] = {c};
    for (const char *const *l = lines; *l; l++)
        ga_nccl_log_line(p, one, c ? 1 : 0, *l);
}

/* A RoCE cluster through the RDMA plugin (DeepEP issue 106, NCCL 2.2x): net "IBext", devices listed as
 * NET/IB.
 */
static const char *const roce_lines[] = {
    /* net_ib.cc:839 "NET/IB : Using%s %s; OOB %s:%s" */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO NET/IB : Using [0]mlx5_bond_0:1/RoCE [1]mlx5_bond_1:1/RoCE "
    "[2]mlx5_bond_2:1/RoCE [3]mlx5_bond_3:1/RoCE [4]mlx5_bond_4:1/RoCE [5]mlx5_bond_5:1/RoCE "
    "[6]mlx5_bond_6:1/RoCE [7]mlx5_bond_7:1/RoCE [RO]; OOB eth0:172.21.17.82<0>",
    /* init.cc:428 "Using network %s" */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO Using network IBext",
    /* format, init.cc:1170 "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d" */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO comm 0x55d1e0c0 rank 5 nRanks 16 nNodes 2 localRanks 8 "
    "localRank 5 MNNVL 0",
    /* format, search.cc:1201 "Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d"
     */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, "
    "type NVL/PIX, sameChannels 1",
    "VM-17-82-centos:11983:12550 [5] NCCL INFO Pattern 1, crossNic 0, nChannels 16, bw 40.000000/40.000000, "
    "type SYS/PIX, sameChannels 1",
    /* net.cc:359 "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s" (DeepEP issue 106) */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO Channel 12/0 : 13[5] -> 5[5] [receive] via NET/IBext/5/GDRDMA",
    /* net.cc:313 "... [send] via NET/%s/%d%s%s%s" */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO Channel 12/0 : 5[5] -> 13[5] [send] via NET/IBext/5/GDRDMA",
    /* net.cc:317, through a PXN proxy rank: "... via NET/%s/%d(%d)%s%s%s" (format) */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO Channel 13/0 : 5[5] -> 13[5] [send] via NET/IBext/4(4)/GDRDMA",
    /* p2p.cc:393 "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s%s%s" (NCCL issue 1538) */
    "job-3bb8-worker-0:5663:5809 [0] NCCL INFO Channel 04/0 : 0[0] -> 7[7] via P2P/CUMEM",
    /* init.cc:1358 "%d coll channels, %d collnet channels, %d nvls channels, ..." (format) */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO 32 coll channels, 32 collnet channels, 16 nvls channels, 32 "
    "p2p "
    "channels, 32 p2p channels per peer",
    /* a line of another kind, and a warning (debug.cc:360 "[%d] %s:%d NCCL WARN ") */
    "VM-17-82-centos:11983:12550 [5] NCCL INFO Connected all rings, use ring PXN 1 GDR 1",
    "VM-17-82-centos:11983:12550 [5] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed", NULL};

static void test_roce_plugin(void)
{
    ga_nccl_log_process p;
    ga_nccl_log_comm c;
    ga_nccl_log_process_init(&p);
    ga_nccl_log_comm_init(&c);
    feed(&p, &c, roce_lines);
    CHECK_STR(c.net_name, "IBext");
    CHECK(c.nranks == 16 && c.nnodes == 2 && c.local_ranks == 8 && c.mnnvl == 0);
    CHECK_STR(c.intra_type, "NVL"); /* the ring's, not the tree's */
    CHECK(c.net_conns == 3 && c.gdr_conns == 3);
    CHECK_STR(c.conn_net, "IBext");
    CHECK(c.devs_used == ((1u << 5) | (1u << 4)));
    CHECK(c.p2p == 1 && c.shm == 0 && c.nvls_channels == 16);
    CHECK(p.warn_lines == 1);
    char name[64];
    const char *link;
    ga_nccl_log_device(&p, "IBext", 5, name, sizeof name, &link);
    CHECK_STR(name, "mlx5_bond_5:1");
    CHECK_STR(link, "RoCE");

    ga_transport_rec r;
    memset(&r, 0, sizeof r);
    ga_transport_add_comm(&r, "world", &p, &c);
    const ga_transport_scope *s = &r.scope[GA_TR_WORLD];
    CHECK(s->comms == 1 && s->comms_multi_node == 1 && s->comms_silent == 0);
    CHECK(s->net == GA_NET_ROCE);
    CHECK_STR(s->net_name, "IBext");
    CHECK_STR(s->devices, "mlx5_bond_4:1,mlx5_bond_5:1");
    CHECK(s->intra == (GA_INTRA_P2P | GA_INTRA_NVLS | GA_INTRA_NVLINK));
    CHECK(s->net_conns == 3 && s->gdr_conns == 3);
}

/* No HCA found: NCCL falls back to sockets (NCCL issue 952, NCCL 2.18). */
static const char *const socket_lines[] = {
    /* net_ib.cc:826 "NET/IB : No device found." */
    "<cluster_name>:926:1151 [7] NCCL INFO NET/IB : No device found.",
    /* net_socket.cc:76 "NET/Socket : Using%s" (format) */
    "<cluster_name>:926:1151 [7] NCCL INFO NET/Socket : Using [0]ibp12s0:10.149.0.32<0> "
    "[1]enp1s0:10.1.0.32<0> "
    "[2]enp2s0:10.2.0.32<0> [3]enp3s0:10.3.0.32<0>",
    "<cluster_name>:926:1151 [7] NCCL INFO Using network Socket",
    "<cluster_name>:926:1151 [7] NCCL INFO comm 0x7f00 rank 15 nRanks 16 nNodes 2 localRanks 8 localRank 7 "
    "MNNVL 0",
    /* net.cc:313 (NCCL issue 952) */
    "<cluster_name>:926:1151 [7] NCCL INFO Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3",
    "<cluster_name>:926:1151 [7] NCCL INFO Channel 07/0 : 15[7] -> 6[6] [send] via NET/Socket/3",
    /* p2p.cc:398 "... via P2P/IPC%s%s" (NCCL issue 952) */
    "<cluster_name>:919:1150 [0] NCCL INFO Channel 01/0 : 8[0] -> 15[7] via P2P/IPC/read",
    /* shm.cc:128 "Channel %02d : %d[%d] -> %d[%d] via SHM/%s/%s" (format) */
    "<cluster_name>:919:1150 [0] NCCL INFO Channel 00 : 8[0] -> 9[1] via SHM/direct/direct", NULL};

static void test_socket_fallback(void)
{
    ga_nccl_log_process p;
    ga_nccl_log_comm c;
    ga_nccl_log_process_init(&p);
    ga_nccl_log_comm_init(&c);
    feed(&p, &c, socket_lines);
    CHECK_STR(c.net_name, "Socket");
    CHECK(c.net_conns == 2 && c.gdr_conns == 0 && c.p2p == 1 && c.shm == 1);
    ga_transport_rec r;
    memset(&r, 0, sizeof r);
    ga_transport_add_comm(&r, "pair 2 round 0", &p, &c);
    const ga_transport_scope *s = &r.scope[GA_TR_PAIRS];
    CHECK(s->net == GA_NET_SOCKET);
    CHECK_STR(s->devices, "enp3s0");
    CHECK(s->intra == (GA_INTRA_P2P | GA_INTRA_SHM));
}

/* Issue 40, finding 10: the OFI network plugin (aws-ofi-nccl) is RDMA only when its log names an RDMA
 * libfabric provider. Its format: src/nccl_ofi_net.c, nccl_net_ofi_create_plugin, NCCL_OFI_INFO(NCCL_INIT |
 * NCCL_NET, "Selected Provider is %s (found %d nics)", ...) (aws/aws-ofi-nccl pull request 333); later
 * releases "Selected provider is %s, fabric is %s (found %d nics)", and a WARN line when no RDMA provider
 * was found. */
static const char *const ofi_efa_lines[] = {
    /* an EKS NCCL-over-EFA test log published in a public deployment guide (NCCL 2.12.7, mpirun's prefix) */
    "[1,0]<stdout>:test-nccl-efa-worker-0:21:21 [0] NCCL INFO NET/OFI Selected Provider is efa (found 1 "
    "nics)",
    "[1,0]<stdout>:test-nccl-efa-worker-0:21:21 [0] NCCL INFO Using network AWS Libfabric",
    "[1,0]<stdout>:test-nccl-efa-worker-0:21:21 [0] NCCL INFO comm 0x7f00 rank 0 nRanks 16 nNodes 2 "
    "localRanks 8 localRank 0 MNNVL 0",
    /* aws/aws-ofi-nccl issue 24: "Ring 00 : 7 -> 8 [send] via NET/AWS Libfabric/0" (NCCL 2.4's "Ring"; 2.28
     * writes "Channel", net.cc) */
    "[1,7]<stdout>:ip-172-32-38-1:21471:22316 [7] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/AWS "
    "Libfabric/0",
    NULL};
static const char *const ofi_tcp_lines[] = {
    /* a public troubleshooting note of an EKS cluster without EFA devices in the pod */
    "worker-0:79:79 [0] NCCL WARN NET/OFI No eligible providers were found",
    "worker-0:79:79 [0] NCCL WARN NET/OFI Selected provider is tcp, fabric is 10.224.0.0/12 (found 8 nics)",
    "worker-0:79:79 [0] NCCL INFO Using network AWS Libfabric",
    "worker-0:79:79 [0] NCCL INFO comm 0x7f00 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
    "worker-0:79:79 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/AWS Libfabric/0",
    NULL};
static const char *const ofi_silent_lines[] = {
    /* the plugin's provider line filtered out (NCCL_DEBUG_SUBSYS without NET): the same run, no evidence */
    "worker-0:79:79 [0] NCCL INFO Using network AWS Libfabric",
    "worker-0:79:79 [0] NCCL INFO comm 0x7f00 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
    "worker-0:79:79 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/AWS Libfabric/0", NULL};

static uint32_t world_net(const char *const *lines, char *provider, size_t len)
{
    ga_nccl_log_process p;
    ga_nccl_log_comm c;
    ga_nccl_log_process_init(&p);
    ga_nccl_log_comm_init(&c);
    feed(&p, &c, lines);
    ga_transport_rec r;
    memset(&r, 0, sizeof r);
    ga_transport_add_comm(&r, "world", &p, &c);
    snprintf(provider, len, "%s", r.scope[GA_TR_WORLD].provider);
    return r.scope[GA_TR_WORLD].net;
}

static void test_ofi_plugin(void)
{
    char prov[32];
    CHECK(world_net(ofi_efa_lines, prov, sizeof prov) == GA_NET_PLUGIN_RDMA);
    CHECK_STR(prov, "efa");
    CHECK(world_net(ofi_tcp_lines, prov, sizeof prov) == (GA_NET_SOCKET | GA_NET_PLUGIN));
    CHECK_STR(prov, "tcp");
    CHECK(world_net(ofi_silent_lines, prov, sizeof prov) == GA_NET_PLUGIN);
    CHECK_STR(prov, "");
    CHECK(ga_ofi_provider_rdma("verbs;ofi_rxm") == 1 && ga_ofi_provider_rdma("cxi") == 1);
    CHECK(ga_ofi_provider_rdma("tcp;ofi_rxm") == 0 && ga_ofi_provider_rdma("sockets") == 0);
    CHECK(ga_ofi_provider_rdma("") == -1 && ga_ofi_provider_rdma("mystery") == -1);
    ga_nccl_log_process p;
    ga_nccl_log_process_init(&p);
    /* a later release's wording (a public EFA deployment guide) */
    ga_nccl_log_line(&p, NULL, 0,
                     "[2026-01-15 02:30:45] NCCL INFO NET/OFI Selected provider is efa, fabric is efa-direct "
                     "(found 32 nics)");
    CHECK_STR(p.ofi_provider, "efa");
}

/* A communicator inside one node says nothing about a network; one the log never mentions is counted as
 * unread; the lines written while two communicators lived count for both. */
static void test_scopes_and_silence(void)
{
    ga_nccl_log_process p;
    ga_nccl_log_comm a, b;
    ga_nccl_log_process_init(&p);
    ga_nccl_log_comm_init(&a);
    ga_nccl_log_comm_init(&b);
    ga_nccl_log_comm *both[2] = {&a, &b};
    /* with a time stamp before it (debug.cc, NCCL_DEBUG_TIMESTAMP_FORMAT) */
    ga_nccl_log_line(&p, both, 2, "[2025-07-01 10:00:00] h1:1:2 [0] NCCL INFO Using network IB\n");
    ga_nccl_log_comm *one[1] = {&a};
    ga_nccl_log_line(&p, one, 1,
                     "h1:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 "
                     "localRank 0 MNNVL 0\n");
    ga_nccl_log_line(&p, one, 1, "not an NCCL line at all");
    CHECK(a.lines == 2 && b.lines == 1);
    CHECK_STR(b.net_name, "IB");
    ga_transport_rec r;
    memset(&r, 0, sizeof r);
    ga_transport_add_comm(&r, "node 0", &p, &a);
    CHECK(r.scope[GA_TR_NODE].net == 0); /* one node: no network used */
    ga_nccl_log_comm silent;
    ga_nccl_log_comm_init(&silent);
    ga_transport_add_comm(&r, "ddp_smoke gradients", &p, &silent);
    CHECK(r.scope[GA_TR_OTHER].comms == 1 && r.scope[GA_TR_OTHER].comms_silent == 1);
    CHECK(ga_transport_scope_of("world") == GA_TR_WORLD &&
          ga_transport_scope_of("pair 0 round 3") == GA_TR_PAIRS);
}

static void test_debug_file_expand(void)
{
    char out[128];
    CHECK(ga_nccl_debug_file_expand("/tmp/n.%h.%p.log", "gpu01.cluster.local", 4242, out, sizeof out) == 0);
    CHECK_STR(out, "/tmp/n.gpu01.4242.log");
    CHECK(ga_nccl_debug_file_expand("/a%%b/%x%", "h", 1, out, sizeof out) == 0);
    CHECK_STR(out, "/a%b/%x%");
    CHECK(ga_nccl_debug_file_expand("/tmp/%h.log", "averylonghostname", 1, out, 10) == -1);
}

static const char *env_value;
static const char *fake_env(const char *name)
{
    if (strcmp(name, "NCCL_IB_DISABLE") == 0)
        return env_value;
    if (strcmp(name, "NCCL_NET") == 0)
        return "socket";
    return NULL;
}

static void test_mpi_and_env(void)
{
    /* the valid categories Open MPI 4.1.4 listed after MPI_Init here (ob1 with tcp, vader, self; the psm2
     * MTL's stay registered though the ob1 PML uses none) */
    const char *cats[] = {"ompi_pml",      "ompi_pml_base", "ompi_pml_ob1",   "opal_btl",
                          "opal_btl_base", "opal_btl_tcp",  "opal_btl_vader", "opal_btl_self",
                          "ompi_mtl_psm2", "ompi_vprotocol"};
    ga_transport_rec r;
    memset(&r, 0, sizeof r);
    ga_transport_mpi_components(&r, cats, (int)(sizeof cats / sizeof cats[0]));
    CHECK_STR(r.mpi_pml, "ob1");
    CHECK_STR(r.mpi_btl, "tcp,vader,self");
    CHECK(r.mpi_net == GA_NET_SOCKET);
    const char *ucx[] = {"ompi_pml_ucx", "opal_btl_self"};
    ga_transport_mpi_components(&r, ucx, 2);
    CHECK(r.mpi_net == GA_NET_PLUGIN);
    env_value = "1";
    ga_transport_forced_from_env(&r, fake_env);
    CHECK(r.forced == (GA_FORCED_IB_DISABLE | GA_FORCED_NET_SOCKET));
    CHECK_STR(r.forced_text, "NCCL_IB_DISABLE=1 NCCL_NET=socket");
    env_value = "0";
    ga_transport_forced_from_env(&r, fake_env);
    CHECK(r.forced == GA_FORCED_NET_SOCKET);
}

/* 2 nodes x 2 ranks; node i's world communicator over net (GA_NET_*), gdr of 4 connections. */
static void cluster(ga_transport_record all[4], const uint32_t net[2], const int gdr[2])
{
    memset(all, 0, 4 * sizeof *all);
    for (int i = 0; i < 4; i++) {
        snprintf(all[i].hdr.host, sizeof all[i].hdr.host, "node%02d", i / 2);
        all[i].hdr.world_rank = i;
        all[i].hdr.node_index = i / 2;
        all[i].tr.log_state = GA_TR_LOG_READ;
        ga_transport_scope *s = &all[i].tr.scope[GA_TR_WORLD];
        s->comms = s->comms_multi_node = 1;
        s->net = net[i / 2];
        s->net_conns = 4;
        s->gdr_conns = gdr[i / 2];
        snprintf(s->net_name, sizeof s->net_name, "%s", net[i / 2] == GA_NET_SOCKET ? "Socket" : "IB");
        snprintf(s->devices, sizeof s->devices, "%s", net[i / 2] == GA_NET_SOCKET ? "eth0" : "mlx5_0:1");
        s->intra = GA_INTRA_P2P | GA_INTRA_NVLINK;
    }
}

static const char *str_at(const json_t *o, const char *path1, const char *path2)
{
    return json_string_value(json_object_get(json_object_get(o, path1), path2));
}

static void test_check(void)
{
    ga_transport_record all[4];
    ga_transport_policy pol = {.expect = GA_EXPECT_NET_IB, .nccl = true, .node_count = 2};
    ga_findings f;

    /* node01 fell back to sockets: it alone is named */
    cluster(all, (uint32_t[]){GA_NET_IB, GA_NET_SOCKET}, (int[]){4, 0});
    ga_findings_init(&f);
    json_t *t = ga_transport_analyse(all, 4, &pol, &f);
    CHECK(f.count == 1 && strcmp(f.items[0].code, "COMM_TRANSPORT_FALLBACK") == 0 &&
          strcmp(f.items[0].host, "node01") == 0 && f.items[0].severity == GA_SEV_FAIL);
    CHECK(json_is_false(json_object_get(t, "ib_exercised")));
    const json_t *n0 = json_array_get(json_object_get(t, "nodes"), 0);
    CHECK_STR(json_string_value(
                  json_array_get(json_object_get(json_object_get(n0, "between_nodes"), "networks"), 0)),
              "IB");
    CHECK_STR(str_at(n0, "between_nodes", "gdr"), "all");
    CHECK_STR(str_at(n0, "inside_node", "link"), "NVLink");
    json_decref(t);
    ga_findings_free(&f);

    /* the same with sockets intended: no finding, and the report says so */
    pol.allow_sockets = true;
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECK(f.count == 0);
    CHECK(json_is_true(json_object_get(t, "sockets_intended")));
    CHECK(strstr(json_string_value(json_object_get(t, "ib_not_exercised_why")), "intended") != NULL);
    json_decref(t);
    ga_findings_free(&f);
    pol.allow_sockets = false;

    /* NCCL_IB_DISABLE=1 on node00 fails it even where the log shows IB (the setting is the fault) */
    cluster(all, (uint32_t[]){GA_NET_IB, GA_NET_IB}, (int[]){4, 4});
    all[0].tr.forced = GA_FORCED_IB_DISABLE;
    snprintf(all[0].tr.forced_text, sizeof all[0].tr.forced_text, "NCCL_IB_DISABLE=1");
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECK(f.count == 1 && strcmp(f.items[0].host, "node00") == 0 &&
          strstr(f.items[0].message, "NCCL_IB_DISABLE=1 is set") != NULL);
    json_decref(t);
    ga_findings_free(&f);

    /* a log that said nothing: unknown, not a pass, under --expect-net ib */
    cluster(all, (uint32_t[]){GA_NET_IB, 0}, (int[]){4, 0});
    all[2].tr.scope[GA_TR_WORLD].comms_silent = all[3].tr.scope[GA_TR_WORLD].comms_silent = 1;
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECK(f.count == 1 && strcmp(f.items[0].code, "COMM_TRANSPORT_UNKNOWN") == 0 &&
          strcmp(f.items[0].host, "node01") == 0);
    json_decref(t);
    ga_findings_free(&f);

    /* Issue 40, finding 10: a network plugin with no RDMA provider in its log is no pass of --expect-net ib
     * (before the fix: any plugin but IB and Socket counted as RDMA, and passed); an OFI plugin over
     * libfabric's tcp provider is the fallback to sockets; one over efa passes */
    cluster(all, (uint32_t[]){GA_NET_PLUGIN_RDMA, GA_NET_PLUGIN}, (int[]){0, 0});
    for (int i = 0; i < 4; i++)
        snprintf(all[i].tr.scope[GA_TR_WORLD].net_name, sizeof all[i].tr.scope[GA_TR_WORLD].net_name,
                 "AWS Libfabric");
    snprintf(all[0].tr.scope[GA_TR_WORLD].provider, sizeof all[0].tr.scope[GA_TR_WORLD].provider, "efa");
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECKF(f.count == 1 && strcmp(f.items[0].code, "COMM_TRANSPORT_UNKNOWN") == 0 &&
               strcmp(f.items[0].host, "node01") == 0 && strstr(f.items[0].message, "'AWS Libfabric'") &&
               f.items[0].severity == GA_SEV_FAIL,
           "%zu findings: %s", (size_t)f.count, f.count ? f.items[0].message : "");
    CHECK(json_is_false(json_object_get(t, "ib_exercised")));
    CHECK_STR(str_at(json_array_get(json_object_get(t, "nodes"), 0), "between_nodes", "provider"), "efa");
    json_decref(t);
    ga_findings_free(&f);
    for (int i = 2; i < 4; i++) {
        all[i].tr.scope[GA_TR_WORLD].net = GA_NET_SOCKET | GA_NET_PLUGIN;
        snprintf(all[i].tr.scope[GA_TR_WORLD].provider, sizeof all[i].tr.scope[GA_TR_WORLD].provider, "tcp");
    }
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECKF(f.count == 1 && strcmp(f.items[0].code, "COMM_TRANSPORT_FALLBACK") == 0 &&
               strstr(f.items[0].message, "libfabric provider tcp"),
           "%zu findings: %s", (size_t)f.count, f.count ? f.items[0].message : "");
    json_decref(t);
    ga_findings_free(&f);

    /* ib-gdr: no GPUDirect RDMA on node01 fails, some on node00 warns */
    pol.expect = GA_EXPECT_NET_IB_GDR;
    cluster(all, (uint32_t[]){GA_NET_IB, GA_NET_IB}, (int[]){2, 0});
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECK(f.count == 2 && strcmp(f.items[0].code, "COMM_GDR_UNUSED") == 0 &&
          f.items[0].severity == GA_SEV_WARN && f.items[1].severity == GA_SEV_FAIL &&
          strcmp(f.items[1].host, "node01") == 0);
    CHECK(json_is_true(json_object_get(t, "ib_exercised")));
    json_decref(t);
    ga_findings_free(&f);

    /* one node: nothing crosses nodes, nothing is judged, and IB was not exercised */
    pol.node_count = 1;
    cluster(all, (uint32_t[]){GA_NET_SOCKET, GA_NET_SOCKET}, (int[]){0, 0});
    for (int i = 0; i < 4; i++) {
        all[i].hdr.node_index = 0;
        all[i].tr.scope[GA_TR_WORLD].comms_multi_node = 0;
    }
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECK(f.count == 0);
    CHECK_STR(json_string_value(json_object_get(t, "ib_not_exercised_why")),
              "one node: no traffic between nodes");
    json_decref(t);
    ga_findings_free(&f);

    /* ... unless NCCL counted several nodes (its host hash) where MPI saw one: then it used its network */
    all[3].tr.scope[GA_TR_WORLD].comms_multi_node = 1;
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECK(f.count == 1 && strcmp(f.items[0].code, "COMM_TRANSPORT_FALLBACK") == 0);
    CHECK(json_is_true(json_object_get(t, "multi_node")));
    json_decref(t);
    ga_findings_free(&f);

    /* the host path: Open MPI over TCP between two nodes */
    pol = (ga_transport_policy){.expect = GA_EXPECT_NET_IB, .nccl = false, .node_count = 2};
    cluster(all, (uint32_t[]){0, 0}, (int[]){0, 0});
    for (int i = 0; i < 4; i++) {
        all[i].tr.mpi_net = GA_NET_SOCKET;
        snprintf(all[i].tr.mpi_pml, sizeof all[i].tr.mpi_pml, "ob1");
        snprintf(all[i].tr.mpi_btl, sizeof all[i].tr.mpi_btl, "tcp,vader,self");
    }
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 4, &pol, &f);
    CHECK(f.count == 2 && strstr(f.items[0].message, "TCP (pml ob1, btl tcp,vader,self)") != NULL);
    json_decref(t);
    ga_findings_free(&f);
}

/* --ib-hcas (issue 40, finding 10): a DGX H100 node's NCCL, with no NCCL_IB_HCA, lists every active port,
 * the storage card's mlx5_7 among them (net_ib.cc:839 "NET/IB : Using%s %s; OOB %s:%s", format), and sends
 * on it between nodes (net.cc:313 "... [send] via NET/%s/%d%s%s%s", format). */
static void node_log(ga_transport_record *r, int rank, int node, int dev)
{
    char conn[160];
    snprintf(conn, sizeof conn,
             "dgx%02d:4242:4300 [%d] NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA",
             node, rank % 8, rank, rank % 8, (rank + 8) % 16, rank % 8, dev);
    const char *const lines[] = {
        "dgx00:4242:4300 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB "
        "[3]mlx5_5:1/IB [4]mlx5_6:1/IB [5]mlx5_7:1/RoCE [6]mlx5_9:1/IB [7]mlx5_10:1/IB [8]mlx5_11:1/IB "
        "[RO]; OOB bond0:10.0.0.1<0>",
        "dgx00:4242:4300 [0] NCCL INFO Using network IB",
        "dgx00:4242:4300 [0] NCCL INFO comm 0x55d1e0c0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 "
        "MNNVL 0",
        conn, NULL};
    ga_nccl_log_process p;
    ga_nccl_log_comm c;
    ga_nccl_log_process_init(&p);
    ga_nccl_log_comm_init(&c);
    feed(&p, &c, lines);
    memset(r, 0, sizeof *r);
    snprintf(r->hdr.host, sizeof r->hdr.host, "dgx%02d", node);
    r->hdr.world_rank = rank;
    r->hdr.node_index = node;
    r->tr.log_state = GA_TR_LOG_READ;
    ga_transport_add_comm(&r->tr, "world", &p, &c);
}

static void test_compute_hcas(void)
{
    const char *list = "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11";
    ga_ib_list l;
    ga_ib_list_parse(list, &l);
    CHECK(ga_ib_list_keeps_device(&l, "mlx5_0:1") && !ga_ib_list_keeps_device(&l, "mlx5_7:1"));
    CHECK(!ga_ib_list_keeps_device(&l, "mlx5_1:1")); /* exact: mlx5_1 is no mlx5_10 */
    CHECK(ga_ib_list_keeps_device(&l, "mlx5_3+mlx5_4") && !ga_ib_list_keeps_device(&l, "mlx5_3+mlx5_7"));
    CHECK(ga_ib_list_keeps_device(&l, "mlx5_5_dma:1")); /* Data Direct: net_ib.cc:785 "%s_dma" */
    ga_ib_list_parse("mlx5_0:1", &l);                   /* a prefix, and a port */
    CHECK(ga_ib_list_keeps_device(&l, "mlx5_0:1") && !ga_ib_list_keeps_device(&l, "mlx5_0:2"));

    ga_transport_record all[2];
    ga_transport_policy pol = {.expect = GA_EXPECT_NET_IB, .nccl = true, .node_count = 2, .ib_hcas = list};
    ga_findings f;
    node_log(&all[0], 0, 0, 5); /* dgx00 sent over mlx5_7, the storage port */
    node_log(&all[1], 8, 1, 0);
    ga_findings_init(&f);
    json_t *t = ga_transport_analyse(all, 2, &pol, &f);
    CHECK(f.count == 1 && strcmp(f.items[0].code, "COMM_NET_NOT_COMPUTE") == 0 &&
          f.items[0].severity == GA_SEV_FAIL && strcmp(f.items[0].host, "dgx00") == 0 &&
          strstr(f.items[0].message,
                 "NCCL used mlx5_7:1 between nodes, not a compute port (--ib-hcas =mlx5_0,") != NULL);
    CHECK(json_integer_value(json_object_get(json_object_get(t, "ib_hcas"), "nodes_outside")) == 1);
    CHECK_STR(str_at(json_array_get(json_object_get(t, "nodes"), 0), "between_nodes", "compute_hcas"),
              "outside: mlx5_7:1");
    json_decref(t);
    ga_findings_free(&f);

    /* compute ports only, a subset of the list: kept, no finding */
    node_log(&all[0], 0, 0, 4);
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 2, &pol, &f);
    CHECK(f.count == 0);
    CHECK(json_integer_value(json_object_get(json_object_get(t, "ib_hcas"), "nodes_kept")) == 2);
    json_decref(t);
    ga_findings_free(&f);

    /* dgx01's log unread: not compared there, said so, no pass claimed */
    all[1].tr.log_state = GA_TR_LOG_UNREADABLE;
    all[1].tr.scope[GA_TR_WORLD].ib_devices[0] = '\0';
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 2, &pol, &f);
    const json_t *h = json_object_get(t, "ib_hcas");
    CHECK(json_integer_value(json_object_get(h, "nodes_not_compared")) == 1 &&
          strstr(json_string_value(json_object_get(h, "not_compared_why")), "dgx01: NCCL's debug output") !=
              NULL);
    json_decref(t);
    ga_findings_free(&f);

    /* without --ib-hcas nothing is compared and the report has no ib_hcas */
    pol.ib_hcas = NULL;
    node_log(&all[0], 0, 0, 5);
    node_log(&all[1], 8, 1, 0);
    ga_findings_init(&f);
    t = ga_transport_analyse(all, 2, &pol, &f);
    CHECK(f.count == 0 && json_object_get(t, "ib_hcas") == NULL);
    json_decref(t);
    ga_findings_free(&f);
}

static void test_expect_net(void)
{
    ga_expect_net e;
    char err[128];
    CHECK(ga_parse_expect_net("ib-gdr", &e, err, sizeof err) == 0 && e == GA_EXPECT_NET_IB_GDR);
    CHECK(ga_parse_expect_net("IB", &e, err, sizeof err) == -1 && strstr(err, "any, ib, ib-gdr"));
}

/* Issue 45, item 5: bytes that are not UTF-8 in what NCCL's environment and log gave
 * (NCCL_IB_DISABLE=$'1\xff', a network and a device named with such a byte) keep the transport record's nodes
 * and the finding's code and message, written as \xHH; before, jansson refused the strings and the parts
 * holding them were dropped. */
static void test_not_utf8(void)
{
    ga_transport_record all[4];
    ga_transport_policy pol = {.expect = GA_EXPECT_NET_IB, .nccl = true, .node_count = 2};
    ga_findings f;
    cluster(all, (uint32_t[]){GA_NET_IB, GA_NET_SOCKET}, (int[]){4, 0});
    env_value = "1\xff";
    ga_transport_forced_from_env(&all[0].tr, fake_env);
    snprintf(all[2].tr.scope[GA_TR_WORLD].net_name, sizeof all[2].tr.scope[GA_TR_WORLD].net_name,
             "Sock\xff"
             "et");
    snprintf(all[2].tr.scope[GA_TR_WORLD].devices, sizeof all[2].tr.scope[GA_TR_WORLD].devices, "eth\xc3");
    ga_findings_init(&f);
    json_t *t = ga_transport_analyse(all, 4, &pol, &f);
    json_t *nodes = json_object_get(t, "nodes");
    CHECKF(json_array_size(nodes) == 2, "transport.nodes has %zu nodes, not 2", json_array_size(nodes));
    CHECK_STR(str_at(json_array_get(nodes, 0), "between_nodes", "forced_by"),
              "NCCL_IB_DISABLE=1\\xFF NCCL_NET=socket");
    json_t *fj = ga_findings_to_json(&f);
    bool fallback_said = false;
    for (size_t i = 0; i < json_array_size(fj); i++) {
        const char *msg = json_string_value(json_object_get(json_array_get(fj, i), "message"));
        const char *code = json_string_value(json_object_get(json_array_get(fj, i), "code"));
        CHECKF(msg && code, "finding %zu lost its code or message", i);
        fallback_said |= code && msg && strcmp(code, "COMM_TRANSPORT_FALLBACK") == 0 && *msg;
    }
    CHECK(fallback_said);
    json_decref(fj);
    json_decref(t);
    ga_findings_free(&f);
    env_value = NULL;
    /* the helper itself: valid sequences kept, overlong forms, surrogates and stray bytes as \xHH */
    const char *in[] = {"caf\xc3\xa9",
                        "a\xff"
                        "b",
                        "\xc0\xaf",
                        "\xed\xa0\x80",
                        "\xf4\x90\x80\x80",
                        "\xe2\x82"};
    const char *want[] = {"caf\xc3\xa9",          "a\\xFFb",   "\\xC0\\xAF", "\\xED\\xA0\\x80",
                          "\\xF4\\x90\\x80\\x80", "\\xE2\\x82"};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        char *out = ga_utf8_text(in[i]);
        CHECKF(out && strcmp(out, want[i]) == 0, "case %zu: %s", i, out ? out : "NULL");
        free(out);
    }
}

int main(void)
{
    test_roce_plugin();
    test_socket_fallback();
    test_ofi_plugin();
    test_scopes_and_silence();
    test_debug_file_expand();
    test_mpi_and_env();
    test_check();
    test_expect_net();
    test_compute_hcas();
    test_not_utf8();
    return ga_test_finish();
}
