/* The dry run's estimates (suite/run/estimate.c, each program's model through the registry, allreduce_bw's
 * plan bench/allreduce_bw/ar_estimate*.c): small cases computed by hand with figures
 * chosen for it (every latency and set-up 0, 1 GB/s), then the properties of the real figures at 512 nodes.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ga_test.h"
#include "ar_coll.h"
#include "ar_estimate.h"
#include "estimate.h"
#include "estimate_model.h"

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1))

/* Figures a case can be computed by hand with: an allreduce of S bytes among n ranks takes 2(n-1)/n S / 1e9
 * s, nothing else takes time. */
static est_figures hand_figures(void)
{
    est_figures f;
    memset(&f, 0, sizeof f);
    f.busbw_intra = f.busbw_inter = 1.0;
    f.copy_GBps = 1.0;
    f.mpi_GBps = 1e30; /* gathers: nothing */
    f.slow_factor = 1;
    return f;
}

/* allreduce_bw's plan with args (one string, split at blanks). */
static est_ar_plan plan(const est_figures *f, const char *args, int nodes, int rpn, double timeout, bool slow,
                        int rounds)
{
    char buf[512], *argv[64] = {"allreduce_bw"}, err[256] = "";
    int argc = 1;
    snprintf(buf, sizeof buf, "%s", args);
    for (char *w = strtok(buf, " "); w && argc < 63; w = strtok(NULL, " "))
        argv[argc++] = w;
    est_ar_plan p;
    memset(&p, 0, sizeof p);
    p.total_s = -1;
    if (est_allreduce_bw(f, argc, argv, nodes, rpn, timeout, slow, rounds, &p, err, sizeof err) != 0) {
        fprintf(stderr, "est_allreduce_bw refused '%s': %s\n", args, err);
        p.total_s = -1;
    }
    return p;
}

static void test_world_by_hand(void)
{
    est_figures f = hand_figures();
    /* 2 nodes x 1 rank, sizes 1, 2, 4 MiB; -w 1 -n 2: per size and placement the first (timed) operation and
     * 2 timed ones (no further warm-up), 3 operations of S / 1e9 s (2 ranks: 2(n-1)/n = 1): 3 x 2 placements
     * x (1 + 2 + 4) x 1048576 B / 1e9 = 0.044040192 s. */
    est_ar_plan p = plan(&f, "-b 1M -e 4M -f 2 -n 2 -w 1 -c 0", 2, 1, 0, false, 0);
    CHECKF(NEAR(p.total_s, 0.044040192), "%.12f", p.total_s);
    CHECKF(NEAR(p.world_s, 0.044040192), "%.12f", p.world_s);
    CHECK(p.n_sizes == 3 && p.rounds_asked == 0 && !p.cut[0]);
    /* a slow node: the world's links through it 60x slower, every operation 60 times longer: 2.64241152 s */
    f.slow_factor = 60;
    p = plan(&f, "-b 1M -e 4M -f 2 -n 2 -w 1 -c 0", 2, 1, 0, true, 0);
    CHECKF(NEAR(p.total_s, 2.64241152), "%.12f", p.total_s);
    /* -c 1 at 1 ns/B: each check is one operation more plus the fill and compare of S bytes, 2 S / 1e9 s per
     * placement: 0.044040192 + 2 x 2 x 7340032e-9 = 0.07340032 s */
    f = hand_figures();
    f.check_per_byte = 1e-9;
    p = plan(&f, "-b 1M -e 4M -f 2 -n 2 -w 1 -c 1", 2, 1, 0, false, 0);
    CHECKF(NEAR(p.total_s, 0.07340032), "%.12f", p.total_s);
}

static void test_budget_by_hand(void)
{
    est_figures f = hand_figures();
    /* One size of 1 GiB (1.073741824 s an operation), -n 20 -w 5, --timeout 20: the reserve is min(2 + 0.05 x
     * 20, 20 / 4) = 3 s, the world gets the 17 s left. Out-of-place: its first operation ends at 1.0737, its
     * share (17 - 1.0737) / 2 placements = 7.963 s, 80 % of it 6.370 s: warm-ups floor(0.2 x 6.370 / 1.0737)
     * = 1, iterations floor(6.370 / 1.0737) = 5: 7 operations. In-place: first operation ends at 8.590, share
     * 17 - 8.590 = 8.410, 80 %: 6.728: 1 warm-up, 6 iterations: 8 operations. 15 x 1.073741824 =
     * 16.10612736 s. */
    est_ar_plan p = plan(&f, "-b 1G -e 1G -n 20 -w 5 -c 0", 2, 1, 20, false, 0);
    CHECKF(NEAR(p.total_s, 16.10612736), "%.12f", p.total_s);
    CHECK(!p.cut[0]);
    /* --timeout on the command line is the program's own: the same */
    p = plan(&f, "-b 1G -e 1G -n 20 -w 5 -c 0 --timeout 20", 2, 1, 1000, false, 0);
    CHECKF(NEAR(p.total_s, 16.10612736), "%.12f", p.total_s);

    /* Pairs alone among 8 nodes: 7 rounds of 4 pairs; one size of 1 GiB, -n 1 -w 1: a round is 2 placements x
     * (first + 1 timed) = 4 operations, 4.294967296 s. --timeout 20: the pairs get 17 s; round 4 would start
     * at 12.885 and end past 17: three rounds run, 12.884901888 s. After round 1 the 6 rounds left (25.8 s)
     * no longer fit: the ring neighbours' 2 rounds come next (ga_pairs.h), 9 rounds in all. Circle round 0
     * held 4 pairs, 2 of them ring neighbours (7-0 and 3-4); the neighbours' rounds hold the other 6 (4 and
     * 2): 10 of 28 pairs, all 8 ring neighbours. */
    p = plan(&f, "--pattern pairs --rounds all -b 1G -e 1G -n 1 -w 1 -c 0", 8, 1, 20, false, 0);
    CHECKF(NEAR(p.total_s, 12.884901888), "%.12f", p.total_s);
    CHECK(p.rounds_asked == 9 && p.rounds_run == 3 && p.pairs_tested == 10 && p.pairs_total == 28);
    CHECK(p.ring_tested == 8);
    CHECK_STR(p.cut, "pairs: rounds 4-9 of 9 not run: out of time");
    /* --rounds 1 asks for 1 round of the circle after the neighbours' 2: nothing cut, the same time; the
     * circle round keeps its 2 pairs that are not ring neighbours */
    p = plan(&f, "--pattern pairs --rounds all -b 1G -e 1G -n 1 -w 1 -c 0", 8, 1, 20, false, 1);
    CHECK(p.rounds_asked == 3 && p.rounds_run == 3 && !p.cut[0] && p.ring_tested == 8 &&
          p.pairs_tested == 10);
}

static void test_isolation_by_hand(void)
{
    est_figures f = hand_figures();
    f.slow_factor = 60;
    /* world,pairs among 4 nodes x 1 rank, sizes 256K..4M, -n 1 -w 1 -c 0, one slow node (60 S / 1e9 s an
     * operation of a pair through it; the world's 4 ranks carry 2(3)/4 = 1.5 S, 90 S / 1e9 s through it). The
     * screen: two rounds of 2 pairs at 1 MiB (the judging size), three operations each (AR_SCREEN_OPS) on one
     * placement, each the figure; the slow node is in one pair of each round, two pairs far below: the fabric
     * is slow. 2 x 3 x 60 x 1048576e-9 = 0.37748736 s.
     * The world stops at 1 MiB, one operation per size and placement: 2 of each of 256K, 512K, 1M at 90 S:
     * 180 x 1835008e-9 = 0.33030144 s.
     * Pairs at 1M-4M (isolation), one operation per size and placement: the slow pair is far at 1M and at 2M:
     * judged, every pair stops there. 2 x 60 x (1M + 2M) = 0.37748736 s a round, the later rounds at the same
     * 2 sizes; each round judges it, so it is beyond doubt and not measured again. 3 x 0.37748736 =
     * 1.13246208 s. Total 1.84025088 s. */
    est_ar_plan p =
        plan(&f, "--pattern world,pairs --rounds all -b 256K -e 4M -n 1 -w 1 -c 0", 4, 1, 0, true, 0);
    CHECKF(NEAR(p.screen_s, 0.37748736), "%.12f", p.screen_s);
    CHECKF(NEAR(p.world_s, 0.33030144), "%.12f", p.world_s);
    CHECKF(NEAR(p.pairs_s, 1.13246208), "%.12f", p.pairs_s);
    CHECKF(NEAR(p.total_s, 1.84025088), "%.12f", p.total_s);
    CHECK(p.rounds_run == 3 && p.pairs_tested == 6);
    /* Fault-free: the screen 2 rounds x 3 operations of 1 MiB (0.006291456 s); the world all 5 sizes, 2
     * placements x 2 operations x 1.5 x 8126464e-9 = 0.048758784 s; 3 rounds of 4 x 8126464e-9: 0.097517568
     * s. Total 0.152567808 s. */
    f.slow_factor = 1;
    p = plan(&f, "--pattern world,pairs --rounds all -b 256K -e 4M -n 1 -w 1 -c 0", 4, 1, 0, false, 0);
    CHECKF(NEAR(p.total_s, 0.152567808), "%.12f", p.total_s);
    /* Pairs alone among 4 nodes, 1M and 2M, --rounds 1: the ring neighbours' 2 rounds first (2-3 and 3-0 hold
     * the slow node 3), then circle round 0 less them (3-0 and 1-2: nothing left). In each of its rounds the
     * slow pair runs 4 operations of 60 x 1M (far once: not yet one operation per size), then 4 of 60 x 2M
     * (far twice: judged), 0.75497472 s; judged in two rounds it is beyond doubt and not measured again:
     * 2 x 0.75497472 = 1.50994944 s. --rounds 2 adds circle round 1 (3-1, 0-2): 3 x 0.75497472 s. */
    f.slow_factor = 60;
    p = plan(&f, "--pattern pairs --rounds 1 -b 1M -e 2M -n 1 -w 1 -c 0", 4, 1, 0, true, 0);
    CHECKF(NEAR(p.total_s, 1.50994944), "%.12f", p.total_s);
    CHECK(p.rounds_asked == 3 && p.ring_tested == 4 && p.pairs_tested == 4);
    p = plan(&f, "--pattern pairs --rounds 2 -b 1M -e 2M -n 1 -w 1 -c 0", 4, 1, 0, true, 0);
    CHECKF(NEAR(p.total_s, 2.26492416), "%.12f", p.total_s);
    /* by rank on one node: a slow node has no link of its own; pairs of ranks, 3 rounds */
    f.slow_factor = 60;
    est_ar_plan one =
        plan(&f, "--pattern world,pairs --rounds all -b 256K -e 4M -n 1 -w 1 -c 0", 1, 4, 0, true, 0);
    f.slow_factor = 1;
    est_ar_plan healthy =
        plan(&f, "--pattern world,pairs --rounds all -b 256K -e 4M -n 1 -w 1 -c 0", 1, 4, 0, false, 0);
    CHECK(one.by_rank && one.rounds_run == 3 && NEAR(one.total_s, healthy.total_s));
}

static void test_op_model(void)
{
    suite_est_cluster c = {.nodes = 2, .ranks_per_node = 8, .gpu = true, .node_busbw_GBps = 370};
    est_figures f;
    est_figures_for(&c, &f);
    /* 1 GiB float among 16 ranks on 2 nodes: 20 us + 2 x 15/16 x 2^30 B at min(370, 8 x 46) = 368 GB/s =
     * 20e-6 + 2013265920 / 368e9 = 0.005490940 s */
    double t = est_op_s(&f, AR_ALLREDUCE, AR_FLOAT, 1u << 30, 16, 2, false);
    CHECKF(fabs(t - (20e-6 + 2013265920.0 / 368e9)) < 1e-12, "%.9f", t);
    /* within a node at the baseline's 370 GB/s, 10 us: 10e-6 + 2 x 7/8 x 2^30 / 370e9 */
    t = est_op_s(&f, AR_ALLREDUCE, AR_FLOAT, 1u << 30, 8, 1, false);
    CHECKF(fabs(t - (10e-6 + 1879048192.0 / 370e9)) < 1e-12, "%.9f", t);
    /* 512 nodes: 8 doublings beyond two add 8 x 5 us; the slow node divides 368 by 60 */
    f.slow_factor = 60;
    t = est_op_s(&f, AR_ALLREDUCE, AR_FLOAT, 8, 4096, 512, true);
    CHECKF(fabs(t - (60e-6 + 2.0 * 4095 / 4096 * 8 / (368e9 / 60))) < 1e-12, "%.12f", t);
}

static void test_cluster(void)
{
    suite_profile_env env = {.expect_gpus = 8, .node_count = 512, .world_size = 4096};
    suite_est_cluster c;
    CHECK(suite_estimate_cluster(&env, NULL, 0, 1800, 1780, &c) == 0);
    CHECK(c.nodes == 512 && c.ranks_per_node == 8 && !c.gpu);
    /* -np 16 on that hostfile: mpirun fills the first 2 nodes' slots */
    env.world_size = 16;
    CHECK(suite_estimate_cluster(&env, NULL, 0, 1800, 1780, &c) == 0 && c.nodes == 2 &&
          c.ranks_per_node == 8);
    /* no hostfile, no node count: no estimate */
    suite_profile_env none = {0};
    CHECK(suite_estimate_cluster(&none, NULL, 0, 1800, 1780, &c) == -1);
    CHECK(suite_estimate_cluster(&none, NULL, 4, 1800, 1780, &c) == 0 && c.nodes == 4 &&
          c.ranks_per_node == 1);
    json_error_t je;
    json_t *b = json_loads("{\"model\": \"X\", \"metrics\": [{\"program\": \"allreduce_bw\", \"name\": "
                           "\"busbw_at_max\", \"value\": 370}]}",
                           0, &je);
    env.world_size = 4096;
    CHECK(suite_estimate_cluster(&env, b, 0, 1800, 1780, &c) == 0 && c.gpu && c.node_busbw_GBps == 370);
    CHECK_STR(c.sku, "X");
    json_decref(b);
}

static void test_simple_models(void)
{
    suite_est_cluster c = {.nodes = 1, .ranks_per_node = 2, .step_limit_s = 600, .program_timeout_s = 580};
    suite_est_step e;
    json_error_t je;
    /* host gemm_flops --datatype fp32 -m 1000: one GEMM 2e9 FLOP at 40 GFLOP/s = 0.05 s; the dtype: set-up
     * 0.2 + (3 warm-ups + the check) x 0.05 + max(1 s target, 0.05) = 1.4 s; launch 1 + 0.02, report 0.5, the
     * gather 20 us + 2 x 8192 B / 2 GB/s: 2.92 s and 28.2 us. */
    json_t *args = json_loads("[\"--datatype\", \"fp32\", \"-m\", \"1000\"]", 0, &je);
    CHECK(suite_estimate_step("gemm_flops", args, &c, &e) == 0);
    CHECKF(fabs(e.s[0] - (2.92 + 20e-6 + 2 * 8192 / 2e9)) < 1e-9, "%.9f", e.s[0]);
    CHECK(e.s[1] == e.s[0] && strstr(e.model, "1 dtype"));
    json_decref(args);
    /* --duration adds the burn (and the deprecated --dtype still names the datatype) */
    args = json_loads("[\"--dtype\", \"fp32\", \"-m\", \"1000\", \"--duration\", \"100\"]", 0, &je);
    double before = e.s[0];
    CHECK(suite_estimate_step("gemm_flops", args, &c, &e) == 0 && e.s[0] > before + 100);
    json_decref(args);
    args = json_array();
    CHECK(suite_estimate_step("no_such_program", args, &c, &e) == -1);
    /* ddp_smoke across two nodes: the slow node slows its gradients' allreduce */
    c.nodes = 2;
    CHECK(suite_estimate_step("ddp_smoke", args, &c, &e) == 0 && e.s[1] > e.s[0]);
    json_decref(args);
}

/* The standard profile's allreduce_bw at 512 nodes x 8 H100: with the check on the GPU the whole plan fits
 * 1800 s, every round of pairs (issue 44, item 2); a slow node shortens it; --rounds 3 is far cheaper than
 * --rounds all. At 2,048 nodes the plan cuts the pairs' rounds and says so. */
static void test_512_nodes(void)
{
    suite_est_cluster c = {.nodes = 512,
                           .ranks_per_node = 8,
                           .gpu = true,
                           .step_limit_s = 1800,
                           .program_timeout_s = 1780,
                           .node_busbw_GBps = 370,
                           .gemm_bf16_TFLOPs = 700,
                           .mem_copy_GBps = 2900};
    json_error_t je;
    json_t *args = json_loads("[\"--pattern\", \"world,node,pairs\", \"--rounds\", \"all\"]", 0, &je);
    suite_est_step e;
    CHECK(suite_estimate_step("allreduce_bw", args, &c, &e) == 0);
    CHECKF(e.whole_s[0] <= c.step_limit_s && e.s[0] <= c.step_limit_s, "%.0f %.0f", e.whole_s[0], e.s[0]);
    CHECKF(e.cut[0][0] == 0, "%s", e.cut[0]);
    CHECKF(e.s[1] <= 3 * e.s[0], "%.0f %.0f", e.s[1], e.s[0]);
    CHECKF(strstr(e.note, "--rounds all is 511 rounds") &&
               strstr(e.note, "130816 of 130816 pairs tested (511 of 511"),
           "%s", e.note);
    est_figures f;
    est_figures_for(&c, &f);
    est_ar_plan all = plan(&f, "--pattern world,node,pairs --rounds all", 512, 8, 0, false, 0);
    est_ar_plan three = plan(&f, "--pattern world,node,pairs --rounds 3", 512, 8, 0, false, 0);
    /* --rounds 3: the ring neighbours' 2 rounds (512 pairs) and 3 circle rounds of 256 less their neighbours
     */
    CHECK(all.rounds_run == 511 && all.ring_tested == 512 && three.rounds_run == 5 &&
          three.ring_tested == 512 && three.pairs_tested > 3 * 256 && three.pairs_tested < 512 + 3 * 256);
    CHECKF(three.pairs_s * 50 < all.pairs_s, "%.0f %.0f", three.pairs_s, all.pairs_s);
    char line[4096];
    FILE *m = fmemopen(line, sizeof line, "w");
    suite_estimate_print(m, "> ", &e);
    fclose(m);
    CHECKF(strstr(line, "> estimate: ") && strstr(line, " s fault-free, ") &&
               strstr(line, "with one slow node (model: ") && strstr(line, "check on the GPU: "),
           "%s", line);
    c.nodes = 2048;
    CHECK(suite_estimate_step("allreduce_bw", args, &c, &e) == 0);
    CHECKF(e.whole_s[0] > c.step_limit_s && e.s[0] <= c.step_limit_s, "%.0f %.0f", e.whole_s[0], e.s[0]);
    /* not every round fits: the ring neighbours' 2 rounds join the plan, and all of them are tested */
    CHECKF(strstr(e.cut[0], "pairs: rounds ") && strstr(e.cut[0], "of 2049 not run: out of time"), "%s",
           e.cut[0]);
    CHECKF(strstr(e.note, "ring neighbours: 2048 of 2048 tested; other pairs: "), "%s", e.note);
    json_decref(args);
}

/* 100,000 ranks on one node (issue 45, item 6): members * (members - 1) / 2 pairs, 4,999,950,000, is past an
 * int, and so is what --rounds all tests (99,999 rounds of 50,000 pairs); more ranks than a report holds are
 * refused. The plan is linear in its rounds: the whole --rounds all plan in well under a second. */
static void test_huge_world(void)
{
    est_figures f = hand_figures();
    est_ar_plan p =
        plan(&f, "--pattern pairs --rounds all -b 1M -e 1M -n 1 -w 1 -c 0", 1, 100000, 0, true, 0);
    CHECKF(p.pairs_total == 4999950000LL && p.rounds_asked == 99999 && p.rounds_run == 99999, "%lld %d %d",
           p.pairs_total, p.rounds_asked, p.rounds_run);
    CHECKF(p.pairs_tested == 99999LL * 50000, "%lld", p.pairs_tested);
    p = plan(&f, "--pattern pairs --rounds all -b 1M -e 1M -n 1 -w 1 -c 0", 100001, 1, 0, true, 0);
    CHECKF(p.pairs_total == 5000050000LL && p.rounds_run == 100001, "%lld %d", p.pairs_total, p.rounds_run);
    p = plan(&f, "--pattern pairs -b 1M -e 1M", 65536, 65536, 0, false, 0);
    CHECKF(p.total_s < 0, "4 billion ranks planned: %.0f s", p.total_s);
}

int main(void)
{
    test_huge_world();
    test_world_by_hand();
    test_budget_by_hand();
    test_isolation_by_hand();
    test_op_model();
    test_cluster();
    test_simple_models();
    test_512_nodes();
    return ga_test_finish();
}
