/* lm_train's GEMMs through cuBLASLt (GPU path): bf16 inputs and output, fp32 compute and scale, column-major
 * as cuBLASLt sees them (llm.c's matmul_cublaslt convention: D[m x n] = op(A) op(B), A [m x k] or,
 * transposed, [k x m], B [k x n] or [n x k]), optionally strided-batched (attention), accumulating into D
 * (gradients), with a bias epilogue and a GELU_AUX epilogue (the pre-activation kept in aux for the
 * backward). A failure is fatal (GA_CUBLAS_CHECK: exit 3 naming the call). */
#ifndef LM_GPU_BLAS_H
#define LM_GPU_BLAS_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

/* cuBLASLt's workspace, as llm.c sizes it: enough for the split-K algorithms of Hopper. */
#define LM_BLAS_WORKSPACE_BYTES ((size_t)32 << 20)

/* What decides cuBLASLt's choice of algorithm for a GEMM: a pass asks for the same few shapes every step. */
typedef struct {
    long long stride_a, stride_b, stride_d;
    int m, n, k, batch, flags;          /* flags: transposes, accumulation, bias, GELU */
    unsigned align_a, align_b, align_d; /* with the 5 ints: 32 bytes, no padding (compared with memcmp) */
} lm_gemm_key;

#define LM_GEMM_CACHE 64

typedef struct {
    cublasLtHandle_t lt;
    void *workspace; /* LM_BLAS_WORKSPACE_BYTES of device memory */
    cudaStream_t stream;
    long gemms; /* calls so far */
    int n_cached;
    lm_gemm_key key[LM_GEMM_CACHE];
    cublasLtMatmulAlgo_t algo[LM_GEMM_CACHE];
} lm_blas;

typedef struct {
    void *d;
    const void *a, *b;
    int m, n, k;
    bool trans_a, trans_b;
    int batch;                              /* 0 or 1: one GEMM; more: strided-batched */
    long long stride_a, stride_b, stride_d; /* elements between consecutive matrices of a batch */
    bool accumulate;                        /* D += op(A) op(B) (beta 1) */
    const void *bias;                       /* [m], added to every column of D (bias epilogue) */
    void *gelu_aux;                         /* non-NULL: D = GELU(result + bias), result + bias kept here */
} lm_gemm_args;

/* The handle and workspace; fatal on failure. */
void lm_blas_init(lm_blas *b, cudaStream_t stream);
void lm_blas_destroy(lm_blas *b);
void lm_gemm(lm_blas *b, const lm_gemm_args *g);

#endif
