#include "ga_transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const scope_names[GA_TR_SCOPES] = {"world", "node", "pairs", "other"};

int ga_transport_scope_of(const char *label)
{
    if (strncmp(label, "world", 5) == 0)
        return GA_TR_WORLD;
    if (strncmp(label, "node ", 5) == 0)
        return GA_TR_NODE;
    if (strncmp(label, "pair ", 5) == 0)
        return GA_TR_PAIRS;
    return GA_TR_OTHER;
}

const char *ga_transport_scope_name(int scope)
{
    return scope >= 0 && scope < GA_TR_SCOPES ? scope_names[scope] : "?";
}

/* Adds word to a comma list once; a list that is full keeps what it has. */
static void list_add(char *list, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, ",");
        if (n == wl && strncmp(s, word, wl) == 0)
            return;
        s += n + (s[n] == ',');
    }
    size_t have = strlen(list);
    if (have + (have > 0) + wl + 1 > len)
        return;
    snprintf(list + have, len - have, "%s%s", have ? "," : "", word);
}

static bool is_ib_net(const char *name)
{
    return strncmp(name, "IB", 2) == 0; /* NCCL's "IB", the RDMA plugin's "IBext", "IBext_v8" */
}

static uint32_t intra_of(const ga_nccl_log_comm *c)
{
    uint32_t b = 0;
    b |= c->p2p > 0 ? GA_INTRA_P2P : 0;
    b |= c->p2p_indirect > 0 ? GA_INTRA_P2P_INDIRECT : 0;
    b |= c->shm > 0 ? GA_INTRA_SHM : 0;
    b |= c->nvls_channels > 0 ? GA_INTRA_NVLS : 0;
    b |= c->p2p_mnnvl > 0 || c->mnnvl > 0 ? GA_INTRA_MNNVL : 0;
    const char *t = c->intra_type;
    if (strcmp(t, "NVL") == 0 || strcmp(t, "NVB") == 0)
        b |= GA_INTRA_NVLINK;
    else if (strcmp(t, "PIX") == 0 || strcmp(t, "PXB") == 0 || strcmp(t, "PHB") == 0 ||
             strcmp(t, "SYS") == 0 || strcmp(t, "P2C") == 0 || strcmp(t, "PXN") == 0)
        b |= GA_INTRA_PCIE;
    return b;
}

/* A network plugin other than IB (issue 40, finding 10): RDMA only on the evidence of its log, the OFI
 * plugin's libfabric provider (efa, verbs: RDMA; tcp, sockets: the kernel's TCP, as NCCL's own sockets);
 * otherwise a plugin whose transport is unknown, which --expect-net ib does not pass. */
static uint32_t plugin_kind(const ga_nccl_log_process *p, ga_transport_scope *s)
{
    if (p->ofi_provider[0] && !s->provider[0])
        snprintf(s->provider, sizeof s->provider, "%s", p->ofi_provider);
    int rdma = ga_ofi_provider_rdma(p->ofi_provider);
    return rdma == 1 ? GA_NET_PLUGIN_RDMA : rdma == 0 ? GA_NET_SOCKET | GA_NET_PLUGIN : GA_NET_PLUGIN;
}

void ga_transport_add_comm(ga_transport_rec *r, const char *label, const ga_nccl_log_process *p,
                           const ga_nccl_log_comm *c)
{
    ga_transport_scope *s = &r->scope[ga_transport_scope_of(label)];
    s->comms++;
    if (c->nnodes > 1)
        s->comms_multi_node++;
    if (c->lines == 0 || (!c->net_name[0] && c->nranks < 0)) {
        s->comms_silent++;
        return;
    }
    s->intra |= intra_of(c);
    s->net |= c->collnet > 0 ? GA_NET_COLLNET : 0;
    s->net_conns += c->net_conns;
    s->gdr_conns += c->gdr_conns;
    /* The network counts where traffic crossed nodes (or, with P2P and SHM off, went through it anyway). */
    if (!(c->nnodes > 1 || c->net_conns > 0))
        return;
    const char *net = c->conn_net[0] ? c->conn_net : c->net_name;
    if (!s->net_name[0])
        snprintf(s->net_name, sizeof s->net_name, "%s", net);
    uint32_t kind = 0;
    for (int d = 0; d < 32; d++) {
        if (!(c->devs_used & (1u << d)))
            continue;
        char name[64];
        const char *link;
        ga_nccl_log_device(p, net, d, name, sizeof name, &link);
        list_add(s->devices, sizeof s->devices, name);
        if (is_ib_net(net))
            list_add(s->ib_devices, sizeof s->ib_devices, name);
        if (is_ib_net(net))
            kind |= strcmp(link, "RoCE") == 0 ? GA_NET_ROCE : GA_NET_IB;
    }
    if (strcasecmp(net, "Socket") == 0)
        kind |= GA_NET_SOCKET;
    else if (is_ib_net(net) && !kind)
        kind |= GA_NET_IB;
    else if (!is_ib_net(net) && net[0])
        kind |= plugin_kind(p, s);
    s->net |= kind;
}

/* The component of an MPI_T category named "<project>_<framework>_<component>" or "<framework>_<component>",
 * "" when the category is another one (or the framework's own, "..._base"). */
static const char *component_of(const char *category, const char *framework)
{
    size_t fl = strlen(framework);
    const char *s = category;
    while ((s = strstr(s, framework)) != NULL) {
        bool at_start = s == category || s[-1] == '_';
        if (at_start && s[fl] == '_' && s[fl + 1] && strchr(s + fl + 1, '_') == NULL &&
            strcmp(s + fl + 1, "base") != 0)
            return s + fl + 1;
        s += fl;
    }
    return "";
}

void ga_transport_mpi_components(ga_transport_rec *r, const char *const *categories, int n)
{
    static const char *const local_btls[] = {"self", "vader", "sm", "smcuda"};
    static const char *const rdma_btls[] = {"uct", "ofi", "usnic", "ugni", "portals4"};
    r->mpi_pml[0] = r->mpi_btl[0] = '\0';
    r->mpi_net = 0;
    for (int i = 0; i < n; i++) {
        const char *pml = component_of(categories[i], "pml"), *btl = component_of(categories[i], "btl");
        if (*pml && strcmp(pml, "v") != 0 && strcmp(pml, "monitoring") != 0)
            list_add(r->mpi_pml, sizeof r->mpi_pml, pml);
        if (*btl)
            list_add(r->mpi_btl, sizeof r->mpi_btl, btl);
    }
    if (!r->mpi_pml[0])
        return;
    if (strcmp(r->mpi_pml, "ob1") != 0) {
        r->mpi_net = GA_NET_PLUGIN; /* UCX, or an MTL: they pick the network themselves */
        return;
    }
    char list[64];
    snprintf(list, sizeof list, "%s", r->mpi_btl);
    for (char *save = NULL, *b = strtok_r(list, ",", &save); b; b = strtok_r(NULL, ",", &save)) {
        bool local = false;
        for (size_t k = 0; k < sizeof local_btls / sizeof local_btls[0]; k++)
            local |= strcmp(b, local_btls[k]) == 0;
        if (local)
            continue;
        if (strcmp(b, "tcp") == 0)
            r->mpi_net |= GA_NET_SOCKET;
        else if (strcmp(b, "openib") == 0)
            r->mpi_net |= GA_NET_IB;
        else
            for (size_t k = 0; k < sizeof rdma_btls / sizeof rdma_btls[0]; k++)
                r->mpi_net |= strcmp(b, rdma_btls[k]) == 0 ? GA_NET_PLUGIN : 0;
    }
}

void ga_transport_forced_from_env(ga_transport_rec *r, const char *(*get)(const char *name))
{
    const char *ib = get("NCCL_IB_DISABLE"), *net = get("NCCL_NET");
    r->forced = 0;
    r->forced_text[0] = '\0';
    if (ib && *ib && strtol(ib, NULL, 0) != 0) {
        r->forced |= GA_FORCED_IB_DISABLE;
        snprintf(r->forced_text, sizeof r->forced_text, "NCCL_IB_DISABLE=%.16s", ib);
    }
    if (net && strcasecmp(net, "Socket") == 0) {
        r->forced |= GA_FORCED_NET_SOCKET;
        size_t l = strlen(r->forced_text);
        snprintf(r->forced_text + l, sizeof r->forced_text - l, "%sNCCL_NET=%s", l ? " " : "", net);
    }
}

const char *ga_expect_net_name(ga_expect_net e)
{
    return e == GA_EXPECT_NET_IB ? "ib" : e == GA_EXPECT_NET_IB_GDR ? "ib-gdr" : "any";
}

int ga_parse_expect_net(const char *arg, ga_expect_net *out, char *err, size_t errlen)
{
    static const ga_expect_net all[] = {GA_EXPECT_NET_ANY, GA_EXPECT_NET_IB, GA_EXPECT_NET_IB_GDR};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(arg, ga_expect_net_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    snprintf(err, errlen, "'%s' is not one of any, ib, ib-gdr", arg);
    return -1;
}
