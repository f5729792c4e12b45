/* Input values and output checksums, identical on the host and in CUDA kernels (the same seed gives the same
 * matrices on every rank and every backend). Inputs are full-entropy random numbers: all-zero or low-entropy
 * inputs switch fewer bits, draw less power and inflate Hopper's figures. */
#ifndef GF_RANDOM_H
#define GF_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GF_HD __host__ __device__ __forceinline__
#else
#define GF_HD static inline
#endif

GF_HD uint64_t gf_mix64(uint64_t x)
{
    /* splitmix64's finaliser: a bijection with good avalanche */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Element i of the matrix identified by (seed, which): uniform in [-1, 1) on a 2^-23 grid, exact in fp32. */
GF_HD float gf_uniform(uint64_t seed, uint32_t which, uint64_t i)
{
    uint64_t h = gf_mix64(seed ^ gf_mix64(((uint64_t)which << 56) ^ i));
    return (float)(int64_t)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

/* int8 inputs: uniform in [-127, 127]. */
GF_HD int8_t gf_int8(uint64_t seed, uint32_t which, uint64_t i)
{
    uint64_t h = gf_mix64(seed ^ gf_mix64(((uint64_t)which << 56) ^ i));
    return (int8_t)((int)(h % 255u) - 127);
}

/* Order-independent checksum of an output: the sum (mod 2^64) of a hash of each element's bits and index,
 * so a parallel reduction with atomics gives the same value as a serial loop, bit for bit. */
GF_HD uint64_t gf_checksum_term(uint64_t bits, uint64_t i)
{
    return gf_mix64(bits ^ gf_mix64(i));
}

/* Where element (row, p) of the m x k left factor of C = op(A) B lies in A's storage (column-major): TN
 * stores A^T, k x m with lda k; NN stores A, m x k with lda m. The check reads A through this, so its
 * reference is the product the GEMM was asked for in either layout (ctest gemm_flops.layout_index). */
GF_HD size_t gf_a_index(int nn, int64_t row, int64_t p, int64_t m, int64_t k)
{
    return nn ? (size_t)(p * m + row) : (size_t)(row * k + p);
}

#endif
