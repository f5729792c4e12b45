/* mem_bw --p2p, host path (mb_p2p_host.c): this rank's row of its node's copy matrix through MPI shared
 * memory. */
#ifndef MB_P2P_HOST_H
#define MB_P2P_HOST_H

#include <mpi.h>
#include <stddef.h>

#include "mb_record.h"

/* Collective over node: fills r->p2p_peers and r->p2p_GBps (world_of_local: the world rank of each rank of
 * node, for the test hook). 0, or -1 with err (more ranks than MB_P2P_MAX). */
int mb_p2p_host_measure(const mb_opts *o, MPI_Comm node, const int *world_of_local, mb_record *r, char *err,
                        size_t err_len);

#endif
