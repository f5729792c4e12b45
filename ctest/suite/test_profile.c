/* Profiles (suite/run/profile.c): the shell-like splitting of --args, and how placeholders are filled or left
 * out with the option before them and a reason. */
#include <jansson.h>
#include <stdlib.h>

#include "../ga_test.h"
#include "fabric.h"
#include "profile.h"

/* The words of s joined with '|', or "ERR" when refused. */
static const char *split(const char *s)
{
    static char out[512];
    char err[256];
    json_t *w = json_array();
    if (suite_split_words(s, w, err, sizeof err) != 0) {
        json_decref(w);
        return "ERR";
    }
    out[0] = '\0';
    size_t i;
    json_t *v;
    json_array_foreach(w, i, v) {
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? "|" : "", json_string_value(v));
    }
    json_decref(w);
    return out;
}

/* program's filled arguments joined with ' ', the not-covered lines joined with '|' in nc. */
static const char *args(const json_t *p, const char *program, const suite_profile_env *env, char *nc,
                        size_t len)
{
    static char out[512];
    json_t *a = json_array(), *n = json_array();
    out[0] = nc[0] = '\0';
    suite_profile_args(p, program, env, a, n);
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", json_string_value(v));
    }
    json_array_foreach(n, i, v) {
        snprintf(nc + strlen(nc), len - strlen(nc), "%s%s", i ? "|" : "", json_string_value(v));
    }
    json_decref(a);
    json_decref(n);
    return out;
}

/* The placeholders of the floor across nodes (issue 25): kept until node_health has run, then filled from
 * its report's per-node ports, the baseline's fabric efficiency and its single-node figure. */
static void test_fabric(void)
{
    json_error_t je;
    json_t *p = json_loads(
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\","
        " \"steps\": {\"allreduce_bw\": [\"--min-busbw\", \"{fabric_min:allreduce_bw/busbw_at_max}\","
        " \"--min-node-busbw\", \"{sku_node_min:allreduce_bw/busbw_at_max}\","
        " \"--expect-net\", \"{fabric_net}\"]}}",
        0, &je);
    json_t *b = json_loads("{\"tolerance_pct\": 10, \"sources\": [{\"id\": \"s\"}], \"fabric\": "
                           "{\"busbw_per_line_rate\": 0.96, \"source\": \"s\"}, \"metrics\": ["
                           "{\"program\": \"allreduce_bw\", \"name\": \"busbw_at_max\", \"value\": 370,"
                           " \"higher_is_better\": true, \"world_size\": 8, \"node_count\": 1}]}",
                           0, &je);
    char err[256];
    CHECK(p && b && suite_profile_validate(p, err, sizeof err) == 0);
    suite_profile_env env = {
        .expect_gpus = 8, .baseline = b, .tolerance_pct = -1, .node_count = 2, .world_size = 16, .gpu = true};
    /* two nodes: the floor across nodes waits for node_health; the per-node sweep gets the SKU's figure */
    json_t *a = json_array(), *n = json_array();
    suite_profile_args(p, "allreduce_bw", &env, a, n);
    CHECK(suite_profile_args_deferred(a) && json_array_size(n) == 0);
    CHECK_STR(json_string_value(json_array_get(a, 1)), "{fabric_min:allreduce_bw/busbw_at_max}");
    CHECK_STR(json_string_value(json_array_get(a, 3)), "333"); /* 370 less 10% */

    /* node_health: node 1 has 8 NDR ports and a 100 Gb/s storage port (its SKU says 8 HCAs: the storage
     * port is not counted); node 2 has one of its 8 ports at 200 Gb/s */
    json_t *nh = json_loads(
        "{\"world_size\": 16, \"node_count\": 2, \"summary\": {\"fabric\": {\"nodes\": ["
        "{\"host\": \"n1\", \"expect_hcas\": 8, \"require_peermem\": true, \"ports_active\": ["
        "{\"rate_gbps\": 400}, {\"rate_gbps\": 400}, {\"rate_gbps\": 400}, {\"rate_gbps\": 100},"
        "{\"rate_gbps\": 400}, {\"rate_gbps\": 400}, {\"rate_gbps\": 400}, {\"rate_gbps\": 400},"
        "{\"rate_gbps\": 400}]},"
        "{\"host\": \"n2\", \"expect_hcas\": 8, \"require_peermem\": true, \"ports_active\": ["
        "{\"rate_gbps\": 400}, {\"rate_gbps\": 400}, {\"rate_gbps\": 400}, {\"rate_gbps\": 200},"
        "{\"rate_gbps\": 400}, {\"rate_gbps\": 400}, {\"rate_gbps\": 400}, {\"rate_gbps\": 400}]}]}}}",
        0, &je);
    suite_fabric_facts f;
    suite_fabric_facts_from(nh, "unused", &f);
    CHECK(f.have && f.nodes == 2 && f.nodes_with_hca == 2 && f.gdr_required && f.ranks_per_node == 8);
    CHECKF(f.min_rate_gbps == 3000 && strcmp(f.min_host, "n2") == 0, "%g %s", f.min_rate_gbps, f.min_host);
    env.fabric = &f;
    json_t *filled = suite_profile_fill_deferred(a, &env, "allreduce_bw", n);
    char line[256] = "";
    size_t i;
    json_t *v;
    json_array_foreach(filled, i, v) {
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", i ? " " : "", json_string_value(v));
    }
    /* 3000 Gb/s = 375 GB/s x 0.96 = 360, under the 370 of one node, less 10%: 324; then the latency of a
     * ring of 16 ranks on 2 nodes at 1 GiB (allreduce_bw's default on a GPU): 1.9 x (8.4 + 28 x 6 + 2 x 14)
     * us = 388 us beside 6.2 ms of bandwidth term: 304.9 (issue 40, finding 3) */
    CHECK_STR(line, "--min-busbw 304.9 --min-node-busbw 333 --expect-net ib-gdr");
    json_decref(filled);

    /* 8 NDR ports everywhere: 384 GB/s is above what one node's NVLink ring reaches, so 370 caps it */
    json_t *port = json_array_get(
        json_object_get(
            json_array_get(
                json_object_get(json_object_get(json_object_get(nh, "summary"), "fabric"), "nodes"), 1),
            "ports_active"),
        3);
    json_object_set_new(port, "rate_gbps", json_real(400));
    suite_fabric_facts_from(nh, "unused", &f);
    filled = suite_profile_fill_deferred(a, &env, "allreduce_bw", n);
    CHECK_STR(json_string_value(json_array_get(filled, 1)), "312.9"); /* 333 less the ring's latency */
    json_decref(filled);

    /* Issue 40, finding 3: the 333 GB/s two-node bandwidth figure is no floor for 64 nodes at 1 GiB, where
     * the ring's 2(n-1) steps of latency weigh more than its bandwidth term. A healthy 64-node world
     * measuring 300 GB/s at 1 GiB must pass the floor. (Before the fix: --min-busbw 333, and it failed.) */
    env.node_count = 64;
    env.world_size = 512;
    f.nodes = 64;
    filled = suite_profile_fill_deferred(a, &env, "allreduce_bw", n);
    double world64 = atof(json_string_value(json_array_get(filled, 1)));
    CHECKF(world64 > 50 && world64 < 300, "64 nodes at 1 GiB: --min-busbw %g", world64);
    json_decref(filled);
    /* ... while at 8 GiB on two nodes the bandwidth term dominates: the floor is within 1 % of 333 */
    env.node_count = 2;
    env.world_size = 16;
    f.nodes = 2;
    json_t *a8 = json_deep_copy(a);
    json_array_append_new(a8, json_string("-e"));
    json_array_append_new(a8, json_string("{gpu:8G}"));
    filled = suite_profile_fill_deferred(a8, &env, "allreduce_bw", n);
    double two8 = atof(json_string_value(json_array_get(filled, 1)));
    CHECKF(two8 > 333 * 0.99 && two8 < 333, "2 nodes at 8 GiB: --min-busbw %g", two8);
    json_decref(filled);
    json_decref(a8);
    /* the model itself: one node or one rank is left alone; more nodes or a smaller size, a lower floor */
    CHECK(suite_ring_allreduce_floor(333, 1 << 30, 8, 1) == 333);
    CHECK(suite_ring_allreduce_floor(333, 1 << 30, 512, 64) <
          suite_ring_allreduce_floor(333, 1 << 30, 16, 2));
    CHECK(suite_ring_allreduce_floor(333, 1 << 20, 16, 2) < suite_ring_allreduce_floor(333, 1 << 30, 16, 2));

    /* no node_health report: both left out, and said */
    suite_fabric_facts_from(NULL, "node_health left no report (not run)", &f);
    filled = suite_profile_fill_deferred(a, &env, "allreduce_bw", n);
    CHECK(json_array_size(filled) == 2);
    CHECK_STR(json_string_value(json_array_get(n, 0)),
              "no --min-busbw for allreduce_bw across nodes: node_health left no report (not run) (the floor "
              "across nodes is derived from its HCA rates)");
    CHECK_STR(json_string_value(json_array_get(n, 1)),
              "no --expect-net for allreduce_bw: node_health left no report (not run)");
    json_decref(filled);
    json_decref(nh);
    json_decref(a);
    json_decref(n);

    /* one node: the floor is the single-node figure, and nothing is expected between nodes */
    env.node_count = 1;
    env.world_size = 8;
    env.fabric = NULL;
    a = json_array();
    n = json_array();
    suite_profile_args(p, "allreduce_bw", &env, a, n);
    CHECK(!suite_profile_args_deferred(a) && json_array_size(a) == 4 && json_array_size(n) == 0);
    CHECK_STR(json_string_value(json_array_get(a, 1)), "333");
    json_decref(a);
    json_decref(n);
    json_decref(p);
    json_decref(b);
}

/* {compute_hcas} (issue 40, finding 10): the compute ports node_health chose, by NCCL's names, handed to
 * allreduce_bw's --ib-hcas when every node's agree; left out, and said, when they differ or node_health did
 * not run. (Before: the placeholder was unknown, and the profile did not validate.) */
static void test_compute_hcas(void)
{
    json_error_t je;
    json_t *p = json_loads("{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\","
                           " \"steps\": {\"allreduce_bw\": [\"--expect-net\", \"{fabric_net}\","
                           " \"--ib-hcas\", \"{compute_hcas}\", \"-v\"]}}",
                           0, &je);
    char err[256] = "";
    CHECKF(p && suite_profile_validate(p, err, sizeof err) == 0, "%s", err);
    suite_profile_env env = {
        .expect_gpus = 8, .tolerance_pct = -1, .node_count = 2, .world_size = 16, .gpu = true};
    json_t *a = json_array(), *n = json_array();
    suite_profile_args(p, "allreduce_bw", &env, a, n);
    CHECK(suite_profile_args_deferred(a) && json_array_size(n) == 0);
    CHECK_STR(json_string_value(json_array_get(a, 3)), "{compute_hcas}"); /* waits for node_health */

    json_t *nh = json_loads("{\"world_size\": 16, \"node_count\": 2, \"summary\": {\"fabric\": {\"nodes\": ["
                            "{\"host\": \"n1\", \"expect_hcas\": 2, \"ports_active\": [{\"rate_gbps\": 400}],"
                            " \"compute_port_names\": [\"mlx5_0:1\", \"mlx5_3:1\"]},"
                            "{\"host\": \"n2\", \"expect_hcas\": 2, \"ports_active\": [{\"rate_gbps\": 400}],"
                            " \"compute_port_names\": [\"mlx5_3:1\", \"mlx5_0:1\"]}]}}}",
                            0, &je);
    suite_fabric_facts f;
    suite_fabric_facts_from(nh, "unused", &f);
    env.fabric = &f;
    json_t *filled = suite_profile_fill_deferred(a, &env, "allreduce_bw", n);
    CHECK(json_array_size(filled) == 5 && json_array_size(n) == 0);
    CHECK_STR(json_string_value(json_array_get(filled, 2)), "--ib-hcas");
    CHECK_STR(json_string_value(json_array_get(filled, 3)), "=mlx5_0:1,mlx5_3:1");
    json_decref(filled);

    /* n2 names another port: no one list fits both, the option is left out and the line says why */
    json_t *names = json_object_get(
        json_array_get(json_object_get(json_object_get(json_object_get(nh, "summary"), "fabric"), "nodes"),
                       1),
        "compute_port_names");
    json_array_set_new(names, 0, json_string("mlx5_4:1"));
    suite_fabric_facts_from(nh, "unused", &f);
    filled = suite_profile_fill_deferred(a, &env, "allreduce_bw", n);
    CHECK(json_array_size(filled) == 3 && strcmp(json_string_value(json_array_get(filled, 2)), "-v") == 0);
    CHECK_STR(
        json_string_value(json_array_get(n, 0)),
        "NCCL's devices not compared with the compute ports for allreduce_bw: nodes differ (n2's compute "
        "ports are not n1's)");
    json_decref(filled);
    json_array_clear(n);

    /* no node_health report */
    suite_fabric_facts_from(NULL, "node_health left no report (not run)", &f);
    filled = suite_profile_fill_deferred(a, &env, "allreduce_bw", n);
    CHECK(json_array_size(filled) == 1);
    CHECK_STR(
        json_string_value(json_array_get(n, 1)),
        "NCCL's devices not compared with the compute ports for allreduce_bw: node_health left no report "
        "(not run)");
    json_decref(filled);
    json_decref(nh);
    json_decref(a);
    json_decref(n);

    /* one node: nothing goes between nodes, left out silently */
    env.node_count = 1;
    env.world_size = 8;
    env.fabric = NULL;
    a = json_array();
    n = json_array();
    suite_profile_args(p, "allreduce_bw", &env, a, n);
    CHECK(json_array_size(a) == 1 && json_array_size(n) == 0);
    json_decref(a);
    json_decref(n);
    json_decref(p);
}

int main(void)
{
    test_fabric();
    test_compute_hcas();
    CHECK_STR(split("  -b 8  -e 1G "), "-b|8|-e|1G");
    CHECK_STR(split("--tag 'a b' \"c \\\"d\\\" \\$x\" e\\ f"), "--tag|a b|c \"d\" $x|e f");
    CHECK_STR(split("''"), "");                       /* an empty word stays a word */
    CHECK_STR(split("$HOME `id` *"), "$HOME|`id`|*"); /* nothing is expanded */
    CHECK_STR(split("a'b'\"c\"d"), "abcd");
    CHECK_STR(split("'a"), "ERR");
    CHECK_STR(split("\"a"), "ERR");
    CHECK_STR(split("a\\"), "ERR");
    CHECK_STR(split(""), "");

    json_error_t je;
    json_t *p = json_loads("{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\","
                           " \"steps\": {\"env_audit\": [\"--expect-gpus\", \"{expect_gpus}\", \"-v\"],"
                           " \"allreduce_bw\": [\"--min-busbw\", \"{sku_min:allreduce_bw/busbw_at_max}\","
                           " \"-e\", \"{gpu:8G}\"],"
                           " \"mem_bw\": [\"--min-efficiency\", \"{sku_eff:mem_bw/GBps_device_copy}\"],"
                           " \"gemm_flops\": [\"--duration\", \"{burn_s}\"]}}",
                           0, &je);
    char err[256], nc[1024];
    CHECK(p && suite_profile_validate(p, err, sizeof err) == 0);
    json_t *b = json_loads("{\"tolerance_pct\": 10, \"metrics\": ["
                           "{\"program\": \"allreduce_bw\", \"name\": \"busbw_at_max\", \"value\": 400,"
                           " \"higher_is_better\": true, \"world_size\": 8, \"node_count\": 1},"
                           "{\"program\": \"mem_bw\", \"name\": \"GBps_device_copy\", \"value\": 3000,"
                           " \"higher_is_better\": true, \"peak\": 3600}]}",
                           0, &je);
    suite_profile_env env = {.expect_gpus = 8,
                             .baseline = b,
                             .tolerance_pct = -1,
                             .node_count = 1,
                             .world_size = 8,
                             .burn_s = 90,
                             .gpu = true};
    CHECK_STR(args(p, "env_audit", &env, nc, sizeof nc), "--expect-gpus 8 -v");
    CHECK_STR(args(p, "allreduce_bw", &env, nc, sizeof nc), "--min-busbw 360 -e 8G");
    CHECK_STR(nc, "");
    CHECK_STR(args(p, "mem_bw", &env, nc, sizeof nc), "--min-efficiency 75%"); /* 3000 less 10% of 3600 */
    CHECK_STR(args(p, "gemm_flops", &env, nc, sizeof nc), "--duration 90");
    env.tolerance_pct = 20; /* --tolerance wins over the file's */
    CHECK_STR(args(p, "allreduce_bw", &env, nc, sizeof nc), "--min-busbw 320 -e 8G");
    /* Not rounded away (issue 26: 0.6376 became 0.6): 0.7084 less 10% is 0.63756, written so it reads back
     * exactly; and a figure's own tolerance wins over --tolerance and the file's. */
    json_object_set_new(json_array_get(json_object_get(b, "metrics"), 0), "value", json_real(0.7084));
    env.tolerance_pct = -1;
    CHECK_STR(args(p, "allreduce_bw", &env, nc, sizeof nc), "--min-busbw 0.63756 -e 8G");
    json_object_set_new(json_array_get(json_object_get(b, "metrics"), 0), "tolerance_pct", json_integer(50));
    env.tolerance_pct = 20;
    CHECK_STR(args(p, "allreduce_bw", &env, nc, sizeof nc), "--min-busbw 0.3542 -e 8G");
    json_object_del(json_array_get(json_object_get(b, "metrics"), 0), "tolerance_pct");
    json_object_set_new(json_array_get(json_object_get(b, "metrics"), 0), "value", json_integer(400));

    /* What cannot be filled is left out with its option, and said. */
    env.node_count = 4;
    env.gpu = false;
    CHECK_STR(args(p, "allreduce_bw", &env, nc, sizeof nc), "");
    CHECK_STR(nc,
              "no --min-busbw for allreduce_bw: the baseline figure allreduce_bw/busbw_at_max holds for 1 "
              "node(s), this run has 4|no -e 8G for allreduce_bw: no GPU (host path)");
    env.expect_gpus = 0;
    env.expect_gpus_why = "no slots";
    CHECK_STR(args(p, "env_audit", &env, nc, sizeof nc), "-v");
    CHECK_STR(nc, "no --expect-gpus: no slots");
    env.baseline = NULL;
    env.no_baseline_why = "GPU model unknown";
    CHECK_STR(args(p, "mem_bw", &env, nc, sizeof nc), "");
    CHECK_STR(
        nc, "no SKU thresholds: GPU model unknown|relative only: mem_bw, each GPU against its peers with no "
            "floor (no SKU threshold)");
    /* Pairs need two ranks: a one-rank job runs the other patterns and says so (issue 30: a one-GPU machine
     * ran the standard profile into allreduce_bw's usage error); with no pattern left, the option goes too.
     */
    json_t *pp = json_loads("{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\","
                            " \"steps\": {\"allreduce_bw\": [\"--pattern\", \"{patterns:world,node,pairs}\"],"
                            " \"mem_bw\": [\"--pattern\", \"{patterns:pairs}\", \"-v\"]}}",
                            0, &je);
    CHECK(pp && suite_profile_validate(pp, err, sizeof err) == 0);
    env.world_size = 2;
    CHECK_STR(args(pp, "allreduce_bw", &env, nc, sizeof nc), "--pattern world,node,pairs");
    CHECK_STR(nc, "");
    env.world_size = 0; /* unknown before the run (Slurm): kept, allreduce_bw judges */
    CHECK_STR(args(pp, "allreduce_bw", &env, nc, sizeof nc), "--pattern world,node,pairs");
    env.world_size = 1;
    CHECK_STR(args(pp, "allreduce_bw", &env, nc, sizeof nc), "--pattern world,node");
    CHECK_STR(nc, "no pairs isolation for allreduce_bw: one rank, nothing to pair it with");
    CHECK_STR(args(pp, "mem_bw", &env, nc, sizeof nc), "-v");
    CHECK_STR(nc, "no pairs isolation for mem_bw: one rank, nothing to pair it with");
    json_decref(pp);
    /* Rails (issue 46): two nodes of more than one GPU each; left out on one node, with the node count
     * unknown, and (said) with one rank a node. */
    pp = json_loads("{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\","
                    " \"steps\": {\"allreduce_bw\": [\"--pattern\", \"{patterns:world,pairs,rails}\"]}}",
                    0, &je);
    CHECK(pp && suite_profile_validate(pp, err, sizeof err) == 0);
    int nodes_before = env.node_count;
    env.node_count = 2, env.world_size = 4;
    CHECK_STR(args(pp, "allreduce_bw", &env, nc, sizeof nc), "--pattern world,pairs,rails");
    CHECK_STR(nc, "");
    env.node_count = 2, env.world_size = 2;
    CHECK_STR(args(pp, "allreduce_bw", &env, nc, sizeof nc), "--pattern world,pairs");
    CHECK_STR(nc, "no rails for allreduce_bw: one rank a node, the pairs are its rails");
    env.node_count = 1, env.world_size = 8;
    CHECK_STR(args(pp, "allreduce_bw", &env, nc, sizeof nc), "--pattern world,pairs");
    env.node_count = 0;
    CHECK_STR(args(pp, "allreduce_bw", &env, nc, sizeof nc), "--pattern world,pairs");
    env.node_count = nodes_before;
    json_decref(pp);
    /* mem_bw's GPU-pair copy matrix (issue 46): --p2p, held to the SKU's per-pair figure, where the nodes
     * have more than one GPU; left out, said, with one GPU a node or the GPUs per node unknown. */
    pp = json_loads("{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\","
                    " \"steps\": {\"mem_bw\": [\"{multi_gpu:--p2p}\", \"--min-p2p\","
                    " \"{p2p_min:mem_bw/GBps_p2p_pair}\", \"-v\"]}}",
                    0, &je);
    json_t *bp = json_loads("{\"metrics\": [{\"program\": \"mem_bw\", \"name\": \"GBps_p2p_pair\","
                            " \"value\": 360, \"higher_is_better\": true}]}",
                            0, &je);
    CHECK(pp && bp && suite_profile_validate(pp, err, sizeof err) == 0);
    suite_profile_env pe = {.expect_gpus = 8,
                            .baseline = bp,
                            .tolerance_pct = -1,
                            .node_count = 2,
                            .world_size = 16,
                            .gpu = true};
    CHECK_STR(args(pp, "mem_bw", &pe, nc, sizeof nc), "--p2p --min-p2p 324 -v");
    CHECK_STR(nc, "");
    pe.expect_gpus = 1, pe.world_size = 2;
    CHECK_STR(args(pp, "mem_bw", &pe, nc, sizeof nc), "-v");
    CHECK_STR(nc, "no GPU-pair copy matrix (--p2p) for mem_bw: one GPU a node");
    pe.expect_gpus = 0, pe.node_count = 0, pe.world_size = 0;
    CHECK_STR(args(pp, "mem_bw", &pe, nc, sizeof nc), "-v");
    CHECK_STR(nc, "no GPU-pair copy matrix (--p2p) for mem_bw: GPUs per node unknown");
    json_decref(pp);
    json_decref(bp);
    json_t *none = json_array();
    CHECK(suite_profile_args(p, "ddp_smoke", &env, none, none) == -1 && json_array_size(none) == 0);
    json_decref(none);

    /* Refused shapes. */
    const char *bad[] = {
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\", \"steps\": "
        "{\"mem_bw\": [\"{sku_min:}\"]}}",
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\", \"steps\": "
        "{\"mem_bw\": [\"{expect_gpus:3}\"]}}",
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 2, \"name\": \"t\", \"steps\": "
        "{\"mem_bw\": []}}",
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"\", \"steps\": "
        "{\"mem_bw\": []}}",
        "{\"schema\": \"gpuaccept-profile\", \"schema_version\": 1, \"name\": \"t\", \"steps\": "
        "{\"mem_bw\": []}, \"not_covered\": [1]}",
        NULL};
    for (const char **s = bad; *s; s++) {
        json_t *q = json_loads(*s, 0, &je);
        CHECKF(q && suite_profile_validate(q, err, sizeof err) != 0, "refused: %s", *s);
        json_decref(q);
    }
    for (const char *name = "quick"; name; name = name[0] == 'q'   ? "standard"
                                                  : name[0] == 's' ? "full"
                                                                   : NULL) {
        json_t *q = NULL;
        char src[64];
        CHECKF(suite_profile_load(name, &q, src, sizeof src, err, sizeof err) == 0, "built-in %s: %s", name,
               err);
        CHECK_STR(src, "built-in");
        json_decref(q);
    }
    json_decref(p);
    json_decref(b);
    return ga_test_finish();
}
