/* mem_bw --p2p, host path (mb_p2p_host.c): this rank's row of its node's copy matrix through MPI shared
 * memory; and the schedule both paths run (the GPU path: mb_p2p_gpu.cu). */
#ifndef MB_P2P_HOST_H
#define MB_P2P_HOST_H

#include <mpi.h>
#include <stddef.h>

#include "mb_record.h"

/* Collective over node: fills r->p2p_peers and r->p2p_GBps (world_of_local: the world rank of each rank of
 * node, for the test hook). 0, or -1 with err (more ranks than MB_P2P_MAX). */
int mb_p2p_host_measure(const mb_opts *o, MPI_Comm node, const int *world_of_local, mb_record *r, char *err,
                        size_t err_len);

/* One pair's copies, on the source rank: this rank to local rank dst, reps times, the best in GB/s (0: not
 * measured, e.g. a pair without peer access). */
typedef double (*mb_p2p_copy_fn)(void *ctx, int dst, int reps);

/* Collective over node: every ordered pair copied alone while the node's other ranks wait asleep (each wait
 * bounded by -T), then the pairs that would be named copied again (--remeasure). Fills r->p2p_GBps. */
void mb_p2p_schedule(const mb_opts *o, MPI_Comm node, mb_p2p_copy_fn copy, void *ctx, mb_record *r);

#endif
