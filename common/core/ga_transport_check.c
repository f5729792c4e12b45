/* The per-node view of the gathered transport records, and the check of what went between nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_ib_list.h"
#include "ga_transport.h"
#include "ga_text.h"

/* What counts as RDMA between nodes: for NCCL, a plugin only with the evidence of its log
 * (GA_NET_PLUGIN_RDMA, issue 40, finding 10); for Open MPI on the host path, its RDMA-capable components as
 * before (UCX, uct, ofi: MPI_T names the component, not the wire under it). */
#define RDMA_NCCL (GA_NET_IB | GA_NET_ROCE | GA_NET_PLUGIN_RDMA)
#define RDMA_MPI (GA_NET_IB | GA_NET_ROCE | GA_NET_PLUGIN | GA_NET_PLUGIN_RDMA)

/* One node's ranks, together. */
typedef struct {
    const char *host;
    int node, ranks, first_rank;
    uint32_t net, intra, forced, mpi_net;
    int comms, multi, silent, unreadable, net_conns, gdr_conns, warn_lines;
    char net_names[64], devices[256], forced_text[64], why[128], pml[16], btl[64], provider[32];
    char ib_devices[256]; /* the devices of NCCL's IB network between nodes */
    char hcas[200];       /* --ib-hcas: "kept", "outside: mlx5_7:1", "not compared: why"; "" not given */
    ga_transport_scope scope[GA_TR_SCOPES];
} node_view;

static void list_merge(char *list, size_t len, const char *words)
{
    char w[256];
    for (const char *s = words; *s;) {
        size_t n = strcspn(s, ",");
        snprintf(w, sizeof w, "%.*s", (int)(n < sizeof w ? n : sizeof w - 1), s);
        size_t wl = strlen(w), have = strlen(list);
        bool present = false;
        for (const char *t = list; *t && !present;) {
            size_t m = strcspn(t, ",");
            present = m == wl && strncmp(t, w, wl) == 0;
            t += m + (t[m] == ',');
        }
        if (!present && wl && have + (have > 0) + wl + 1 <= len)
            snprintf(list + have, len - have, "%s%s", have ? "," : "", w);
        s += n + (s[n] == ',');
    }
}

static void view_add(node_view *v, const ga_transport_record *r)
{
    const ga_transport_rec *t = &r->tr;
    if (v->ranks++ == 0) {
        v->host = r->hdr.host;
        v->first_rank = r->hdr.world_rank;
    }
    v->forced |= t->forced;
    list_merge(v->forced_text, sizeof v->forced_text, t->forced_text);
    v->mpi_net |= t->mpi_net;
    list_merge(v->pml, sizeof v->pml, t->mpi_pml);
    list_merge(v->btl, sizeof v->btl, t->mpi_btl);
    v->warn_lines += t->warn_lines;
    if (t->log_state == GA_TR_LOG_UNREADABLE && !v->unreadable++)
        snprintf(v->why, sizeof v->why, "%s", t->log_why);
    for (int s = 0; s < GA_TR_SCOPES; s++) {
        const ga_transport_scope *sc = &t->scope[s];
        ga_transport_scope *vs = &v->scope[s];
        vs->comms += sc->comms, vs->comms_multi_node += sc->comms_multi_node;
        vs->comms_silent += sc->comms_silent;
        vs->net |= sc->net, vs->intra |= sc->intra;
        vs->net_conns += sc->net_conns, vs->gdr_conns += sc->gdr_conns;
        if (!vs->net_name[0])
            snprintf(vs->net_name, sizeof vs->net_name, "%s", sc->net_name);
        if (!vs->provider[0])
            snprintf(vs->provider, sizeof vs->provider, "%s", sc->provider);
        if (!v->provider[0])
            snprintf(v->provider, sizeof v->provider, "%s", sc->provider);
        list_merge(vs->devices, sizeof vs->devices, sc->devices);
        v->net |= sc->net, v->intra |= sc->intra;
        v->comms += sc->comms, v->multi += sc->comms_multi_node, v->silent += sc->comms_silent;
        v->net_conns += sc->net_conns, v->gdr_conns += sc->gdr_conns;
        list_merge(v->net_names, sizeof v->net_names, sc->net_name);
        list_merge(v->devices, sizeof v->devices, sc->devices);
        list_merge(v->ib_devices, sizeof v->ib_devices, sc->ib_devices);
    }
}

static json_t *strings(const char *list)
{
    json_t *a = json_array();
    char w[256];
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, ",");
        snprintf(w, sizeof w, "%.*s", (int)(n < sizeof w ? n : sizeof w - 1), s);
        if (w[0])
            json_array_append_new(a, ga_json_text(w));
        s += n + (s[n] == ',');
    }
    return a;
}

static json_t *net_kinds(uint32_t net, const char *names)
{
    char list[128] = "";
    if (net & GA_NET_IB)
        list_merge(list, sizeof list, "IB");
    if (net & GA_NET_ROCE)
        list_merge(list, sizeof list, "RoCE");
    if (net & GA_NET_SOCKET)
        list_merge(list, sizeof list, "Socket");
    if (net & GA_NET_COLLNET)
        list_merge(list, sizeof list, "CollNet");
    if (net & (GA_NET_PLUGIN | GA_NET_PLUGIN_RDMA)) {
        char other[64] = "";
        list_merge(other, sizeof other, names);
        /* a plugin is shown by the name NCCL gave it */
        for (char *save = NULL, *w = strtok_r(other, ",", &save); w; w = strtok_r(NULL, ",", &save))
            if (strncmp(w, "IB", 2) != 0 && strcmp(w, "Socket") != 0)
                list_merge(list, sizeof list, w);
    }
    return strings(list);
}

static json_t *intra_paths(uint32_t intra)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } paths[] = {{GA_INTRA_P2P, "P2P"},
                 {GA_INTRA_P2P_INDIRECT, "P2P/indirect"},
                 {GA_INTRA_SHM, "SHM"},
                 {GA_INTRA_NVLS, "NVLS"},
                 {GA_INTRA_MNNVL, "MNNVL"}};
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (intra & paths[i].bit)
            json_array_append_new(a, json_string(paths[i].name));
    return a;
}

static const char *gdr_word(int conns, int gdr)
{
    return conns == 0 ? "n/a" : gdr == conns ? "all" : gdr == 0 ? "none" : "some";
}

static json_t *scope_json(const ga_transport_scope *s)
{
    return json_pack("{s:i, s:i, s:i, s:o, s:o, s:i, s:i, s:o, s:o}", "communicators", s->comms,
                     "spanning_nodes", s->comms_multi_node, "unread", s->comms_silent, "networks",
                     net_kinds(s->net, s->net_name), "devices", strings(s->devices), "connections",
                     s->net_conns, "gdr_connections", s->gdr_conns, "inside_node", intra_paths(s->intra),
                     "provider", ga_json_text(s->provider[0] ? s->provider : NULL));
}

static json_t *view_json(const node_view *v, bool nccl, bool multi)
{
    json_t *scopes = json_object();
    for (int s = 0; s < GA_TR_SCOPES; s++)
        if (v->scope[s].comms)
            json_object_set_new(scopes, ga_transport_scope_name(s), scope_json(&v->scope[s]));
    uint32_t net = !multi ? 0 : nccl ? v->net : v->mpi_net; /* Open MPI opens its TCP BTL on one node too */
    uint32_t intra = v->intra;
    if (!nccl && (strstr(v->btl, "vader") || strstr(v->btl, "sm")))
        intra |= GA_INTRA_SHM;
    json_t *between =
        json_pack("{s:o, s:o, s:s, s:i, s:i, s:o, s:o}", "networks",
                  net_kinds(net, nccl ? v->net_names : v->pml), "devices", strings(v->devices), "gdr",
                  net & (nccl ? RDMA_NCCL : RDMA_MPI) ? gdr_word(v->net_conns, v->gdr_conns) : "n/a",
                  "connections", v->net_conns, "gdr_connections", v->gdr_conns, "forced_by",
                  ga_json_text(v->forced_text[0] ? v->forced_text : NULL), "provider",
                  ga_json_text(v->provider[0] ? v->provider : NULL));
    const char *link = v->intra & GA_INTRA_NVLINK ? "NVLink" : v->intra & GA_INTRA_PCIE ? "PCIe" : NULL;
    json_t *o = json_pack("{s:o, s:i, s:i, s:o, s:{s:o, s:s?}, s:o, s:{s:o, s:o, s:o}, s:i}", "host",
                          ga_json_text(v->host), "node", v->node, "ranks", v->ranks, "between_nodes", between,
                          "inside_node", "paths", intra_paths(intra), "link", link, "communicators", scopes,
                          "mpi", "pml", ga_json_text(v->pml), "btl", ga_json_text(v->btl), "networks",
                          net_kinds(v->mpi_net, v->pml), "nccl_warnings", v->warn_lines);
    if (v->hcas[0])
        json_object_set_new(json_object_get(o, "between_nodes"), "compute_hcas", ga_json_text(v->hcas));
    json_object_set_new(o, "log",
                        ga_json_text(!nccl           ? "not used (host path)"
                                     : v->unreadable ? v->why
                                     : v->comms == 0 ? "no NCCL communicator"
                                                     : "read"));
    return o;
}

/* The node's verdict on what went between nodes; adds its findings. Returns 1 when RDMA carried the node's
 * inter-node traffic, 0 when sockets did, 2 when a network plugin did over a transport its log does not
 * establish, -1 when nothing (or nothing readable) crossed nodes from it. */
static int check_node(const node_view *v, const ga_transport_policy *pol, bool multi, ga_findings *f)
{
    ga_where w = {v->host, v->node, v->first_rank, -1, NULL};
    uint32_t net = pol->nccl ? v->net : v->mpi_net;
    bool rdma = (net & (pol->nccl ? RDMA_NCCL : RDMA_MPI)) != 0, sockets = (net & GA_NET_SOCKET) != 0;
    bool forced = pol->nccl && v->forced != 0;
    bool expect = multi && pol->expect != GA_EXPECT_NET_ANY && !pol->allow_sockets;
    if (expect && (sockets || forced)) {
        char what[200] = "";
        if (sockets && pol->nccl)
            snprintf(what, sizeof what,
                     "NCCL sent its inter-node traffic over sockets (network %s%s%s, %d "
                     "connections)",
                     v->net_names[0] ? v->net_names : "Socket", v->provider[0] ? ", libfabric provider " : "",
                     v->provider, v->net_conns);
        else if (sockets)
            snprintf(what, sizeof what, "Open MPI's inter-node transport is TCP (pml %s, btl %s)", v->pml,
                     v->btl);
        ga_findings_add(f, GA_SEV_FAIL, "COMM_TRANSPORT_FALLBACK", w,
                        "%s%s%s%s; InfiniBand/RoCE is expected between nodes (--expect-net %s): "
                        "--allow-sockets if sockets are intended",
                        what, what[0] && forced ? ", and " : "", forced ? v->forced_text : "",
                        forced ? (v->forced & GA_FORCED_IB_DISABLE && v->forced & GA_FORCED_NET_SOCKET
                                      ? " are set"
                                      : " is set")
                               : "",
                        ga_expect_net_name(pol->expect));
        return 0;
    }
    if (expect && pol->nccl && !rdma && !sockets && (v->net & GA_NET_PLUGIN)) {
        ga_findings_add(f, GA_SEV_FAIL, "COMM_TRANSPORT_UNKNOWN", w,
                        "NCCL sent its inter-node traffic through the network plugin '%s', and its log names "
                        "no RDMA transport under it (%s%s); a pass with --expect-net %s needs that evidence "
                        "(an OFI plugin runs over TCP too)",
                        v->net_names, v->provider[0] ? "libfabric provider " : "no libfabric provider said",
                        v->provider, ga_expect_net_name(pol->expect));
        return 2; /* traffic crossed nodes, over what is unknown */
    }
    bool unread = pol->nccl ? (v->silent > 0 || v->unreadable > 0) : v->mpi_net == 0;
    if (expect && !rdma && !sockets && unread) {
        ga_findings_add(f, GA_SEV_FAIL, "COMM_TRANSPORT_UNKNOWN", w,
                        "the transport between nodes could not be read (%s); a pass with --expect-net %s "
                        "needs it",
                        !pol->nccl      ? "Open MPI's MPI_T names no PML"
                        : v->unreadable ? v->why
                                        : "NCCL's debug output said nothing about a communicator",
                        ga_expect_net_name(pol->expect));
        return -1;
    }
    if (multi && pol->nccl && pol->expect == GA_EXPECT_NET_IB_GDR && rdma && v->net_conns > 0 &&
        v->gdr_conns < v->net_conns)
        ga_findings_add(f, v->gdr_conns == 0 ? GA_SEV_FAIL : GA_SEV_WARN, "COMM_GDR_UNUSED", w,
                        "GPUDirect RDMA on %d of %d network connections; the SKU requires it "
                        "(--expect-net ib-gdr)",
                        v->gdr_conns, v->net_conns);
    if (!multi || (pol->nccl && v->multi == 0 && v->net_conns == 0))
        return -1;
    return sockets ? 0 : rdma ? 1 : -1;
}

/* --ib-hcas: the devices NCCL's IB network used between nodes on this node, each one the list must keep
 * (issue 40, finding 10). Without NCCL_IB_HCA, NCCL takes every ACTIVE port of InfiniBand or Ethernet link
 * layer (NCCL 2.28.9 src/transport/net_ib.cc:736-740, ncclIbInitDevices), a storage or management port among
 * them; one that carried the collectives is a path the acceptance did not hold to the compute fabric's bar:
 * COMM_NET_NOT_COMPUTE, on the node whose own log says so. Using a subset of the list is no fault (NCCL's
 * topology search chooses among the kept devices per GPU and channel: src/graph/search.cc). Where the log
 * does not say which devices were used the comparison was not made, and v->hcas says why: that is no pass.
 * With NCCL_IB_HCA set NCCL already confines itself to that list (net_ib.cc:701-740), and the check holds
 * its choice to --ib-hcas. Returns 1 compared and kept, 0 a device outside the list, -1 not compared. */
static int check_hcas(node_view *v, const ga_transport_policy *pol, const ga_ib_list *l, bool multi,
                      ga_findings *f)
{
    char outside[200] = "", unknown[64] = "";
    for (const char *s = v->ib_devices; *s;) {
        size_t n = strcspn(s, ",");
        char dev[64];
        snprintf(dev, sizeof dev, "%.*s", (int)(n < sizeof dev ? n : sizeof dev - 1), s);
        /* "dev3": the log never listed device 3's name (ga_nccl_log_device) */
        bool named = !(strncmp(dev, "dev", 3) == 0 && dev[3] >= '0' && dev[3] <= '9');
        if (!named)
            list_merge(unknown, sizeof unknown, dev);
        else if (!ga_ib_list_keeps_device(l, dev))
            list_merge(outside, sizeof outside, dev);
        s += n + (s[n] == ',');
    }
    if (outside[0]) {
        ga_where w = {v->host, v->node, v->first_rank, -1, NULL};
        ga_findings_add(f, GA_SEV_FAIL, "COMM_NET_NOT_COMPUTE", w,
                        "NCCL used %s between nodes, not a compute port (--ib-hcas %s)", outside,
                        pol->ib_hcas);
        snprintf(v->hcas, sizeof v->hcas, "outside: %s", outside);
        return 0;
    }
    const char *why = !pol->nccl          ? "the host path: NCCL did not run"
                      : !multi            ? "one node: nothing between nodes"
                      : v->unreadable     ? "NCCL's debug output was not read"
                      : v->silent         ? "NCCL's debug output said nothing about a communicator"
                      : unknown[0]        ? "NCCL's log did not list the names of the devices it used"
                      : !v->ib_devices[0] ? "NCCL's IB network carried nothing between nodes"
                                          : NULL;
    if (why) {
        snprintf(v->hcas, sizeof v->hcas, "not compared: %s", why);
        return -1;
    }
    snprintf(v->hcas, sizeof v->hcas, "kept");
    return 1;
}

json_t *ga_transport_analyse(const ga_transport_record *all, int n, const ga_transport_policy *pol,
                             ga_findings *f)
{
    int nodes = 0;
    for (int i = 0; i < n; i++)
        nodes = all[i].hdr.node_index + 1 > nodes ? all[i].hdr.node_index + 1 : nodes;
    node_view *v = calloc((size_t)(nodes > 0 ? nodes : 1), sizeof *v);
    if (!v)
        return NULL;
    for (int i = 0; i < n; i++) {
        v[all[i].hdr.node_index].node = all[i].hdr.node_index;
        view_add(&v[all[i].hdr.node_index], &all[i]);
    }
    /* NCCL's own count of nodes (its host hash) decides too: where it saw several, it used its network */
    bool multi = pol->node_count > 1;
    for (int i = 0; i < n && pol->nccl && !multi; i++)
        for (int s = 0; s < GA_TR_SCOPES; s++)
            multi |= all[i].tr.scope[s].comms_multi_node > 0;
    int rdma_nodes = 0, socket_nodes = 0, crossing = 0, forced = 0;
    bool hcas_given = pol->ib_hcas && pol->ib_hcas[0];
    int hcas_kept = 0, hcas_outside = 0, hcas_unknown = 0;
    char hcas_why[200] = "";
    ga_ib_list l;
    ga_ib_list_parse(hcas_given ? pol->ib_hcas : NULL, &l);
    json_t *list = json_array();
    for (int k = 0; k < nodes; k++) {
        if (!v[k].ranks)
            continue;
        int r = check_node(&v[k], pol, multi, f);
        rdma_nodes += r == 1, socket_nodes += r == 0, crossing += r >= 0;
        forced += pol->nccl && v[k].forced != 0;
        int h = hcas_given ? check_hcas(&v[k], pol, &l, multi, f) : 1;
        hcas_kept += h == 1, hcas_outside += h == 0;
        if (h < 0 && hcas_unknown++ == 0)
            snprintf(hcas_why, sizeof hcas_why, "%s: %s", v[k].host, v[k].hcas + strlen("not compared: "));
        json_array_append_new(list, view_json(&v[k], pol->nccl, multi));
    }
    free(v);
    bool exercised = multi && crossing > 0 && rdma_nodes == crossing;
    char why[200] = "";
    if (!multi)
        snprintf(why, sizeof why, "one node: no traffic between nodes");
    else if (socket_nodes && pol->allow_sockets)
        snprintf(why, sizeof why, "inter-node traffic over sockets on %d node(s), intended (--allow-sockets)",
                 socket_nodes);
    else if (socket_nodes)
        snprintf(why, sizeof why, "inter-node traffic over sockets on %d node(s)", socket_nodes);
    else if (forced && pol->allow_sockets)
        snprintf(why, sizeof why, "sockets forced by the environment, intended (--allow-sockets)");
    else if (crossing == 0)
        snprintf(why, sizeof why, "the transport between nodes is unknown or no communicator spanned nodes");
    else if (!exercised)
        snprintf(why, sizeof why, "the transport between nodes is unknown on %d node(s)",
                 crossing - rdma_nodes);
    json_t *hcas = NULL;
    if (hcas_given)
        hcas = json_pack("{s:o, s:i, s:i, s:i, s:o}", "list", ga_json_text(pol->ib_hcas), "nodes_kept",
                         hcas_kept, "nodes_outside", hcas_outside, "nodes_not_compared", hcas_unknown,
                         "not_compared_why", ga_json_text(hcas_unknown ? hcas_why : NULL));
    return json_pack("{s:s, s:s, s:b, s:b, s:b, s:b, s:o, s:o, s:o*}", "source",
                     pol->nccl ? "NCCL debug output (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH), one "
                                 "file per rank"
                               : "Open MPI components in use (MPI_T categories)",
                     "expect_net", ga_expect_net_name(pol->expect), "multi_node", multi, "allow_sockets",
                     pol->allow_sockets, "sockets_intended",
                     pol->allow_sockets && (socket_nodes > 0 || forced > 0), "ib_exercised", exercised,
                     "ib_not_exercised_why", ga_json_text(exercised ? NULL : why), "nodes", list, "ib_hcas",
                     hcas);
}
