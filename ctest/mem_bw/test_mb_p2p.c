/* mem_bw --p2p's analysis (mb_p2p.c) on described clusters: 64 nodes of 8 GPUs, every ordered pair of each
 * node at a figure with deterministic noise. One slow pair is named alone (node5 GPU2->GPU6); a pair below
 * --min-p2p is named though its node's pairs are all alike; fault-free and noisy nodes name nothing; a pair
 * not copied (no peer access) is said alone, as such. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_test.h"
#include "mb_p2p.h"

enum { NODES = 64, GPUS = 8 };

/* The records of the cluster: node slow_node's copy slow_src -> slow_dst at slow GB/s (slow_node -1: none).
 */
static mb_record *cluster(double noise, int slow_node, int slow_src, int slow_dst, double slow)
{
    mb_record *all = calloc(NODES * GPUS, sizeof *all);
    unsigned seed = 11;
    for (int n = 0; n < NODES; n++)
        for (int g = 0; g < GPUS; g++) {
            mb_record *r = &all[n * GPUS + g];
            r->hdr.node_index = n, r->hdr.local_rank = g, r->hdr.world_rank = n * GPUS + g;
            snprintf(r->hdr.host, sizeof r->hdr.host, "node%d", n);
            r->p2p_peers = GPUS;
            for (int d = 0; d < GPUS; d++) {
                seed = seed * 1103515245u + 12345u;
                r->p2p_GBps[d] = d == g ? 0 : 380.0 * (1.0 - noise * (double)((seed >> 16) % 1000) / 1000.0);
            }
            if (n == slow_node && g == slow_src)
                r->p2p_GBps[slow_dst] = slow;
        }
    return all;
}

static ga_findings judge(const mb_record *all, double floor, int *n_pairs)
{
    mb_p2p_pair *pairs = NULL;
    *n_pairs = mb_p2p_pairs(all, NODES * GPUS, &pairs);
    ga_findings f;
    ga_findings_init(&f);
    json_t *part = NULL;
    CHECK(mb_p2p_judge(pairs, *n_pairs, 0.10, floor, &f, &part) == (int)f.count);
    CHECK(json_array_size(json_object_get(part, "pairs")) == (size_t)*n_pairs);
    json_decref(part);
    free(pairs);
    return f;
}

int main(void)
{
    int n = 0;
    mb_record *all = cluster(0.05, 5, 2, 6, 60.0); /* an NVLink fallen to PCIe */
    ga_findings f = judge(all, 0, &n);
    CHECKF(n == NODES * GPUS * (GPUS - 1), "%d pairs", n);
    CHECKF(f.count == 1, "%zu findings", f.count);
    if (f.count == 1) {
        CHECK_STR(f.items[0].code, "MEM_P2P_SLOW");
        CHECKF(strncmp(f.items[0].message, "node5 GPU2->GPU6:", 17) == 0, "%s", f.items[0].message);
        CHECK(f.items[0].node_index == 5 && f.items[0].gpu == 2 && f.items[0].world_rank == 5 * GPUS + 2);
        CHECK_STR(f.items[0].part, "GPU2->GPU6");
    }
    ga_findings_free(&f);
    free(all);

    for (int noisy = 0; noisy <= 1; noisy++) { /* fault-free: none, with or without noise */
        all = cluster(noisy ? 0.08 : 0, -1, 0, 0, 0);
        f = judge(all, 0, &n);
        CHECKF(f.count == 0, "noise %d: %zu findings", noisy, f.count);
        ga_findings_free(&f);
        free(all);
    }

    /* the SKU's figure: every pair of every node alike at 380 GB/s, held to 400: all named; to 300: none */
    all = cluster(0, -1, 0, 0, 0);
    f = judge(all, 400, &n);
    CHECKF(f.count == (size_t)n, "%zu of %d below --min-p2p", f.count, n);
    ga_findings_free(&f);
    f = judge(all, 300, &n);
    CHECKF(f.count == 0, "%zu findings above --min-p2p", f.count);
    ga_findings_free(&f);
    free(all);

    /* GPU path: node9's GPU3 -> GPU4 not copied (no peer access): that pair alone, as MEM_P2P_UNAVAILABLE, a
     * warning without the SKU's figure and a failure with it; its 0 GB/s never drags the node's pairs down */
    for (int with_floor = 0; with_floor <= 1; with_floor++) {
        all = cluster(0.05, -1, 0, 0, 0);
        all[9 * GPUS + 3].p2p_GBps[4] = 0;
        all[9 * GPUS + 3].p2p_state[4] = MB_P2P_NO_PEER_ACCESS;
        snprintf(all[9 * GPUS + 3].p2p_note, sizeof all[0].p2p_note, "cudaDeviceCanAccessPeer answered no");
        f = judge(all, with_floor ? 300 : 0, &n);
        CHECKF(n == NODES * GPUS * (GPUS - 1), "%d pairs", n);
        CHECKF(f.count == 1, "%zu findings", f.count);
        if (f.count == 1) {
            CHECK_STR(f.items[0].code, "MEM_P2P_UNAVAILABLE");
            CHECK(f.items[0].severity == (with_floor ? GA_SEV_FAIL : GA_SEV_WARN));
            CHECKF(strncmp(f.items[0].message, "node9 GPU3->GPU4: not copied, no peer access", 44) == 0, "%s",
                   f.items[0].message);
        }
        ga_findings_free(&f);
        free(all);
    }

    /* A handle CUDA would not open (ranks that see one GPU each may be refused a peer's handle on a healthy
     * node): a warning even with the SKU's figure, never a failure */
    all = cluster(0.05, -1, 0, 0, 0);
    all[9 * GPUS + 3].p2p_GBps[4] = 0;
    all[9 * GPUS + 3].p2p_state[4] = MB_P2P_COPY_FAILED;
    snprintf(all[9 * GPUS + 3].p2p_note, sizeof all[0].p2p_note,
             "cudaIpcOpenMemHandle: invalid device ordinal");
    f = judge(all, 300, &n);
    CHECKF(f.count == 1 && f.items[0].severity == GA_SEV_WARN, "%zu findings, the first %s", f.count,
           f.count ? ga_severity_name(f.items[0].severity) : "-");
    ga_findings_free(&f);
    free(all);
    return ga_test_finish();
}
