/* nh_ports: NCCL_IB_HCA's syntax read as NCCL 2.28 reads it (src/misc/utils.cc parseStringList, matchIfList;
 * src/transport/net_ib.cc '^' then '='), and the automatic choice of compute ports on shapes the case folders
 * do not hold (a pod given VFs alone, a RoCE cluster, storage at the compute ports' rate). */
#include <string.h>

#include "ga_test.h"
#include "nh_ports.h"

static void test_list_syntax(void)
{
    nh_ib_list l;
    nh_ib_list_parse("mlx5_1", &l);
    /* a prefix, as NCCL matches it: mlx5_1 keeps mlx5_10 and mlx5_11 too */
    CHECK(l.n == 1 && nh_ib_list_match(&l, "mlx5_1", 1) && nh_ib_list_match(&l, "mlx5_10", 1) &&
          !nh_ib_list_match(&l, "mlx5_2", 1));
    nh_ib_list_parse("=mlx5_1", &l);
    CHECK(l.exact && nh_ib_list_match(&l, "mlx5_1", 1) && !nh_ib_list_match(&l, "mlx5_10", 1));
    nh_ib_list_parse("^=mlx5_1,mlx5_2:2", &l);
    CHECK(l.exclude && l.exact && l.n == 2 && l.entries[1].port == 2);
    CHECK(!nh_ib_list_match(&l, "mlx5_1", 1) && nh_ib_list_match(&l, "mlx5_10", 1) &&
          nh_ib_list_match(&l, "mlx5_2", 1) && !nh_ib_list_match(&l, "mlx5_2", 2));
    nh_ib_list_parse("mlx5_0:1,,:2,mlx5_3", &l); /* an entry without a name is no entry */
    CHECK(l.n == 2 && strcmp(l.entries[1].prefix, "mlx5_3") == 0 && l.entries[0].port == 1);
    nh_ib_list_parse("", &l); /* no list: every port */
    CHECK(nh_ib_list_match(&l, "anything", 1));
    nh_ib_list_parse("^", &l); /* matchIfList's "no list" is true, and '^' turns it: none */
    CHECK(!nh_ib_list_match(&l, "mlx5_0", 1));
    char why[160];
    CHECK(nh_ib_list_check("=mlx5_0,mlx5_3:1", why, sizeof why) == 0);
    CHECK(nh_ib_list_check("mlx5_0:x", why, sizeof why) == -1 && strstr(why, "port"));
    CHECK(nh_ib_list_check("^", why, sizeof why) == -1);
}

static void add(nh_record *r, const char *hca, const char *layer, double rate, int vf)
{
    nh_port *p = &r->ports[r->port_count++];
    memset(p, 0, sizeof *p);
    snprintf(p->hca, sizeof p->hca, "%s", hca);
    snprintf(p->link_layer, sizeof p->link_layer, "%s", layer);
    p->port = 1;
    p->state = 4;
    p->rate_gbps = rate;
    p->is_vf = vf;
}

static int role_of(const nh_record *r, const nh_port_roles *roles, const char *hca)
{
    for (int i = 0; i < r->port_count; i++)
        if (strcmp(r->ports[i].hca, hca) == 0)
            return roles->role[i];
    return -1;
}

static void test_automatic(void)
{
    nh_expect e = nh_expect_none();
    e.hcas = 2;
    nh_port_roles roles;
    static nh_record r;
    /* a pod given two VFs alone: they are its compute ports */
    memset(&r, 0, sizeof r);
    add(&r, "mlx5_20", "InfiniBand", 400, 1);
    add(&r, "mlx5_21", "InfiniBand", 400, 1);
    nh_port_roles_choose(&r, &e, NULL, &roles);
    CHECK(roles.compute == 2 && roles.vfs == 0);
    /* RoCE compute beside an InfiniBand storage port: Ethernet has the 2 expected ports */
    memset(&r, 0, sizeof r);
    add(&r, "mlx5_0", "Ethernet", 400, 0);
    add(&r, "mlx5_1", "Ethernet", 400, 0);
    add(&r, "mlx5_2", "InfiniBand", 200, 0);
    nh_port_roles_choose(&r, &e, NULL, &roles);
    CHECK(roles.compute == 2 && role_of(&r, &roles, "mlx5_2") == NH_PORT_ROLE_OTHER);
    /* a node that lost one of its two InfiniBand compute ports, beside an Ethernet storage port: neither
     * layer has 2 ports, InfiniBand wins the tie, and the storage port does not fill the gap */
    memset(&r, 0, sizeof r);
    add(&r, "mlx5_0", "InfiniBand", 400, 0);
    add(&r, "mlx5_1", "Ethernet", 200, 0);
    nh_port_roles_choose(&r, &e, NULL, &roles);
    CHECK(roles.compute == 1 && role_of(&r, &roles, "mlx5_0") == NH_PORT_ROLE_COMPUTE);
    /* more ports than expected on one layer: the fastest, ties in natural order (mlx5_3 before mlx5_10) */
    memset(&r, 0, sizeof r);
    add(&r, "mlx5_10", "InfiniBand", 400, 0);
    add(&r, "mlx5_3", "InfiniBand", 400, 0);
    add(&r, "mlx5_4", "InfiniBand", 400, 0);
    add(&r, "mlx5_2", "InfiniBand", 100, 0);
    nh_port_roles_choose(&r, &e, NULL, &roles);
    CHECK(role_of(&r, &roles, "mlx5_3") == NH_PORT_ROLE_COMPUTE &&
          role_of(&r, &roles, "mlx5_4") == NH_PORT_ROLE_COMPUTE &&
          role_of(&r, &roles, "mlx5_10") == NH_PORT_ROLE_OTHER);
    /* an exact list naming a device the node lacks: named in `missing` */
    nh_port_roles_choose(&r, &e, "=mlx5_3,mlx5_9", &roles);
    CHECK(roles.compute == 1 && strcmp(roles.missing, "mlx5_9") == 0);
}

int main(void)
{
    test_list_syntax();
    test_automatic();
    return ga_test_finish();
}
