/* A list of InfiniBand / RoCE ports in NCCL_IB_HCA's syntax, parsed and matched exactly as NCCL 2.28 does.
 * node_health chooses a node's compute ports with it (--ib-hcas, NCCL_IB_HCA, the SKU's compute_hcas), and
 * allreduce_bw compares the devices NCCL used between nodes with it (--ib-hcas). Pure. */
#ifndef GA_IB_LIST_H
#define GA_IB_LIST_H

#include <stdbool.h>
#include <stddef.h>

#define GA_IB_LIST_MAX 32 /* entries NCCL keeps of NCCL_IB_HCA (MAX_IB_DEVS in net_ib.cc) */

/* A list in NCCL_IB_HCA's syntax, as NCCL 2.28 parses it (src/transport/net_ib.cc, ncclIbInitDevices: a
 * leading '^' excludes, then a leading '=' matches names exactly, else as prefixes; src/misc/utils.cc,
 * parseStringList: entries "name" or "name:port" separated by commas). */
typedef struct {
    struct {
        char prefix[64];
        int port; /* -1: any port */
    } entries[GA_IB_LIST_MAX];
    int n;
    bool exclude, exact;
} ga_ib_list;

/* Parses s as NCCL does (never fails: an over-long name is cut at 63 bytes, entries past 32 are dropped). */
void ga_ib_list_parse(const char *s, ga_ib_list *l);

/* 0 when s is a list a user means (at least one name, none longer than 63 bytes, at most 32 entries, ports
 * numbers above 0); else -1 with why. For --ib-hcas and the SKU file: NCCL itself takes any text. */
int ga_ib_list_check(const char *s, char *why, size_t whylen);

/* Whether NCCL would keep port `port` of device `name` (src/misc/utils.cc, matchIfList, with
 * net_ib.cc's `matchIfList(...) ^ searchNot`): an empty list keeps every port (none when it is "^"). */
bool ga_ib_list_match(const ga_ib_list *l, const char *name, int port);

/* Whether the list keeps a network device as NCCL's IB network names it in its log: "mlx5_0:1" (device and
 * port, net_ib.cc's "NET/IB : Using [0]mlx5_0:1/IB") or a virtual device of merged ports "mlx5_2+mlx5_3"
 * (net_ib.cc:626, "Made virtual device ... name="), kept when every one of its devices is; a Data Direct
 * device "mlx5_0_dma:1" (net_ib.cc:785) by its device's own name, as NCCL matched it (net_ib.cc:740). */
bool ga_ib_list_keeps_device(const ga_ib_list *l, const char *device);

#endif
