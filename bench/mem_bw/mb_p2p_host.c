/* mem_bw --p2p on the host path: the node's ranks stand for its GPUs; each ordered pair copies the source's
 * segment of one MPI shared-memory window into the destination's (MPI_Win_allocate_shared over the node),
 * alone while the node's other ranks wait, --iters times, the best kept; every node at once; the pairs that
 * would be named copied again (--remeasure). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_testhook.h"
#include "ga_time.h"
#include "mb_p2p.h"
#include "mb_p2p_host.h"

#define MB_P2P_HOST_BYTES ((MPI_Aint)8 << 20)

/* A barrier whose waiting ranks sleep rather than poll: a pair copies alone, and on a host where ranks share
 * CPUs the others' polling took the copier's CPU (a healthy pair 2.3x below the node's median, --quick). */
static void idle_barrier(MPI_Comm node)
{
    MPI_Request req;
    int done = 0;
    ga_deadline_rearm(); /* -T bounds each wait of the schedule, not the whole of it */
    GA_MPI_CHECK(MPI_Ibarrier(node, &req));
    while (!done) {
        GA_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (!done)
            nanosleep(&(struct timespec){0, 200000}, NULL);
    }
}

typedef struct {
    MPI_Win win;
    char *mine;
    const int *world_of_local;
    int me;
} host_ctx;

/* Rank src of the node: its copies to dst, the best of reps. */
static double copy_to(void *ctx, int dst, int reps)
{
    const host_ctx *h = ctx;
    MPI_Win win = h->win;
    char *mine = h->mine;
    double slow = ga_test_p2p_factor(h->world_of_local[h->me], h->world_of_local[dst]);
    MPI_Aint size;
    int disp;
    char *peer = NULL;
    GA_MPI_CHECK(MPI_Win_shared_query(win, dst, &size, &disp, &peer));
    double best = 0;
    /* timed by this thread's CPU time, as the host triad is (mb_host.c): the time the scheduler gave to
     * another process is not the copy's (wall-clock timing kept a healthy pair at 0.4 of its node's median
     * through both remeasurements under a load average of 12) */
    for (int k = 0; k < reps; k++) {
        double t0 = ga_thread_cpu_now();
        memcpy(peer, mine, (size_t)MB_P2P_HOST_BYTES);
        ga_test_slow_down(slow, ga_thread_cpu_now() - t0, ga_thread_cpu_now); /* docs/testing.md */
        double t = ga_thread_cpu_now() - t0;
        best = k == 0 || t < best ? t : best;
    }
    return best > 0 ? (double)MB_P2P_HOST_BYTES / best / 1e9 : 0;
}

/* Collective over the node: its matrix judged as rank 0 will judge it (every rank alike, from the same rows),
 * and the slow pairs copied again, each keeping its best, up to --remeasure times: a pair slowed by a moment
 * of the host's load recovers, a slow one stays slow. */
static void remeasure(const mb_opts *o, MPI_Comm node, mb_p2p_copy_fn copy, void *ctx, mb_record *r)
{
    int me, n;
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &n);
    mb_record rows[MB_P2P_MAX];
    mb_p2p_pair *pairs = NULL;
    for (int pass = 0; pass < o->remeasure; pass++) {
        ga_deadline_rearm();
        GA_MPI_CHECK(MPI_Allgather(r, (int)sizeof *r, MPI_BYTE, rows, (int)sizeof *r, MPI_BYTE, node));
        for (int i = 0; i < n; i++) /* one node here, whatever the world */
            rows[i].hdr.node_index = 0;
        int np = mb_p2p_pairs(rows, n, &pairs), slow = 0;
        if (np < 0 || mb_p2p_judge(pairs, np, o->tolerance, o->min_p2p, NULL, NULL) < 0)
            GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
        for (int k = 0; k < np; k++) {
            if (!pairs[k].slow)
                continue;
            slow++;
            idle_barrier(node);
            int s = pairs[k].src, d = pairs[k].dst;
            if (me == s) {
                double again = copy(ctx, d, 4 * (o->reps > 0 ? o->reps : 5)); /* cheap: one pair */
                r->p2p_GBps[d] = again > r->p2p_GBps[d] ? again : r->p2p_GBps[d];
            }
        }
        free(pairs);
        pairs = NULL;
        if (slow == 0)
            break;
    }
}

void mb_p2p_schedule(const mb_opts *o, MPI_Comm node, mb_p2p_copy_fn copy, void *ctx, mb_record *r)
{
    int me, n;
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &n);
    r->p2p_peers = n;
    ga_deadline_arm("node barrier between the GPU-pair copies of --p2p");
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++) {
            if (s == d)
                continue;
            idle_barrier(node); /* one pair at a time */
            if (me == s)
                r->p2p_GBps[d] = copy(ctx, d, o->reps > 0 ? o->reps : 5);
        }
    remeasure(o, node, copy, ctx, r);
    ga_deadline_rearm();
    GA_MPI_CHECK(MPI_Barrier(node));
    ga_deadline_disarm();
}

int mb_p2p_host_measure(const mb_opts *o, MPI_Comm node, const int *world_of_local, mb_record *r, char *err,
                        size_t err_len)
{
    int me, n;
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &n);
    if (n > MB_P2P_MAX) {
        snprintf(err, err_len, "--p2p: %d ranks on this node, at most %d", n, MB_P2P_MAX);
        return -1;
    }
    char *mine = NULL;
    MPI_Win win;
    ga_deadline_arm("allocating the node's shared window for --p2p");
    GA_MPI_CHECK(MPI_Win_allocate_shared(MB_P2P_HOST_BYTES, 1, MPI_INFO_NULL, node, &mine, &win));
    memset(mine, me + 1, (size_t)MB_P2P_HOST_BYTES);
    ga_deadline_disarm();
    host_ctx h = {win, mine, world_of_local, me};
    mb_p2p_schedule(o, node, copy_to, &h, r);
    MPI_Win_free(&win);
    return 0;
}
