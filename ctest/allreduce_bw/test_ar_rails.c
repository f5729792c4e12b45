/* The rails' analysis (ar_rails.c) on described clusters: 64 nodes of 8 GPUs, each GPU i behind NIC mlx5_i,
 * rounds from the pairs' real schedule, each rail pair at the speed of its slower end (or its cable's). One
 * slow rail end is named alone with its node, GPU and NIC; a slow cable names its two ends; fault-free and
 * noisy fault-free clusters name nothing; two nodes of two GPUs never blame a cable on one other pair. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_rails.h"
#include "ga_test.h"

typedef struct {
    int nodes, locals, rounds;
    int slow_node, slow_local; /* a slow rail end (-1: none) */
    int cable[2], cable_local; /* a slow cable between two nodes' GPU cable_local (-1: none) */
    double noise;              /* relative spread of every figure, deterministic */
} cluster;

static double figure(const cluster *c, int a, int b, int local, unsigned *seed)
{
    double bw = 40.0;
    if ((a == c->slow_node || b == c->slow_node) && local == c->slow_local)
        bw = 12.0;
    if (local == c->cable_local &&
        ((a == c->cable[0] && b == c->cable[1]) || (a == c->cable[1] && b == c->cable[0])))
        bw = 15.0;
    *seed = *seed * 1103515245u + 12345u;
    return bw * (1.0 - c->noise * (double)((*seed >> 16) % 1000) / 1000.0);
}

/* Judges the described cluster; returns the findings (caller frees). */
static ga_findings judge(const cluster *c, json_t **part)
{
    ar_rail_end *ends = calloc((size_t)(c->nodes * c->locals), sizeof *ends);
    ga_pair *pairs = calloc((size_t)(c->rounds * c->nodes * c->locals), sizeof *pairs);
    int(*sched)[2] = malloc((size_t)c->nodes * sizeof *sched);
    for (int n = 0; n < c->nodes; n++)
        for (int l = 0; l < c->locals; l++) {
            ar_rail_end *e = &ends[ar_rail_member(n, l, c->locals)];
            *e = (ar_rail_end){.node = n, .local = l, .rank = n * c->locals + l, .gpu = l};
            snprintf(e->host, sizeof e->host, "node%d", n);
            snprintf(e->nic, sizeof e->nic, "mlx5_%d", l);
        }
    int n_pairs = 0;
    unsigned seed = 7;
    for (int r = 0; r < c->rounds; r++) {
        int np = ga_pairs_schedule(c->nodes, r, sched);
        for (int p = 0; p < np; p++)
            for (int l = 0; l < c->locals; l++) {
                ga_pair *pr = &pairs[n_pairs++];
                pr->round = r;
                for (int s = 0; s < 2; s++) {
                    pr->member[s] = ar_rail_member(sched[p][s], l, c->locals);
                    snprintf(pr->host[s], sizeof pr->host[s], "node%d", sched[p][s]);
                    pr->rank[s] = pr->member[s];
                }
                for (int k = 0; k < 3; k++) /* the round and two remeasurements */
                    ga_pairs_add_measurement(pr, figure(c, sched[p][0], sched[p][1], l, &seed), -1);
            }
    }
    ar_rails_outcome out = {pairs, n_pairs, c->nodes, c->locals, c->rounds, false, ends};
    ga_findings f;
    ga_findings_init(&f);
    CHECK(ar_rails_judge(&out, 0.10, &f, part) >= 0);
    free(ends);
    free(pairs);
    free(sched);
    return f;
}

static void check_slow_end(void)
{
    cluster c = {64, 8, 3, 17, 3, {-1, -1}, -1, 0.05};
    json_t *part = NULL;
    ga_findings f = judge(&c, &part);
    CHECKF(f.count == 1, "%zu findings", f.count);
    if (f.count >= 1) {
        CHECK_STR(f.items[0].code, "COMM_SLOW_RAIL");
        CHECKF(strncmp(f.items[0].message, "node17 GPU 3 (mlx5_3):", 22) == 0, "%s", f.items[0].message);
        CHECK(f.items[0].node_index == 17 && f.items[0].gpu == 3 && f.items[0].world_rank == 17 * 8 + 3);
        CHECK_STR(f.items[0].part, "GPU 3 (mlx5_3)"); /* what the summary shows under node17 */
    }
    json_t *slow = json_array_get(json_object_get(part, "slow_rails"), 0);
    CHECK(json_array_size(json_object_get(part, "slow_rails")) == 1 &&
          json_integer_value(json_object_get(slow, "gpu")) == 3 &&
          strcmp(json_string_value(json_object_get(slow, "nic")), "mlx5_3") == 0);
    CHECK(json_array_size(json_object_get(part, "pairs")) == 3 * 32 * 8);
    json_decref(part);
    ga_findings_free(&f);
}

static void check_slow_cable(void)
{
    cluster c = {64, 8, 63, -1, -1, {4, 9}, 2, 0.05}; /* every pair once: nodes 4 and 9 meet in one round */
    ga_findings f = judge(&c, NULL);
    CHECKF(f.count == 1, "%zu findings", f.count);
    if (f.count >= 1) {
        CHECKF(strstr(f.items[0].message, "node4 GPU 2 (mlx5_2) <-> node9 GPU 2 (mlx5_2)") ||
                   strstr(f.items[0].message, "node9 GPU 2 (mlx5_2) <-> node4 GPU 2 (mlx5_2)"),
               "%s", f.items[0].message);
        CHECK_STR(f.items[0].part, "GPU 2 (mlx5_2)"); /* one end's part, the other on peer_host */
        CHECKF(strcmp(f.items[0].peer_host, strcmp(f.items[0].host, "node4") == 0 ? "node9" : "node4") == 0,
               "%s <-> %s", f.items[0].host, f.items[0].peer_host);
    }
    ga_findings_free(&f);
}

static void check_fault_free(void)
{
    for (int noise = 0; noise <= 1; noise++) {
        cluster c = {64, 8, 3, -1, -1, {-1, -1}, -1, noise ? 0.08 : 0};
        ga_findings f = judge(&c, NULL);
        CHECKF(f.count == 0, "noise %d: %zu findings", noise, f.count);
        ga_findings_free(&f);
    }
    /* two nodes of two GPUs: one rail pair slow, one other to compare with: no spread, no cable named */
    cluster two = {2, 2, 1, -1, -1, {0, 1}, 1, 0};
    json_t *part = NULL;
    ga_findings f = judge(&two, &part);
    CHECKF(f.count == 0, "%zu findings", f.count);
    CHECK(json_is_false(json_object_get(part, "links_judged")));
    json_decref(part);
    ga_findings_free(&f);
}

int main(void)
{
    check_slow_end();
    check_slow_cable();
    check_fault_free();
    return ga_test_finish();
}
