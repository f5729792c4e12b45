#include "nh_ports.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nh_ib_list_parse(const char *s, nh_ib_list *l)
{
    ga_ib_list_parse(s, l);
}

int nh_ib_list_check(const char *s, char *why, size_t whylen)
{
    return ga_ib_list_check(s, why, whylen);
}

bool nh_ib_list_match(const nh_ib_list *l, const char *name, int port)
{
    return ga_ib_list_match(l, name, port);
}

const char *nh_port_role_name(int role)
{
    switch (role) {
    case NH_PORT_ROLE_COMPUTE:
        return "compute";
    case NH_PORT_ROLE_OTHER:
        return "other";
    case NH_PORT_ROLE_VF:
        return "vf";
    }
    return "";
}

/* Device names in natural order (mlx5_3 before mlx5_10), as a reader lists them. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            char *ea = NULL, *eb = NULL;
            unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
            if (x != y)
                return x < y ? -1 : 1;
            a = ea;
            b = eb;
        } else if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        else
            a++, b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

static const nh_port *sort_ports; /* qsort has no user pointer; the choice runs on rank 0 alone */

static int faster_first(const void *x, const void *y)
{
    const nh_port *a = &sort_ports[*(const int *)x], *b = &sort_ports[*(const int *)y];
    if (a->rate_gbps != b->rate_gbps)
        return a->rate_gbps > b->rate_gbps ? -1 : 1;
    int c = natural_cmp(a->hca, b->hca);
    return c ? c : a->port - b->port;
}

/* The automatic rule over the candidate ports cand[0..n): physical functions (virtual functions only where
 * the node shows none: a pod or a VM given VFs alone), of the compute link layer, the k fastest. The link
 * layer: InfiniBand when it has k ports, else Ethernet (RoCE) when it has k, else the one with more ports,
 * InfiniBand on a tie; so a DGX that lost a compute HCA keeps its 7 InfiniBand ports and is not topped up by
 * a storage port. Ports whose link layer is unreadable stay with the chosen layer (they are judged
 * unreadable). */
static void choose_fastest(const nh_record *lead, int *cand, int n, int k, nh_port_roles *out, char *how,
                           size_t howlen)
{
    int pfs = 0;
    for (int i = 0; i < n; i++)
        pfs += !lead->ports[cand[i]].is_vf;
    int m = 0, ib = 0, eth = 0;
    for (int i = 0; i < n; i++) {
        const nh_port *p = &lead->ports[cand[i]];
        if (pfs && p->is_vf)
            continue;
        cand[m++] = cand[i];
        ib += strcmp(p->link_layer, "InfiniBand") == 0;
        eth += strcmp(p->link_layer, "Ethernet") == 0;
    }
    const char *layer = k > 0 && ib >= k    ? "InfiniBand"
                        : k > 0 && eth >= k ? "Ethernet"
                        : ib >= eth         ? "InfiniBand"
                                            : "Ethernet";
    int t = 0;
    for (int i = 0; i < m; i++) {
        const char *ll = lead->ports[cand[i]].link_layer;
        if (strcmp(ll, layer) == 0 || !ll[0])
            cand[t++] = cand[i];
    }
    sort_ports = lead->ports;
    qsort(cand, (size_t)t, sizeof cand[0], faster_first);
    int take = k > 0 && t > k ? k : t;
    for (int i = 0; i < take; i++)
        out->role[cand[i]] = NH_PORT_ROLE_COMPUTE;
    const char *kind = pfs ? "" : " virtual-function";
    if (take < t)
        snprintf(how, howlen, "the %d fastest of %d %s%s ports", take, t, layer, kind);
    else
        snprintf(how, howlen, "the %d %s%s port%s", t, layer, kind, t == 1 ? "" : "s");
}

/* The names of an exact, including list that no port of the node carries (a compute HCA that is gone). */
static void note_missing(const nh_record *lead, const nh_ib_list *l, nh_port_roles *out)
{
    if (!l->exact || l->exclude)
        return;
    for (int i = 0; i < l->n; i++) {
        bool found = false;
        for (int p = 0; p < lead->port_count && p < NH_MAX_PORTS && !found; p++)
            found = strcmp(lead->ports[p].hca, l->entries[i].prefix) == 0 &&
                    (l->entries[i].port == -1 || l->entries[i].port == lead->ports[p].port);
        size_t used = strlen(out->missing);
        if (!found)
            snprintf(out->missing + used, sizeof out->missing - used, "%s%s", used ? "," : "",
                     l->entries[i].prefix);
    }
}

void nh_port_roles_choose(const nh_record *lead, const nh_expect *e, const char *ib_hcas, nh_port_roles *out)
{
    memset(out, 0, sizeof *out);
    int n = lead->port_count < NH_MAX_PORTS ? lead->port_count : NH_MAX_PORTS;
    for (int i = 0; i < n; i++)
        out->role[i] = lead->ports[i].is_vf ? NH_PORT_ROLE_VF : NH_PORT_ROLE_OTHER;
    const char *list = NULL, *source = NULL;
    if (ib_hcas && ib_hcas[0])
        list = ib_hcas, source = "--ib-hcas";
    else if (lead->ib_hca_env[0])
        list = lead->ib_hca_env, source = "NCCL_IB_HCA";
    else if (e->compute_hcas[0])
        list = e->compute_hcas, source = "the SKU's compute_hcas";
    int cand[NH_MAX_PORTS], m = 0;
    nh_ib_list l;
    nh_ib_list_parse(list, &l);
    for (int i = 0; i < n; i++)
        if (!list || nh_ib_list_match(&l, lead->ports[i].hca, lead->ports[i].port))
            cand[m++] = i;
    char rule[120] = "";
    if (list && (e->hcas <= 0 || m <= e->hcas)) {
        /* the list is the compute fabric, as NCCL will use it: virtual functions it names included */
        for (int i = 0; i < m; i++)
            out->role[cand[i]] = NH_PORT_ROLE_COMPUTE;
        snprintf(out->how, sizeof out->how, "%s %s", source, list);
    } else {
        choose_fastest(lead, cand, m, e->hcas, out, rule, sizeof rule);
        if (list)
            snprintf(out->how, sizeof out->how, "%s %s keeps %d ports, more than %d: %s", source, list, m,
                     e->hcas, rule);
        else
            snprintf(out->how, sizeof out->how,
                     "%s (no list of compute ports: --ib-hcas, NCCL_IB_HCA or the "
                     "SKU's compute_hcas)",
                     rule);
    }
    if (list)
        note_missing(lead, &l, out);
    for (int i = 0; i < n; i++) {
        out->compute += out->role[i] == NH_PORT_ROLE_COMPUTE;
        out->other += out->role[i] == NH_PORT_ROLE_OTHER;
        out->vfs += out->role[i] == NH_PORT_ROLE_VF;
    }
}
