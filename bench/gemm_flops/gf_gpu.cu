/* GPU path: cuBLASLt GEMM per dtype on the rank's GPU, inputs generated on the device (gf_random.h), timed
 * with CUDA events, checked against a naive dot product computed by an independent kernel, and, in burn mode,
 * a checksum of the output bits per interval. Layout: column-major C (m x n) = A^T B, A stored k x m and B
 * k x n ("TN"), which is the layout cuBLASLt requires for fp8 and int8; --layout nn runs the other dtypes as
 * C = A B, A stored m x k. --algos N times N of cuBLASLt's heuristic candidates and keeps the fastest. */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "ga_log.h"
#include "ga_deadline.h" /* ga_phase */
#include "ga_time.h"
#include "gf_analysis.h"
#include "gf_backend.h"
}
#include "gf_random.h"

namespace
{

struct dtype_cfg {
    cudaDataType ab, cd, scale;
    cublasComputeType_t compute;
    size_t ab_size, cd_size;
};

dtype_cfg cfg_of(int d)
{
    switch (d) {
    case GA_FP64:
        return {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, 8};
    case GA_FP32:
        return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4};
    case GA_TF32:
        return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4};
    case GA_FP16:
        return {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2};
    case GA_BF16:
        return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2};
    case GA_FP8:
        return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1, 2};
    default: /* GA_INT8 */
        return {CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 1, 4};
    }
}

/* Stored input element -> double, per input dtype. */
__device__ double in_to_double(const void *p, int d, size_t i)
{
    switch (d) {
    case GA_FP64:
        return ((const double *)p)[i];
    case GA_FP32:
    case GA_TF32:
        return ((const float *)p)[i];
    case GA_FP16:
        return __half2float(((const __half *)p)[i]);
    case GA_BF16:
        return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case GA_FP8:
        return (float)((const __nv_fp8_e4m3 *)p)[i];
    default:
        return ((const int8_t *)p)[i];
    }
}

/* Output element -> double, per input dtype: fp8 writes bf16, int8 writes int32, the others their own type.
 */
__device__ double out_to_double(const void *p, int d, size_t i)
{
    if (d == GA_FP8)
        return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    if (d == GA_INT8)
        return ((const int32_t *)p)[i];
    return in_to_double(p, d, i);
}

__global__ void init_kernel(void *p, int d, size_t count, uint64_t seed, uint32_t which)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = gf_uniform(seed, which, i);
        switch (d) {
        case GA_FP64:
            ((double *)p)[i] = v;
            break;
        case GA_FP32:
        case GA_TF32:
            ((float *)p)[i] = v;
            break;
        case GA_FP16:
            ((__half *)p)[i] = __float2half_rn(v);
            break;
        case GA_BF16:
            ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
            break;
        case GA_FP8:
            ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(v);
            break;
        default:
            ((int8_t *)p)[i] = gf_int8(seed, which, i);
        }
    }
}

/* One block per sampled element: the naive dot product in double, sqrt(sum of squared terms), and the value
 * cuBLAS wrote. Independent of cuBLAS, so a wrong GEMM cannot check itself. */
__global__ void check_kernel(const void *a, const void *b, const void *c, int d, int nn, int64_t m, int64_t k,
                             const int64_t *rows, const int64_t *cols, double *out)
{
    __shared__ double s_ref[256], s_sq[256];
    int64_t row = rows[blockIdx.x], col = cols[blockIdx.x];
    double ref = 0, sq = 0;
    for (int64_t p = threadIdx.x; p < k; p += blockDim.x) {
        double t =
            in_to_double(a, d, gf_a_index(nn, row, p, m, k)) * in_to_double(b, d, (size_t)(col * k + p));
        ref += t;
        sq += t * t;
    }
    s_ref[threadIdx.x] = ref;
    s_sq[threadIdx.x] = sq;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) {
            s_ref[threadIdx.x] += s_ref[threadIdx.x + s];
            s_sq[threadIdx.x] += s_sq[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x] = s_ref[0];
        out[3 * blockIdx.x + 1] = sqrt(s_sq[0]);
        out[3 * blockIdx.x + 2] = out_to_double(c, d, (size_t)(col * m + row));
    }
}

__global__ void checksum_kernel(const void *c, size_t elem_size, size_t count, unsigned long long *sum)
{
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t bits = 0;
        if (elem_size == 8)
            bits = ((const uint64_t *)c)[i];
        else if (elem_size == 4)
            bits = ((const uint32_t *)c)[i];
        else
            bits = ((const uint16_t *)c)[i];
        local += gf_checksum_term(bits, i);
    }
    /* Reduced per warp, then per block: one atomic per block, not one per thread on the same address (the
     * burn runs this after every GEMM). Addition mod 2^64 commutes: the order does not matter. */
    for (int off = 16; off > 0; off /= 2)
        local += __shfl_down_sync(0xffffffffu, local, off);
    __shared__ unsigned long long per_warp[32];
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0)
        per_warp[warp] = local;
    __syncthreads();
    if (warp == 0) {
        local = lane < (blockDim.x + 31) / 32 ? per_warp[lane] : 0;
        for (int off = 16; off > 0; off /= 2)
            local += __shfl_down_sync(0xffffffffu, local, off);
        if (lane == 0)
            atomicAdd(sum, local);
    }
}

const size_t WORKSPACE = 32u << 20; /* what cuBLAS recommends for Hopper */
const int BURN_BATCH_MAX = 256;     /* GEMMs between synchronisations of the burn */

struct gpu_gemm {
    int d;
    dtype_cfg cfg;
    int64_t m, n, k;
    void *a, *b, *c, *ws;
    float *scale_one; /* fp8 A and B scales */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    cudaStream_t stream;
    double alpha_d, beta_d;
    float alpha_f, beta_f;
    int32_t alpha_i, beta_i;
    int32_t fast_accum;            /* read back from the descriptor; -1 when not fp8 */
    int nn;                        /* the layout used: 1 NN, 0 TN */
    int candidates, timed, chosen; /* the heuristic's list, how many were timed, the index kept */
};

void gemm_free(gpu_gemm *g)
{
    if (g->desc)
        cublasLtMatmulDescDestroy(g->desc);
    if (g->la)
        cublasLtMatrixLayoutDestroy(g->la);
    if (g->lb)
        cublasLtMatrixLayoutDestroy(g->lb);
    if (g->lc)
        cublasLtMatrixLayoutDestroy(g->lc);
    cudaFree(g->a);
    cudaFree(g->b);
    cudaFree(g->c);
    cudaFree(g->ws);
    cudaFree(g->scale_one);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    memset(g, 0, sizeof *g);
}

#define CU(call, what)                                                                                       \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e_));                                   \
            return -1;                                                                                       \
        }                                                                                                    \
    } while (0)
#define LT(call, what)                                                                                       \
    do {                                                                                                     \
        cublasStatus_t s_ = (call);                                                                          \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                   \
            snprintf(err, errlen, "%s: cuBLAS status %d", what, (int)s_);                                    \
            return -1;                                                                                       \
        }                                                                                                    \
    } while (0)

/* Allocates, fills and plans one GEMM. 0, or -1 with the reason (the caller frees). */
/* fp8's unit scales (device pointers) and fast accumulation, read back for the record. */
static int fp8_scaling(gpu_gemm *g, char *err, size_t errlen)
{
    CU(cudaMalloc((void **)&g->scale_one, sizeof(float)), "cudaMalloc scale");
    float one = 1.0f;
    /* On g->stream (synchronised below): the GEMMs run on a non-blocking stream, which does not wait for
     * a legacy-stream copy. */
    CU(cudaMemcpyAsync(g->scale_one, &one, sizeof one, cudaMemcpyHostToDevice, g->stream),
       "cudaMemcpy scale");
    LT(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &g->scale_one,
                                      sizeof g->scale_one),
       "A_SCALE_POINTER");
    LT(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &g->scale_one,
                                      sizeof g->scale_one),
       "B_SCALE_POINTER");
    /* Fast accumulation: what fp8 training uses (and what the datasheet peak assumes); without it Hopper
     * promotes partial sums to fp32 every few MMAs and runs well below peak. Read back for the record. */
    int8_t fast = 1, got = 0;
    size_t written = 0;
    LT(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast),
       "FAST_ACCUM");
    LT(cublasLtMatmulDescGetAttribute(g->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &got, sizeof got, &written),
       "FAST_ACCUM (read back)");
    g->fast_accum = got;
    return 0;
}

double gemm_time(const gpu_gemm *g, cublasLtHandle_t lt, int iters, char *err, size_t errlen);

/* Seconds per GEMM of iters GEMMs with the candidate, or -1 when it fails (or its heuristic state did). */
static double time_candidate(gpu_gemm *g, cublasLtHandle_t lt, const cublasLtMatmulHeuristicResult_t *h,
                             int iters, char *err, size_t errlen)
{
    if (h->state != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "heuristic state %d", (int)h->state);
        return -1;
    }
    g->algo = h->algo;
    double t = gemm_time(g, lt, iters, err, errlen);
    return t < 0 ? -1 : t / iters;
}

/* The fastest of the candidates that run (algos 1: the first, untimed): 0, or -1 with err. Each candidate
 * once untimed (its estimate), then CANDIDATE_ROUNDS rounds over all of them, each timing about 20 ms of
 * GEMMs, its best round kept: taking turns, no candidate has all the cool clocks of the first seconds. */
static int choose_algo(gpu_gemm *g, cublasLtHandle_t lt, const cublasLtMatmulHeuristicResult_t *h, int found,
                       char *err, size_t errlen)
{
    enum { CANDIDATE_ROUNDS = 2 };
    g->candidates = found;
    g->chosen = 0;
    if (found == 1) {
        g->algo = h[0].algo;
        return 0;
    }
    double best[GF_MAX_ALGOS];
    int iters[GF_MAX_ALGOS];
    char why[128] = "";
    for (int i = 0; i < found; i++) {
        double t = time_candidate(g, lt, &h[i], 1, why, sizeof why);
        best[i] = t > 0 ? 1e30 : -1;
        iters[i] = t > 0 ? (int)fmin(50, fmax(3, ceil(0.02 / t))) : 0;
    }
    for (int r = 0; r < CANDIDATE_ROUNDS; r++)
        for (int i = 0; i < found; i++) {
            if (best[i] < 0)
                continue;
            double t = time_candidate(g, lt, &h[i], iters[i], why, sizeof why);
            best[i] = t > 0 ? fmin(best[i], t) : -1;
        }
    for (int i = 0; i < found; i++)
        g->timed += best[i] > 0;
    g->chosen = gf_fastest_candidate(best, found, 0.01); /* 1 %: the noise of one candidate's ~40 ms */
    if (g->chosen < 0) {
        snprintf(err, errlen, "none of cuBLASLt's %d algorithms ran (last: %s)", found, why);
        return -1;
    }
    g->algo = h[g->chosen].algo;
    return 0;
}

/* cuBLASLt's candidates for the shape within the workspace (up to algos), the one to use: 0, or -1 with err.
 */
static int pick_algo(gpu_gemm *g, cublasLtHandle_t lt, int algos, char *err, size_t errlen)
{
    cublasLtMatmulPreference_t pref = NULL;
    LT(cublasLtMatmulPreferenceCreate(&pref), "preference");
    size_t ws = WORKSPACE;
    cublasStatus_t st =
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st != CUBLAS_STATUS_SUCCESS) {
        cublasLtMatmulPreferenceDestroy(pref);
        snprintf(err, errlen, "MAX_WORKSPACE_BYTES: cuBLAS status %d", (int)st);
        return -1;
    }
    cublasLtMatmulHeuristicResult_t h[GF_MAX_ALGOS];
    int found = 0, want = algos < 1 ? 1 : algos > GF_MAX_ALGOS ? GF_MAX_ALGOS : algos;
    st = cublasLtMatmulAlgoGetHeuristic(lt, g->desc, g->la, g->lb, g->lc, g->lc, pref, want, h, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found < 1) {
        snprintf(err, errlen, "cuBLASLt has no algorithm for %s %s %lldx%lldx%lld (status %d)",
                 ga_dtype_name(g->d), g->nn ? "NN" : "TN", (long long)g->m, (long long)g->n, (long long)g->k,
                 (int)st);
        return -1;
    }
    return choose_algo(g, lt, h, found < want ? found : want, err, errlen);
}

/* One attribute of the chosen algorithm's configuration, -1 when it cannot be read. */
static int32_t algo_attr(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t a)
{
    uint32_t v = 0;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(algo, a, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS ||
        written != sizeof v)
        return -1;
    return (int32_t)v;
}

/* The layout and algorithm into the record; the chosen one in --verbose. */
static void record_algo(const gpu_gemm *g, gf_result *x)
{
    x->layout_nn = g->nn;
    x->algo_candidates = g->candidates;
    x->algo_timed = g->timed;
    x->algo_chosen = g->chosen;
    x->algo_id = algo_attr(&g->algo, CUBLASLT_ALGO_CONFIG_ID);
    x->algo_tile = algo_attr(&g->algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
    x->algo_stages = algo_attr(&g->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
    x->algo_splitk = algo_attr(&g->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
    x->algo_swizzle = algo_attr(&g->algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
    ga_debug(
        "COMPUTE",
        "%s GEMM %s: algorithm %d of %d (%d timed): id %d tile %d stages %d splitk %d swizzle %d (rank 0)",
        ga_dtype_name(g->d), g->nn ? "nn" : "tn", g->chosen, g->candidates, g->timed, x->algo_id,
        x->algo_tile, x->algo_stages, x->algo_splitk, x->algo_swizzle);
}

int gemm_setup(gpu_gemm *g, cublasLtHandle_t lt, int d, const gf_opts *o, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->d = d;
    g->cfg = cfg_of(d);
    g->m = o->m;
    g->n = o->n;
    g->k = o->k;
    g->alpha_d = g->alpha_f = g->alpha_i = 1;
    g->fast_accum = -1;
    /* The cudaGetLastError after the init kernels must not pick up an earlier dtype's failed call. */
    (void)cudaGetLastError();
    CU(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    size_t na = (size_t)(g->k * g->m), nb = (size_t)(g->k * g->n), nc = (size_t)(g->m * g->n);
    CU(cudaMalloc(&g->a, na * g->cfg.ab_size), "cudaMalloc A");
    CU(cudaMalloc(&g->b, nb * g->cfg.ab_size), "cudaMalloc B");
    CU(cudaMalloc(&g->c, nc * g->cfg.cd_size), "cudaMalloc C");
    CU(cudaMalloc(&g->ws, WORKSPACE), "cudaMalloc workspace");
    init_kernel<<<1024, 256, 0, g->stream>>>(g->a, d, na, o->seed, 1);
    init_kernel<<<1024, 256, 0, g->stream>>>(g->b, d, nb, o->seed, 2);
    CU(cudaGetLastError(), "init kernel");
    CU(cudaMemsetAsync(g->c, 0, nc * g->cfg.cd_size, g->stream), "cudaMemset C");

    LT(cublasLtMatmulDescCreate(&g->desc, g->cfg.compute, g->cfg.scale), "cublasLtMatmulDescCreate");
    /* fp8 and int8 stay TN: cuBLASLt on Hopper has no other layout for fp8 (int8: kept alike) */
    g->nn = o->layout_nn && d != GA_FP8 && d != GA_INT8;
    cublasOperation_t ta = g->nn ? CUBLAS_OP_N : CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
    LT(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
    if (d == GA_FP8 && fp8_scaling(g, err, errlen) != 0)
        return -1;
    int64_t a_rows = g->nn ? g->m : g->k, a_cols = g->nn ? g->k : g->m; /* A stored m x k, or A^T k x m */
    LT(cublasLtMatrixLayoutCreate(&g->la, g->cfg.ab, (uint64_t)a_rows, (uint64_t)a_cols, a_rows), "layout A");
    LT(cublasLtMatrixLayoutCreate(&g->lb, g->cfg.ab, (uint64_t)g->k, (uint64_t)g->n, g->k), "layout B");
    LT(cublasLtMatrixLayoutCreate(&g->lc, g->cfg.cd, (uint64_t)g->m, (uint64_t)g->n, g->m), "layout C");

    if (pick_algo(g, lt, o->algos, err, errlen) != 0)
        return -1;
    CU(cudaStreamSynchronize(g->stream), "input initialisation");
    return 0;
}

cublasStatus_t gemm_run(const gpu_gemm *g, cublasLtHandle_t lt)
{
    const void *alpha = &g->alpha_f, *beta = &g->beta_f;
    if (g->cfg.scale == CUDA_R_64F) {
        alpha = &g->alpha_d;
        beta = &g->beta_d;
    } else if (g->cfg.scale == CUDA_R_32I) {
        alpha = &g->alpha_i;
        beta = &g->beta_i;
    }
    return cublasLtMatmul(lt, g->desc, alpha, g->a, g->la, g->b, g->lb, beta, g->c, g->lc, g->c, g->lc,
                          &g->algo, g->ws, WORKSPACE, g->stream);
}

/* Runs iters GEMMs between two events; seconds, or -1 with the reason. */
double gemm_time(const gpu_gemm *g, cublasLtHandle_t lt, int iters, char *err, size_t errlen)
{
    cudaEvent_t e0, e1;
    if (cudaEventCreate(&e0) != cudaSuccess) {
        snprintf(err, errlen, "cudaEventCreate failed");
        return -1;
    }
    if (cudaEventCreate(&e1) != cudaSuccess) {
        cudaEventDestroy(e0);
        snprintf(err, errlen, "cudaEventCreate failed");
        return -1;
    }
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    cudaError_t ce = cudaEventRecord(e0, g->stream);
    for (int i = 0; i < iters && st == CUBLAS_STATUS_SUCCESS && ce == cudaSuccess; i++)
        st = gemm_run(g, lt);
    if (ce == cudaSuccess)
        ce = cudaEventRecord(e1, g->stream);
    /* Wait for what was queued even after a failure, so the caller frees nothing still in use. */
    cudaError_t se = cudaStreamSynchronize(g->stream);
    if (ce == cudaSuccess)
        ce = se;
    float ms = 0;
    if (ce == cudaSuccess && st == CUBLAS_STATUS_SUCCESS)
        ce = cudaEventElapsedTime(&ms, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (st != CUBLAS_STATUS_SUCCESS || ce != cudaSuccess) {
        if (st != CUBLAS_STATUS_SUCCESS)
            snprintf(err, errlen, "cublasLtMatmul: cuBLAS status %d", (int)st);
        else
            snprintf(err, errlen, "cublasLtMatmul: %s", cudaGetErrorString(ce));
        return -1;
    }
    return ms / 1e3;
}

/* Largest normalised error of the sampled elements, or -1 with the reason. */
double gemm_check(const gpu_gemm *g, uint64_t seed, char *err, size_t errlen)
{
    int64_t rows[GF_CHECK_SAMPLES], cols[GF_CHECK_SAMPLES];
    gf_check_positions(g->m, g->n, seed, rows, cols);
    int64_t *d_pos = NULL;
    double *d_out = NULL, out[3 * GF_CHECK_SAMPLES];
    if (cudaMalloc((void **)&d_pos, sizeof rows + sizeof cols) != cudaSuccess ||
        cudaMalloc((void **)&d_out, sizeof out) != cudaSuccess) {
        cudaFree(d_pos);
        snprintf(err, errlen, "cudaMalloc for the check failed");
        return -1;
    }
    /* On g->stream: the kernel must see the positions (a legacy-stream copy is not ordered with it). */
    cudaError_t e = cudaMemcpyAsync(d_pos, rows, sizeof rows, cudaMemcpyHostToDevice, g->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(d_pos + GF_CHECK_SAMPLES, cols, sizeof cols, cudaMemcpyHostToDevice, g->stream);
    if (e == cudaSuccess) {
        check_kernel<<<GF_CHECK_SAMPLES, 256, 0, g->stream>>>(g->a, g->b, g->c, g->d, g->nn, g->m, g->k,
                                                              d_pos, d_pos + GF_CHECK_SAMPLES, d_out);
        e = cudaGetLastError(); /* a launch that never ran must not leave d_out's garbage to be read */
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g->stream);
    if (e == cudaSuccess)
        e = cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    cudaFree(d_pos);
    cudaFree(d_out);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "check kernel: %s", cudaGetErrorString(e));
        return -1;
    }
    double worst = 0;
    for (int s = 0; s < GF_CHECK_SAMPLES; s++) {
        double norm = out[3 * s + 1] > 0 ? out[3 * s + 1] : 1.0;
        double er = fabs(out[3 * s + 2] - out[3 * s]) / norm;
        if (!(er <= worst))
            worst = isnan(er) ? INFINITY : er;
    }
    return worst;
}

/* Why a dtype cannot run on this GPU with these sizes, or NULL. */
const char *unsupported(int d, const gf_record *r, const gf_opts *o)
{
    int cc = r->cc_major * 10 + r->cc_minor;
    if (d == GA_FP8 && cc < 89)
        return "fp8 (e4m3) needs compute capability 8.9 or newer";
    if ((d == GA_FP8 || d == GA_INT8) && (o->m % 16 || o->n % 16 || o->k % 16))
        return "fp8 and int8 GEMMs need m, n and k multiples of 16";
    if ((d == GA_TF32 || d == GA_BF16 || d == GA_INT8) && cc < 80)
        return "tf32, bf16 and int8 tensor-core GEMMs need compute capability 8.0 or newer";
    return NULL;
}

int describe(gf_record *r, const gf_opts *o, char *err, size_t errlen)
{
    int dev = 0, sms = 0;
    CU(cudaGetDevice(&dev), "cudaGetDevice");
    CU(cudaDeviceGetAttribute(&r->cc_major, cudaDevAttrComputeCapabilityMajor, dev), "compute capability");
    CU(cudaDeviceGetAttribute(&r->cc_minor, cudaDevAttrComputeCapabilityMinor, dev), "compute capability");
    CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
    r->m = o->m;
    r->n = o->n;
    r->k = o->k;
    snprintf(r->library, sizeof r->library, "cuBLASLt %zu", cublasLtGetVersion());
    snprintf(r->group, sizeof r->group, "%s | %d SMs | cc %d.%d | %s", r->model, sms, r->cc_major,
             r->cc_minor, r->library);
    return 0;
}

} // namespace

extern "C" void gf_gpu_defaults(gf_opts *o, bool quick)
{
    int64_t def = quick ? 4096 : 8192;
    o->m = o->m ? o->m : def;
    o->n = o->n ? o->n : o->m; /* -n and -k default to -m, as --help says (they took the default size) */
    o->k = o->k ? o->k : o->m;
    if (o->burn_dtype < 0)
        o->burn_dtype = GA_BF16; /* what training runs on */
}

extern "C" int gf_gpu_measure(const gf_opts *o, gf_record *r, char *err, size_t errlen)
{
    if (describe(r, o, err, errlen) != 0)
        return -1;
    cublasLtHandle_t lt;
    LT(cublasLtCreate(&lt), "cublasLtCreate");
    for (int d = 0; d < GA_DTYPE_COUNT; d++) {
        if (!(o->dtypes & (1u << d)))
            continue;
        gf_result res;
        memset(&res, 0, sizeof res);
        gf_result *x = &res; /* this measurement; r->dt[d] keeps them all (gf_result_add) */
        const char *why = unsupported(d, r, o);
        if (why) {
            x->state = GF_SKIPPED;
            snprintf(x->note, sizeof x->note, "%s", why);
            gf_result_add(&r->dt[d], x);
            continue;
        }
        ga_phase("%s GEMM %lldx%lldx%lld on GPU %d", ga_dtype_name(d), (long long)o->m, (long long)o->n,
                 (long long)o->k, r->hdr.device_index);
        gpu_gemm g;
        char why_buf[128] = "";
        double one = -1, t = -1, check = -1;
        int iters = o->iters;
        /* Warm-up first (its first GEMM loads the kernel's module lazily and picks clocks), then the
         * calibration of the iteration count on a few GEMMs that include neither. */
        if (gemm_setup(&g, lt, d, o, why_buf, sizeof why_buf) == 0 &&
            (o->warmup <= 0 || gemm_time(&g, lt, o->warmup, why_buf, sizeof why_buf) >= 0) &&
            (iters > 0 || (one = gemm_time(&g, lt, 3, why_buf, sizeof why_buf)) >= 0)) {
            if (iters <= 0)
                iters = (int)fmin(10000.0, fmax(3.0, ceil(o->target_s / fmax(one / 3, 1e-6))));
            t = gemm_time(&g, lt, iters, why_buf, sizeof why_buf);
            if (t > 0)
                check = gemm_check(&g, o->seed, why_buf, sizeof why_buf);
        }
        int32_t g_fast_accum = g.fast_accum;
        if (t > 0)
            record_algo(&g, x);
        gemm_free(&g);
        if (t <= 0 || check < 0) {
            x->state = GF_FAILED;
            snprintf(x->note, sizeof x->note, "%s", why_buf);
            gf_result_add(&r->dt[d], x);
            continue;
        }
        x->state = GF_MEASURED;
        x->iters = iters;
        x->time_s = t;
        x->tflops = gf_tflops(o->m, o->n, o->k, iters, t);
        x->check_tol = gf_check_tolerance(d);
        x->check_err = check;
        x->check_ok = check <= x->check_tol;
        x->fast_accum = g_fast_accum;
        gf_result_add(&r->dt[d], x);
    }
    cublasLtDestroy(lt);
    return 0;
}

/* Queues checksum_kernel of C into *d_sum (zeroed first, on the GEMM's stream). */
static cudaError_t queue_checksum(const gpu_gemm *g, unsigned long long *d_sum)
{
    cudaError_t e = cudaMemsetAsync(d_sum, 0, sizeof *d_sum, g->stream);
    if (e != cudaSuccess)
        return e;
    checksum_kernel<<<1024, 256, 0, g->stream>>>(g->c, g->cfg.cd_size, (size_t)(g->m * g->n), d_sum);
    return cudaGetLastError(); /* a kernel that never ran leaves 0: the same "checksum" on every GPU */
}

/* What a burn holds from its preparation to its last interval. */
struct burn_state {
    gpu_gemm g;
    cublasLtHandle_t lt;
    int batch, n_events, dev;
    unsigned long long *d_sums, *h_sums;
    cudaEvent_t events[2 * BURN_BATCH_MAX];
    uint64_t ref;
    char why[200];
};

/* Warm-up (lazy module loading), then the calibration of the batch on GEMMs that include neither; the
 * batch's checksums and events; then the reference. 0, or -1 with b->why said. */
static int burn_prepare(burn_state *b, int d, const gf_opts *o)
{
    double one = -1;
    /* cuBLASLt's first algorithm on every GPU: the burn compares output bits across GPUs, and two
     * algorithms sum in different orders (a timed choice could differ between identical GPUs). */
    gf_opts first = *o;
    first.algos = 1;
    if (gemm_setup(&b->g, b->lt, d, &first, b->why, sizeof b->why) == 0 &&
        gemm_time(&b->g, b->lt, 3, b->why, sizeof b->why) >= 0)
        one = gemm_time(&b->g, b->lt, 3, b->why, sizeof b->why) / 3;
    if (one <= 0)
        return -1;
    /* Batches of about 50 ms between synchronisations (at most BURN_BATCH_MAX GEMMs: an event pair each). */
    b->batch = (int)fmin((double)BURN_BATCH_MAX, fmax(1.0, 0.05 / one));
    if (cudaMalloc((void **)&b->d_sums, (size_t)b->batch * sizeof *b->d_sums) != cudaSuccess ||
        cudaMallocHost((void **)&b->h_sums, (size_t)b->batch * sizeof *b->h_sums) != cudaSuccess) {
        snprintf(b->why, sizeof b->why, "cannot allocate %d checksums", b->batch);
        return -1;
    }
    while (b->n_events < 2 * b->batch && cudaEventCreate(&b->events[b->n_events]) == cudaSuccess)
        b->n_events++;
    if (b->n_events < 2 * b->batch) {
        snprintf(b->why, sizeof b->why, "cannot create %d events", 2 * b->batch);
        return -1;
    }
    /* The reference: the checksum of this GPU's first burn GEMM. Every later GEMM computes the same product
     * of the same inputs and must give the same bits (beta = 0, one algorithm); across GPUs of one model the
     * references are compared by the analysis. */
    cudaError_t e =
        gemm_run(&b->g, b->lt) == CUBLAS_STATUS_SUCCESS ? queue_checksum(&b->g, b->d_sums) : cudaErrorUnknown;
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(b->h_sums, b->d_sums, sizeof *b->h_sums, cudaMemcpyDeviceToHost, b->g.stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(b->g.stream);
    if (e != cudaSuccess) {
        snprintf(b->why, sizeof b->why, "reference GEMM: %s", cudaGetErrorString(e));
        return -1;
    }
    b->ref = b->h_sums[0];
    return 0;
}

/* One batch of interval t: every GEMM's output is folded into its own checksum before the next GEMM
 * overwrites it; the figure counts the GEMMs' own time (an event pair around each), not the checksums'.
 * Adds the GEMMs' time to *gemm_s and the ones that differ from the reference to *bad; returns how many GEMMs
 * ran, or -1 with b->why said. */
static int burn_batch(burn_state *b, int t, long done, double *gemm_s, int *bad)
{
    cudaError_t e = cudaSuccess;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    int queued = 0;
    for (; queued < b->batch && e == cudaSuccess; queued++) {
        e = cudaEventRecord(b->events[2 * queued], b->g.stream);
        if (e != cudaSuccess)
            break;
        st = gemm_run(&b->g, b->lt);
        if (st != CUBLAS_STATUS_SUCCESS)
            break;
        e = cudaEventRecord(b->events[2 * queued + 1], b->g.stream);
        if (e == cudaSuccess)
            e = queue_checksum(&b->g, b->d_sums + queued);
    }
    if (e == cudaSuccess && st == CUBLAS_STATUS_SUCCESS)
        e = cudaMemcpyAsync(b->h_sums, b->d_sums, (size_t)queued * sizeof *b->h_sums, cudaMemcpyDeviceToHost,
                            b->g.stream);
    cudaError_t se = cudaStreamSynchronize(b->g.stream);
    if (e == cudaSuccess)
        e = se;
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(b->why, sizeof b->why, "cublasLtMatmul: cuBLAS status %d", (int)st);
        return -1;
    }
    if (e != cudaSuccess) {
        snprintf(b->why, sizeof b->why, "%s", cudaGetErrorString(e));
        return -1;
    }
    for (int i = 0; i < queued && e == cudaSuccess; i++) {
        float ms = 0;
        e = cudaEventElapsedTime(&ms, b->events[2 * i], b->events[2 * i + 1]);
        *gemm_s += ms / 1e3;
    }
    if (e != cudaSuccess) {
        snprintf(b->why, sizeof b->why, "GEMM timing: %s", cudaGetErrorString(e));
        return -1;
    }
    for (int i = 0; i < queued; i++)
        if (b->h_sums[i] != b->ref && (*bad)++ == 0)
            ga_log_rank(
                "COMPUTE",
                "burn: GPU %d GEMM %ld of interval %d differs from its first (%016llx, expected %016llx)",
                b->dev, done + i + 1, t + 1, (unsigned long long)b->h_sums[i], (unsigned long long)b->ref);
    return queued;
}

extern "C" int gf_gpu_burn(const gf_opts *o, gf_record *r, char *err, size_t errlen)
{
    if (describe(r, o, err, errlen) != 0)
        return -1;
    int d = o->burn_dtype, dev = r->hdr.device_index;
    const char *why = unsupported(d, r, o);
    if (why) {
        snprintf(err, errlen, "burn dtype %s: %s", ga_dtype_name(d), why);
        return -1;
    }
    burn_state *b = (burn_state *)calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "burn: out of memory");
        return -1;
    }
    b->dev = dev;
    cublasStatus_t st = cublasLtCreate(&b->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublasLtCreate: cuBLAS status %d", (int)st);
        free(b);
        return -1;
    }
    int rc = burn_prepare(b, d, o);
    r->burn_dtype = d;
    r->intervals = gf_burn_intervals(o->duration_s, o->interval_s, &r->interval_s);
    double flop = 2.0 * (double)o->m * (double)o->n * (double)o->k;
    for (int t = 0; t < r->intervals && rc == 0; t++) {
        ga_phase("burn interval %d of %d on GPU %d", t + 1, r->intervals, dev);
        double t0 = ga_now(), now = t0, gemm_s = 0;
        long done = 0;
        int bad = 0;
        while (now - t0 < r->interval_s) {
            int queued = burn_batch(b, t, done, &gemm_s, &bad);
            if (queued < 0) {
                rc = -1;
                break;
            }
            done += queued;
            now = ga_now();
        }
        r->interval_tflops[t] = gemm_s > 0 ? flop * done / gemm_s / 1e12 : 0;
        r->interval_checksum[t] = b->ref;
        r->interval_gemms[t] = done;
        r->interval_bad_gemms[t] = bad;
        if (rc == 0)
            ga_log("COMPUTE", "burn interval %d/%d: %.1f TFLOP/s, %ld GEMMs checked (rank 0)", t + 1,
                   r->intervals, r->interval_tflops[t], done);
    }
    if (rc != 0)
        snprintf(err, errlen, "burn on GPU %d (%s GEMM): %s", dev, ga_dtype_name(d), b->why);
    for (int i = 0; i < b->n_events; i++)
        cudaEventDestroy(b->events[i]);
    cudaFree(b->d_sums);
    cudaFreeHost(b->h_sums);
    gemm_free(&b->g);
    cublasLtDestroy(b->lt);
    free(b);
    return rc;
}
