/* The two ways mem_bw measures: the rank's GPU (device copy, device read-write kernel, pinned H2D/D2H on the
 * GPU's NUMA node) or the rank's NUMA node (a STREAM triad on its cores). */
#ifndef MB_BACKEND_H
#define MB_BACKEND_H

#include <stddef.h>

#include "mb_record.h"

int mb_host_measure(const mb_opts *o, int local_size, mb_record *r, char *err, size_t errlen);
#if GA_HAVE_CUDA
int mb_gpu_measure(const mb_opts *o, mb_record *r, char *err, size_t errlen);
#endif

/* Best and median of reps timings (times is sorted in place) into x, with bytes counted per repetition. */
void mb_fill_result(mb_result *x, double bytes, double *times, int reps);

#endif
