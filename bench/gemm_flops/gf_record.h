/* What gemm_flops records on each rank: a fixed-size record (gathered as bytes to rank 0). */
#ifndef GF_RECORD_H
#define GF_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "ga_backend.h"
#include "gf_defaults.h" /* GF_DEFAULT_ALGOS */
#include "ga_outlier.h"
#include "ga_record.h"
#include "ga_peaks.h"

#define GF_MAX_INTERVALS 128
#define GF_MAX_ALGOS 16 /* --algos */
#define GF_MAX_MEASUREMENTS (1 + GA_REMEASURE_MAX)

typedef enum { GF_NOT_RUN = 0, GF_MEASURED, GF_SKIPPED, GF_FAILED } gf_state;

typedef struct {
    int32_t state;    /* gf_state */
    char note[128];   /* why skipped or failed */
    int32_t iters;    /* timed iterations (of the best measurement) */
    double time_s;    /* their total time */
    double tflops;    /* 2*m*n*k*iters / time_s / 1e12: the best of the measurements */
    int32_t measured; /* how many measurements: 1 + the remeasurements (--remeasure) */
    double measurements[GF_MAX_MEASUREMENTS]; /* TFLOP/s of each, in order */
    double check_err; /* largest error of the sampled elements, relative to sum |a_i b_i| */
    double check_tol; /* the tolerance for this dtype */
    int32_t check_ok; /* the sampled elements agree with a naive dot product */
    /* fp8 on a GPU: CUBLASLT_MATMUL_DESC_FAST_ACCUM as read back from the descriptor (1: on); else -1 */
    int32_t fast_accum;
    /* The GEMM's layout (1: NN, 0: TN, as used: fp8 and int8 are TN whatever --layout says) and, on a GPU,
     * cuBLASLt's algorithm: candidates returned by the heuristic, how many were timed (0: the first taken
     * untimed), the chosen one's index in that list and its configuration (-1: not read) */
    int32_t layout_nn;
    int32_t algo_candidates, algo_timed, algo_chosen;
    int32_t algo_id, algo_tile, algo_stages, algo_splitk, algo_swizzle;
} gf_result;

typedef struct {
    ga_record_header hdr;
    char model[96];   /* GPU name, or CPU model on the host path */
    char group[256];  /* model, SM count and library: ranks whose outputs must be bit-identical */
    char library[96]; /* "cuBLASLt 130001", "OpenBLAS 0.3.21 Haswell" */
    int32_t threads;  /* host path: BLAS threads of this rank */
    int32_t cc_major, cc_minor;
    int64_t m, n, k;
    gf_result dt[GA_DTYPE_COUNT];
    /* burn mode */
    int32_t burn_dtype; /* -1 when no burn */
    int32_t intervals;
    double interval_s;
    double interval_tflops[GF_MAX_INTERVALS];
    uint64_t interval_checksum[GF_MAX_INTERVALS];
    /* GPU burn: every GEMM's output is checksummed and compared with the GPU's first; how many were and how
     * many differed (the host path checks the last GEMM of an interval only: 0 and 0) */
    int64_t interval_gemms[GF_MAX_INTERVALS];
    int32_t interval_bad_gemms[GF_MAX_INTERVALS];
} gf_record;

typedef struct {
    int64_t m, n, k;      /* 0: the backend's default */
    unsigned dtypes;      /* bit per ga_dtype */
    bool dtypes_explicit; /* named one by one rather than "all" (an unavailable one is then a warning) */
    int warmup;           /* warm-up iterations */
    int iters;            /* timed iterations, 0: as many as fit in target_s */
    double target_s;      /* timed seconds per dtype when iters is 0 */
    double duration_s;    /* burn mode: 0 off */
    double interval_s;    /* burn mode: 0 automatic */
    int burn_dtype;       /* -1: the backend's default */
    bool layout_nn;       /* --layout nn (GPU path, where cuBLASLt allows it) */
    int algos;            /* --algos: heuristic candidates to time, 1: the first, untimed */
    uint64_t seed;
    int threads; /* host path: 0 automatic */
    double tolerance, min_efficiency, max_drop_pct;
    int remeasure;      /* passes of remeasurement of a suspect dtype (--remeasure) */
    bool relative_warn; /* --relative warn */
    ga_backend device;
    bool corrupt;       /* test hook (host path): damage one output element after every GEMM */
    double slow_factor; /* test hook (host path): GPUACCEPT_TEST_SLOW_FACTOR on this rank, else 1 */
} gf_opts;

#endif
