/* The triad's per-element maths and the index map of its "flat" GPU kernel, written once for the host (C) and
 * the GPU (nvcc): the host path (mb_host.c), the GPU kernels (mb_gpu.cu) and the test double's stand-ins of
 * those kernels (ctest/gpu_double/gd_kernels.c) all call these, so the double runs what the GPU runs. */
#ifndef MB_TRIAD_H
#define MB_TRIAD_H

#include <stddef.h>

#ifdef __CUDACC__
#define MB_HD __host__ __device__ static inline
#else
#define MB_HD static inline
#endif

#define MB_TRIAD_SCALAR 3.0

/* --triad-kernel: the GPU triad's kernel (docs/mem_bw.md). FLAT is the default (mem_bw's opts_init). */
typedef enum { MB_TRIAD_GRID = 0, MB_TRIAD_RESTRICT, MB_TRIAD_FLAT, MB_TRIAD_KERNELS } mb_triad_kernel;

/* The flat kernel: blocks of MB_FLAT_THREADS threads, each thread MB_FLAT_PER_THREAD double2. */
#define MB_FLAT_THREADS 256
#define MB_FLAT_PER_THREAD 4
#define MB_FLAT_CHUNK ((size_t)MB_FLAT_THREADS * MB_FLAT_PER_THREAD)

MB_HD double mb_triad_elem(double b, double c, double s)
{
    return b + s * c;
}

/* The flat kernel's k-th double2 of a thread: a block owns MB_FLAT_CHUNK consecutive double2, and the
 * threads of a block read neighbouring double2 at each k (coalesced). */
MB_HD size_t mb_flat_index(size_t block, unsigned thread, unsigned k)
{
    return block * MB_FLAT_CHUNK + (size_t)k * MB_FLAT_THREADS + thread;
}

/* Blocks of the flat kernel for n2 double2: the last one takes the tail. (--size is at most 1 TiB: 2^26
 * blocks, far below gridDim.x's 2^31 - 1.) */
MB_HD size_t mb_flat_blocks(size_t n2)
{
    return (n2 + MB_FLAT_CHUNK - 1) / MB_FLAT_CHUNK;
}

#endif
