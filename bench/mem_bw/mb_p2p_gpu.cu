/* mem_bw --p2p on the GPU path: each local rank allocates one device buffer and exports it
 * (cudaIpcGetMemHandle); the handles go round the node (MPI_Allgather on its communicator); each rank opens
 * its peers' buffers (cudaIpcOpenMemHandle) and, in the host path's schedule (mb_p2p_schedule: one pair at a
 * time per node, as nvbandwidth's copy-engine test measures each pair alone), copies its buffer into each
 * peer's with cudaMemcpyAsync, timed by CUDA events, the best of --iters. Peer access is checked first
 * (cudaDeviceCanAccessPeer, where the peer's GPU is visible to this process): a pair without it is not copied
 * and is said as such (MEM_P2P_UNAVAILABLE). */
#include <cuda_runtime.h>

#include <stdio.h>
#include <string.h>

#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

extern "C" {
#include "ga_deadline.h"
#include "ga_exit.h"
#include "mb_p2p_gpu.h"
#include "mb_p2p_host.h"
}

namespace
{

/* What each rank tells its node: its buffer's handle, and its GPU (bus id) to check peer access with. */
struct p2p_card {
    int ok; /* the buffer is allocated and exported */
    char bus_id[32];
    cudaIpcMemHandle_t handle;
};

struct p2p_gpu {
    int me, n;
    void *mine;
    size_t bytes;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    void *peer[MB_P2P_MAX]; /* opened IPC pointers, NULL: not opened */
    mb_record *r;
};

/* A pair this rank cannot copy: the state, and the first reason this rank met. */
void not_copied(p2p_gpu *g, int dst, int state, const char *what, cudaError_t e)
{
    (void)cudaGetLastError(); /* the error is this pair's: no later launch check may read it as its own */
    g->r->p2p_state[dst] = (int8_t)state;
    if (!g->r->p2p_note[0])
        snprintf(g->r->p2p_note, sizeof g->r->p2p_note, "%s: %s", what, cudaGetErrorString(e));
}

/* Waits for the event, polling so that the wait armed by the schedule (-T) and the whole run's bound hold
 * (the watcher ends the job); never a blocking synchronisation that could outlive them. */
cudaError_t wait_event(cudaEvent_t e)
{
    ga_deadline_rearm();
    cudaError_t rc;
    while ((rc = cudaEventQuery(e)) == cudaErrorNotReady)
        ;
    return rc;
}

/* One timed copy into the peer's buffer: seconds, or -1 with the error in *err. */
double timed_copy(p2p_gpu *g, int dst, cudaError_t *err)
{
    cudaError_t e = cudaEventRecord(g->e0, g->s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(g->peer[dst], g->mine, g->bytes, cudaMemcpyDeviceToDevice, g->s);
    if (e == cudaSuccess)
        e = cudaEventRecord(g->e1, g->s);
    if (e == cudaSuccess)
        e = wait_event(g->e1);
    float ms = 0;
    if (e == cudaSuccess)
        e = cudaEventElapsedTime(&ms, g->e0, g->e1);
    *err = e;
    return e == cudaSuccess ? ms / 1e3 : -1;
}

/* mb_p2p_copy_fn: this rank's copies to dst, the best of reps (one untimed first), in GB/s; 0 when the pair
 * is not copied. */
double copy_to_peer(void *ctx, int dst, int reps)
{
    p2p_gpu *g = (p2p_gpu *)ctx;
    if (!g->peer[dst] || g->r->p2p_state[dst] != MB_P2P_COPIED)
        return 0;
    /* this copy's own bound (-T), so that a copy that never ends is named as such by its source */
    ga_phase("--p2p copy GPU%d->GPU%d of the node", g->me, dst);
    ga_deadline_arm("--p2p copy GPU%d->GPU%d of the node (cudaMemcpyAsync into the peer's IPC buffer)", g->me,
                    dst);
    cudaError_t e = cudaSuccess;
    double best = 0;
    for (int k = -1; k < reps; k++) {
        double t = timed_copy(g, dst, &e);
        if (t < 0) {
            (void)cudaStreamSynchronize(g->s); /* nothing queued may outlive the buffers */
            ga_deadline_arm("node barrier between the GPU-pair copies of --p2p");
            not_copied(g, dst, MB_P2P_COPY_FAILED, "cudaMemcpyAsync to the peer", e);
            return 0;
        }
        if (k >= 0 && t > 0)
            best = best == 0 || t < best ? t : best;
    }
    ga_deadline_arm("node barrier between the GPU-pair copies of --p2p");
    return best > 0 ? (double)g->bytes / best / 1e9 : 0;
}

/* This rank's card: its buffer allocated, filled and exported. */
p2p_card export_buffer(p2p_gpu *g, char *err, size_t err_len)
{
    p2p_card c;
    memset(&c, 0, sizeof c);
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetPCIBusId(c.bus_id, (int)sizeof c.bus_id, dev);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaEventCreate(&g->e0);
    if (e == cudaSuccess)
        e = cudaEventCreate(&g->e1);
    if (e == cudaSuccess)
        e = cudaMalloc(&g->mine, g->bytes);
    if (e == cudaSuccess)
        e = cudaMemset(g->mine, g->me + 1, g->bytes);
    if (e == cudaSuccess)
        e = cudaIpcGetMemHandle(&c.handle, g->mine);
    c.ok = e == cudaSuccess;
    if (!c.ok)
        (void)cudaGetLastError();
    if (!c.ok)
        snprintf(err, err_len, "--p2p: this GPU's buffer of %zu bytes not exported: %s", g->bytes,
                 cudaGetErrorString(e));
    return c;
}

/* Peer access from this GPU to dst's (where dst's GPU is visible here), then dst's buffer opened. */
void open_peer(p2p_gpu *g, int dst, const p2p_card *c)
{
    int dev = 0, peer_dev = -1, can = 1;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess && cudaDeviceGetByPCIBusId(&peer_dev, c->bus_id) == cudaSuccess && peer_dev != dev)
        e = cudaDeviceCanAccessPeer(&can, dev, peer_dev);
    else
        (void)cudaGetLastError(); /* not visible here (a GPU per process): the IPC open says */
    if (e != cudaSuccess) {
        not_copied(g, dst, MB_P2P_NO_PEER_ACCESS, "cudaDeviceCanAccessPeer", e);
        return;
    }
    if (!can) {
        g->r->p2p_state[dst] = MB_P2P_NO_PEER_ACCESS;
        if (!g->r->p2p_note[0])
            snprintf(g->r->p2p_note, sizeof g->r->p2p_note, "cudaDeviceCanAccessPeer answered no");
        return;
    }
    e = cudaIpcOpenMemHandle(&g->peer[dst], c->handle, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
        g->peer[dst] = NULL;
        (void)cudaGetLastError();
        not_copied(g, dst, MB_P2P_COPY_FAILED, "cudaIpcOpenMemHandle", e);
    }
}

void close_all(p2p_gpu *g)
{
    for (int d = 0; d < g->n; d++)
        if (g->peer[d])
            cudaIpcCloseMemHandle(g->peer[d]);
    cudaFree(g->mine);
    if (g->e0)
        cudaEventDestroy(g->e0);
    if (g->e1)
        cudaEventDestroy(g->e1);
    if (g->s)
        cudaStreamDestroy(g->s);
}

} // namespace

extern "C" int mb_p2p_gpu_measure(const mb_opts *o, MPI_Comm node, mb_record *r, char *err, size_t err_len)
{
    p2p_gpu g;
    memset(&g, 0, sizeof g);
    MPI_Comm_rank(node, &g.me);
    MPI_Comm_size(node, &g.n);
    if (g.n > MB_P2P_MAX) { /* the same on every rank of the node */
        snprintf(err, err_len, "--p2p: %d ranks on this node, at most %d", g.n, MB_P2P_MAX);
        return -1;
    }
    g.r = r;
    g.bytes = mb_p2p_gpu_bytes(o);
    p2p_card cards[MB_P2P_MAX];
    p2p_card mine = export_buffer(&g, err, err_len);
    ga_deadline_arm("exchanging the --p2p buffers' IPC handles on the node");
    if (MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, cards, (int)sizeof mine, MPI_BYTE, node) !=
        MPI_SUCCESS) {
        fprintf(stderr, "[FATAL] MPI_Allgather of the --p2p IPC handles failed\n");
        MPI_Abort(MPI_COMM_WORLD, GA_EXIT_INTERNAL);
    }
    ga_deadline_disarm();
    for (int d = 0; d < g.n; d++) {
        if (d == g.me)
            continue;
        if (!mine.ok || !cards[d].ok) {
            r->p2p_state[d] = MB_P2P_COPY_FAILED; /* a buffer of the pair not exported */
            if (!r->p2p_note[0])
                snprintf(r->p2p_note, sizeof r->p2p_note, "%s",
                         mine.ok ? "the peer's buffer not exported" : err);
        } else {
            open_peer(&g, d, &cards[d]);
        }
    }
    mb_p2p_schedule(o, node, copy_to_peer, &g, r); /* every rank takes part, whatever it could open */
    close_all(&g);
    return mine.ok ? 0 : -1;
}
