/* The two ways mem_bw measures: the rank's GPU (device copy, device read-write kernel, pinned H2D/D2H on the
 * GPU's NUMA node) or the rank's NUMA node (a STREAM triad on its cores). */
#ifndef MB_BACKEND_H
#define MB_BACKEND_H

#include <mpi.h>
#include <stddef.h>

#include "mb_record.h"

/* mb_host_measure's return when the rank's buffers cannot be allocated: the job then ends with exit 5 on
 * every rank (docs/exit-codes.md), not a measured failure of this node. */
#define MB_OUT_OF_MEMORY (-2)

int mb_host_measure(const mb_opts *o, int local_size, mb_record *r, char *err, size_t errlen);
#if GA_HAVE_CUDA
/* Collective over node_comm (the ranks of this node): the host-link tests start together on every GPU of a
 * node, as they share the host's memory and PCIe switches. */
int mb_gpu_measure(const mb_opts *o, MPI_Comm node_comm, mb_record *r, char *err, size_t errlen);
#endif

/* Best and median of reps timings (times is sorted in place) into x, with bytes counted per repetition. */
void mb_fill_result(mb_result *x, double bytes, double *times, int reps);

#endif
