/* Which of a node's InfiniBand / RoCE ports are the compute fabric's. A DGX H100 lists 8 compute ports beside
 * its storage and management ports (two dual-port ConnectX-7 cards, a bond, often two uncabled), a 100 GbE
 * NIC and SR-IOV virtual functions: holding every entry of class/infiniband to the compute fabric's bar fails
 * a healthy node, and counting every entry passes a node that lost a compute HCA. Pure: the node's ports in,
 * one role per port out. The rule and its sources: docs/node_health.md, "Compute ports". */
#ifndef NH_PORTS_H
#define NH_PORTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ga_ib_list.h"
#include "nh_record.h"
#include "nh_sku.h"

/* NCCL_IB_HCA's syntax, parsed and matched as NCCL 2.28 does: common/core/ga_ib_list.h, which allreduce_bw's
 * --ib-hcas uses too; these names stay for node_health's callers. */
#define NH_IB_LIST_MAX GA_IB_LIST_MAX
typedef ga_ib_list nh_ib_list;

/* Parses s as NCCL does (never fails: an over-long name is cut at 63 bytes, entries past 32 are dropped). */
void nh_ib_list_parse(const char *s, nh_ib_list *l);

/* 0 when s is a list a user means (at least one name, none longer than 63 bytes, at most 32 entries, ports
 * numbers above 0); else -1 with why. For --ib-hcas and the SKU file: NCCL itself takes any text. */
int nh_ib_list_check(const char *s, char *why, size_t whylen);

/* Whether NCCL would keep port `port` of device `name` (src/misc/utils.cc, matchIfList, with
 * net_ib.cc's `matchIfList(...) ^ searchNot`): an empty list keeps every port (none when it is "^"). */
bool nh_ib_list_match(const nh_ib_list *l, const char *name, int port);

/* The roles of one node's ports and how they were chosen. */
typedef struct {
    int role[NH_MAX_PORTS]; /* NH_PORT_ROLE_* of lead->ports[i] */
    int compute;            /* ports chosen as compute */
    int other, vfs;         /* the others: physical functions, virtual functions */
    char how[200];          /* "--ib-hcas =mlx5_0,...", "the 8 fastest InfiniBand ports", ... */
    char missing[160];      /* names of an exact list that match no port of the node, comma-separated */
} nh_port_roles;

/* Chooses the compute ports of a node's checker record: the first of `ib_hcas` (--ib-hcas, NULL or "" for
 * none), the record's NCCL_IB_HCA, the SKU's compute_hcas, else the e->hcas fastest ports of the node's
 * compute link layer (see the docs); a list that keeps more ports than e->hcas is narrowed by the same rule.
 */
void nh_port_roles_choose(const nh_record *lead, const nh_expect *e, const char *ib_hcas, nh_port_roles *out);

/* "compute", "other", "vf" (or "" unset). */
const char *nh_port_role_name(int role);

#endif
