/* mem_bw --p2p, GPU path (mb_p2p_gpu.cu): this rank's row of its node's copy matrix, GPU to peer GPU through
 * CUDA IPC handles exchanged within the node. */
#ifndef MB_P2P_GPU_H
#define MB_P2P_GPU_H

#include <mpi.h>
#include <stddef.h>

#include "mb_record.h"

/* Bytes of each pair's copy: --size when given, at most 512 MiB (nvbandwidth's default buffer), else that. */
static inline size_t mb_p2p_gpu_bytes(const mb_opts *o)
{
    size_t most = (size_t)512 << 20;
    return o->size && o->size < most ? (size_t)o->size : most;
}

#if GA_HAVE_CUDA
/* Collective over node (every rank of it takes part, whatever fails): fills r->p2p_peers, r->p2p_GBps and,
 * for a pair not copied, r->p2p_state and r->p2p_note. 0, or -1 with err (this rank's buffer not exported,
 * more ranks than MB_P2P_MAX). */
int mb_p2p_gpu_measure(const mb_opts *o, MPI_Comm node, mb_record *r, char *err, size_t err_len);
#endif

#endif
