/* gemm_flops' defaults that its run-time estimate (gf_estimate.c, built into gpuaccept) shares. */
#ifndef GF_DEFAULTS_H
#define GF_DEFAULTS_H

/* --algos: cuBLASLt candidates timed per dtype. 8 found a bf16 algorithm 2.4 % faster than the first on an
 * H200 (docs/measured-on-gpu.md, third run). */
#define GF_DEFAULT_ALGOS 8

#endif
