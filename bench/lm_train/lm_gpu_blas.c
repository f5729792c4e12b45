/* cuBLASLt for lm_train's GPU path: a matmul descriptor and layouts per call (as llm.c's matmul_cublaslt),
 * the heuristic's algorithm cached per shape (a step asks for the same few dozen shapes every time), and
 * pointer alignments stated so that the algorithm chosen can run on the tensors given. */
#include "lm_gpu_blas.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ga_cuda.h"
#include "ga_exit.h"
#include "ga_fatal.h"

void lm_blas_init(lm_blas *b, cudaStream_t stream)
{
    GA_CUBLAS_CHECK(cublasLtCreate(&b->lt));
    GA_CUDA_CHECK(cudaMalloc(&b->workspace, LM_BLAS_WORKSPACE_BYTES));
    b->stream = stream;
    b->gemms = 0;
    b->n_cached = 0;
}

void lm_blas_destroy(lm_blas *b)
{
    cublasLtDestroy(b->lt);
    cudaFree(b->workspace);
}

/* The largest power of two (at most 256) that divides the address: cuBLASLt's heuristic otherwise assumes
 * 256-byte aligned pointers and may pick an algorithm that cannot run on these. */
static uint32_t alignment_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 2 && a % al)
        al /= 2;
    return al;
}

static cublasLtMatrixLayout_t layout(uint64_t rows, uint64_t cols, int batch, long long stride)
{
    cublasLtMatrixLayout_t l;
    GA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, rows, cols, (int64_t)rows));
    if (batch > 1) {
        int32_t count = batch;
        int64_t offset = stride;
        GA_CUBLAS_CHECK(
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
        GA_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                         &offset, sizeof offset));
    }
    return l;
}

static cublasLtMatmulDesc_t describe(const lm_gemm_args *g)
{
    cublasLtMatmulDesc_t d;
    GA_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                      tb = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    if (g->gelu_aux)
        epi = g->bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
    else if (g->bias)
        epi = CUBLASLT_EPILOGUE_BIAS;
    GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    if (g->bias) {
        cudaDataType_t bias_type = CUDA_R_16BF;
        GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                                       sizeof bias_type));
        GA_CUBLAS_CHECK(
            cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g->bias, sizeof g->bias));
    }
    if (g->gelu_aux) {
        int64_t ld = g->m;
        GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                                       &g->gelu_aux, sizeof g->gelu_aux));
        GA_CUBLAS_CHECK(
            cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld));
    }
    return d;
}

static cublasLtMatmulPreference_t preference(const lm_gemm_args *g)
{
    cublasLtMatmulPreference_t p;
    GA_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&p));
    size_t ws = LM_BLAS_WORKSPACE_BYTES;
    GA_CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    const void *ptr[4] = {g->a, g->b, g->d, g->d}; /* C is D (accumulation in place) */
    const cublasLtMatmulPreferenceAttributes_t attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; i++) {
        uint32_t al = alignment_of(ptr[i]);
        GA_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(p, attr[i], &al, sizeof al));
    }
    return p;
}

static lm_gemm_key key_of(const lm_gemm_args *g)
{
    lm_gemm_key k;
    memset(&k, 0, sizeof k); /* compared with memcmp: no stray padding */
    k.m = g->m, k.n = g->n, k.k = g->k, k.batch = g->batch;
    k.flags = g->trans_a | g->trans_b << 1 | g->accumulate << 2 | (g->bias != NULL) << 3 |
              (g->gelu_aux != NULL) << 4;
    k.stride_a = g->stride_a, k.stride_b = g->stride_b, k.stride_d = g->stride_d;
    k.align_a = alignment_of(g->a), k.align_b = alignment_of(g->b), k.align_d = alignment_of(g->d);
    return k;
}

/* The algorithm for g: cached by key, else cuBLASLt's first heuristic choice (fatal when it has none). */
static cublasLtMatmulAlgo_t choose(lm_blas *b, const lm_gemm_args *g, cublasLtMatmulDesc_t desc,
                                   cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                                   cublasLtMatrixLayout_t lc)
{
    lm_gemm_key key = key_of(g);
    for (int i = 0; i < b->n_cached; i++)
        if (memcmp(&b->key[i], &key, sizeof key) == 0)
            return b->algo[i];
    cublasLtMatmulPreference_t pref = preference(g);
    cublasLtMatmulHeuristicResult_t h;
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(b->lt, desc, la, lb, lc, lc, pref, 1, &h, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0)
        GA_FATAL(GA_EXIT_ENV, "cuBLASLt has no algorithm for the bf16 GEMM m=%d n=%d k=%d (batch %d%s%s): %s",
                 g->m, g->n, g->k, g->batch, g->bias ? ", bias" : "", g->gelu_aux ? ", GELU" : "",
                 cublasGetStatusString(st));
    if (b->n_cached < LM_GEMM_CACHE) {
        b->key[b->n_cached] = key;
        b->algo[b->n_cached++] = h.algo;
    }
    return h.algo;
}

void lm_gemm(lm_blas *b, const lm_gemm_args *g)
{
    cublasLtMatmulDesc_t desc = describe(g);
    cublasLtMatrixLayout_t la =
        g->trans_a ? layout(g->k, g->m, g->batch, g->stride_a) : layout(g->m, g->k, g->batch, g->stride_a);
    cublasLtMatrixLayout_t lb =
        g->trans_b ? layout(g->n, g->k, g->batch, g->stride_b) : layout(g->k, g->n, g->batch, g->stride_b);
    cublasLtMatrixLayout_t lc = layout(g->m, g->n, g->batch, g->stride_d);
    cublasLtMatmulAlgo_t algo = choose(b, g, desc, la, lb, lc);
    const float one = 1.0f, zero = 0.0f;
    GA_CUBLAS_CHECK(cublasLtMatmul(b->lt, desc, &one, g->a, la, g->b, lb, g->accumulate ? &one : &zero, g->d,
                                   lc, g->d, lc, &algo, b->workspace, LM_BLAS_WORKSPACE_BYTES, b->stream));
    b->gemms++;
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
}
