/* The double's cuBLASLt and cuBLAS. */
#include <cublasLt.h>
#include <cublas_api.h>

#include "gd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cuBLASLt ---- */

typedef struct {
    cudaDataType type;
    uint64_t rows, cols;
    int64_t ld;
} lt_layout;

typedef struct {
    int32_t fast_accum;
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t transa, transb;
} lt_desc;

static long gemm_calls;

EXPORT size_t cublasLtGetVersion(void)
{
    return CUBLAS_VERSION;
}

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    static int handle;
    if (gd_env_long("GA_DOUBLE_LT_CREATE_FAIL", 0) && gd_fault_here())
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *h = (cublasLtHandle_t)&handle;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    (void)h;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                               cudaDataType_t scale)
{
    lt_desc *x = calloc(1, sizeof *x);
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *x = (lt_desc){0, compute, scale, CUBLAS_OP_N, CUBLAS_OP_N};
    *d = (cublasLtMatmulDesc_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                                     const void *buf, size_t size)
{
    if ((a == CUBLASLT_MATMUL_DESC_TRANSA || a == CUBLASLT_MATMUL_DESC_TRANSB) &&
        size == sizeof(cublasOperation_t))
        *(a == CUBLASLT_MATMUL_DESC_TRANSA ? &((lt_desc *)d)->transa : &((lt_desc *)d)->transb) =
            *(const cublasOperation_t *)buf;
    if (a == CUBLASLT_MATMUL_DESC_FAST_ACCUM) {
        if (size != sizeof(int8_t) && size != sizeof(int32_t))
            return CUBLAS_STATUS_INVALID_VALUE;
        ((lt_desc *)d)->fast_accum = size == 1 ? *(const int8_t *)buf : *(const int32_t *)buf;
    }
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                                     void *buf, size_t size, size_t *written)
{
    if (a != CUBLASLT_MATMUL_DESC_FAST_ACCUM || !buf || size < sizeof(int8_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    /* cuBLASLt stores FAST_ACCUM as int8_t */
    *(int8_t *)buf = (int8_t)((lt_desc *)d)->fast_accum;
    if (written)
        *written = sizeof(int8_t);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows,
                                                 uint64_t cols, int64_t ld)
{
    lt_layout *x = calloc(1, sizeof *x);
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *x = (lt_layout){type, rows, cols, ld};
    *l = (cublasLtMatrixLayout_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

/* Batched layouts (lm_train's attention): accepted; the double's GEMM writes the first matrix only. */
EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                       cublasLtMatrixLayoutAttribute_t a, const void *buf,
                                                       size_t size)
{
    (void)l, (void)a;
    return buf && size > 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    static int pref;
    *p = (cublasLtMatmulPreference_t)&pref;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    (void)p;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                           cublasLtMatmulPreferenceAttributes_t a,
                                                           const void *buf, size_t size)
{
    (void)p, (void)a, (void)buf, (void)size;
    return CUBLAS_STATUS_SUCCESS;
}

/* Why cuBLASLt has no algorithm for this GEMM, or NULL: what it documents for the 8-bit types (fp8 needs
 * compute capability 8.9 or newer, the "TN" layout, fp32 compute and scale, dimensions multiple of 16; int8
 * needs TN, int32 compute and dimensions multiple of 4). The double models these refusals only. */
static const char *unsupported(const lt_desc *d, const lt_layout *a, const lt_layout *b, const lt_layout *c)
{
    bool fp8 = a->type == CUDA_R_8F_E4M3 || a->type == CUDA_R_8F_E5M2;
    bool tn = d->transa == CUBLAS_OP_T && d->transb == CUBLAS_OP_N;
    uint64_t m = d->transa == CUBLAS_OP_T ? a->cols : a->rows,
             k = d->transa == CUBLAS_OP_T ? a->rows : a->cols;
    uint64_t n = c->cols;
    if (fp8) {
        const char *cc = getenv("GA_DOUBLE_CC");
        int major = 9, minor = 0;
        if (cc && *cc)
            sscanf(cc, "%d.%d", &major, &minor);
        if (major * 10 + minor < 89)
            return "fp8 needs compute capability 8.9";
        if (!tn || d->compute != CUBLAS_COMPUTE_32F || d->scale != CUDA_R_32F)
            return "fp8 needs TN, fp32 compute and scale";
        if (m % 16 || n % 16 || k % 16 || a->ld % 16 || b->ld % 16)
            return "fp8 needs dimensions and leading dimensions multiple of 16";
    }
    if (a->type == CUDA_R_8I &&
        (!tn || d->compute != CUBLAS_COMPUTE_32I || c->type != CUDA_R_32I || m % 4 || n % 4 || k % 4))
        return "int8 needs TN, int32 compute and output, dimensions multiple of 4";
    return NULL;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                                     cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                     cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dl,
                                                     cublasLtMatmulPreference_t p, int requested,
                                                     cublasLtMatmulHeuristicResult_t *results, int *found)
{
    (void)h, (void)dl, (void)p;
    if (requested < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(results, 0, sizeof *results);
    *found = 0;
    if (unsupported((const lt_desc *)d, (const lt_layout *)a, (const lt_layout *)b, (const lt_layout *)c))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    /* GA_DOUBLE_LT_ALGOS candidates at most (default 8); each algorithm carries its index in the list. The
     * one at GA_DOUBLE_ALGO_BAD_STATE (when set) has a state other than success. */
    long available = gd_env_long("GA_DOUBLE_LT_ALGOS", 8),
         bad_state = gd_env_long("GA_DOUBLE_ALGO_BAD_STATE", -1);
    int n = requested < available ? requested : (int)available;
    for (int i = 0; i < n; i++) {
        memset(&results[i], 0, sizeof results[i]);
        results[i].algo.data[0] = (uint64_t)i;
        results[i].state = i == bad_state ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_SUCCESS;
        results[i].wavesCount = 1.0f;
    }
    *found = n;
    return n > 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

/* The configuration of a candidate, derived from its index: ID 100 + i, TILE 10 + i, STAGES 20 + i, SPLITK 1,
 * CTA_SWIZZLING i % 2; other attributes are not modelled (NOT_SUPPORTED, which callers treat as absent). */
EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                           cublasLtMatmulAlgoConfigAttributes_t a, void *buf,
                                                           size_t size, size_t *written)
{
    uint32_t i = (uint32_t)algo->data[0], v;
    switch (a) {
    case CUBLASLT_ALGO_CONFIG_ID:
        v = 100 + i;
        break;
    case CUBLASLT_ALGO_CONFIG_TILE_ID:
        v = 10 + i;
        break;
    case CUBLASLT_ALGO_CONFIG_STAGES_ID:
        v = 20 + i;
        break;
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
        v = 1;
        break;
    case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
        v = i % 2;
        break;
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (!buf || size < sizeof v)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, &v, sizeof v);
    if (written)
        *written = sizeof v;
    return CUBLAS_STATUS_SUCCESS;
}

static size_t cuda_type_size(cudaDataType t)
{
    switch (t) {
    case CUDA_R_64F:
        return 8;
    case CUDA_R_32F:
    case CUDA_R_32I:
        return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF:
        return 2;
    default:
        return 1;
    }
}

/* The GEMM: a pattern that depends on nothing but the shape (identical on every rank), optionally with one
 * bit flipped, after GA_DOUBLE_GEMM_US of spinning (so that rates are finite and batches short). */
static void k_gemm(const uint64_t *w, dim3 grid)
{
    (void)grid;
    unsigned char *c = (unsigned char *)(uintptr_t)w[0];
    size_t bytes = w[1];
    double until = gd_now() + (double)w[3] * 1e-6;
    /* each algorithm its own bits (w[4]: its index), as real ones, which sum in different orders, have */
    for (size_t i = 0; i < bytes; i++)
        c[i] = (unsigned char)(i * 131u + 7u + 17u * w[4]);
    if (w[2])
        c[bytes / 2] ^= 0x10;
    while (gd_now() < until)
        ;
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                                     const void *A, cublasLtMatrixLayout_t la, const void *B,
                                     cublasLtMatrixLayout_t lb, const void *beta, const void *C,
                                     cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
                                     const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsbytes,
                                     cudaStream_t stream)
{
    (void)h, (void)d, (void)alpha, (void)A, (void)la, (void)B, (void)lb, (void)beta, (void)C, (void)lc,
        (void)ws, (void)wsbytes;
    long call = ++gemm_calls;
    long fail = gd_env_long("GA_DOUBLE_GEMM_FAIL", 0);
    if (fail > 0 && call >= fail && gd_fault_here())
        return CUBLAS_STATUS_EXECUTION_FAILED;
    /* GA_DOUBLE_ALGO_FAIL=i: the candidate at index i of the heuristic's list fails (0: the first). */
    long index = algo ? (long)algo->data[0] : 0;
    if (index == gd_env_long("GA_DOUBLE_ALGO_FAIL", -1))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    /* GA_DOUBLE_ALGO_FAST=i: every other candidate takes GA_DOUBLE_ALGO_SLOW_US more (on the fault rank) */
    long fast = gd_fault_here() ? gd_env_long("GA_DOUBLE_ALGO_FAST", -1) : -1;
    uint64_t extra_us =
        fast >= 0 && index != fast ? (uint64_t)gd_env_long("GA_DOUBLE_ALGO_SLOW_US", 2000) : 0;
    const lt_layout *out = (const lt_layout *)ld;
    work *o = gd_work_new(OP_GEMM);
    o->kernel = k_gemm;
    o->words[0] = (uintptr_t)D;
    o->words[1] = (uint64_t)out->ld * out->cols * cuda_type_size(out->type);
    o->words[2] = gd_env_long("GA_DOUBLE_GEMM_CORRUPT", 0) == call && gd_fault_here();
    o->words[3] =
        (uint64_t)gd_env_long(call == 1 ? "GA_DOUBLE_GEMM_FIRST_US" : "GA_DOUBLE_GEMM_US", 20) + extra_us;
    o->words[4] = (uint64_t)index;
    gd_enqueue(stream, o);
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- cuBLAS (ddp_smoke's GEMMs): accepted and not computed; its tests exercise communication only ---- */

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    static int handle;
    *h = (cublasHandle_t)&handle;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    (void)h;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    (void)h, (void)s;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT const char *cublasGetStatusString(cublasStatus_t s)
{
    return s == CUBLAS_STATUS_SUCCESS ? "success (test double)" : "cuBLAS error (test double)";
}

EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    *value = type == MAJOR_VERSION   ? CUBLAS_VER_MAJOR
             : type == MINOR_VERSION ? CUBLAS_VER_MINOR
                                     : CUBLAS_VER_PATCH;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                     int n, int k, const float *alpha, const float *A, int lda,
                                     const float *B, int ldb, const float *beta, float *C, int ldc)
{
    (void)h, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda, (void)B,
        (void)ldb, (void)beta, (void)C, (void)ldc;
    return CUBLAS_STATUS_SUCCESS;
}
