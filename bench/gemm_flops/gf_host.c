/* Host path: OpenBLAS sgemm and dgemm with the rank's share of the node's cores. Same layout as the GPU path
 * (column-major, C = A^T B with A stored k x m), same inputs (gf_random.h), same check and checksum. The
 * measurement is timed by CPU time (the process's, over its BLAS threads); the burn by the wall clock, since
 * it holds the cores for a span of time. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_log.h"
#include "ga_runtime.h"
#include "ga_testhook.h"
#include "ga_time.h"
#include "gf_analysis.h"
#include "gf_backend.h"
#include "gf_random.h"

void gf_host_defaults(gf_opts *o, bool quick)
{
    /* 8192^3 would take tens of seconds per GEMM on a few cores: the host default is what a CPU does in
     * about a second. */
    int64_t def = quick ? 512 : 2048;
    o->m = o->m ? o->m : def;
    o->n = o->n ? o->n : o->m; /* -n and -k default to -m, as --help says (they took the default size) */
    o->k = o->k ? o->k : o->m;
    if (o->burn_dtype < 0)
        o->burn_dtype = GA_FP32;
}

typedef struct {
    int dtype; /* GA_FP32 or GA_FP64 */
    int64_t m, n, k;
    void *a, *b, *c;
    bool corrupt;
} host_gemm;

static size_t esize(int dtype)
{
    return dtype == GA_FP64 ? sizeof(double) : sizeof(float);
}

static void host_gemm_free(host_gemm *g)
{
    free(g->a);
    free(g->b);
    free(g->c);
}

static int host_gemm_init(host_gemm *g, int dtype, const gf_opts *o)
{
    memset(g, 0, sizeof *g);
    g->dtype = dtype;
    g->m = o->m;
    g->n = o->n;
    g->k = o->k;
    g->corrupt = o->corrupt;
    size_t es = esize(dtype);
    g->a = malloc((size_t)(g->k * g->m) * es);
    g->b = malloc((size_t)(g->k * g->n) * es);
    g->c = calloc((size_t)(g->m * g->n), es);
    if (!g->a || !g->b || !g->c) {
        host_gemm_free(g);
        return -1;
    }
    for (int64_t i = 0; i < g->k * g->m; i++) {
        float v = gf_uniform(o->seed, 1, (uint64_t)i);
        if (dtype == GA_FP64)
            ((double *)g->a)[i] = v;
        else
            ((float *)g->a)[i] = v;
    }
    for (int64_t i = 0; i < g->k * g->n; i++) {
        float v = gf_uniform(o->seed, 2, (uint64_t)i);
        if (dtype == GA_FP64)
            ((double *)g->b)[i] = v;
        else
            ((float *)g->b)[i] = v;
    }
    return 0;
}

static void host_gemm_run(const host_gemm *g)
{
    int m = (int)g->m, n = (int)g->n, k = (int)g->k;
    if (g->dtype == GA_FP64)
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0, g->a, k, g->b, k, 0.0, g->c, m);
    else
        cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f, g->a, k, g->b, k, 0.0f, g->c, m);
    if (g->corrupt) { /* what a bad ALU would do to C(0,0): the check and the SDC comparison must see it */
        if (g->dtype == GA_FP64)
            ((double *)g->c)[0] += 1.0;
        else
            ((float *)g->c)[0] += 1.0f;
    }
}

static double elem(const void *p, int dtype, int64_t i)
{
    return dtype == GA_FP64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* Largest error of sampled C elements against a naive dot product in double precision. */
static double host_gemm_check(const host_gemm *g, uint64_t seed)
{
    int64_t rows[GF_CHECK_SAMPLES], cols[GF_CHECK_SAMPLES];
    gf_check_positions(g->m, g->n, seed, rows, cols);
    double worst = 0;
    for (int s = 0; s < GF_CHECK_SAMPLES; s++) {
        double ref = 0, norm = 0;
        for (int64_t p = 0; p < g->k; p++) {
            double t = elem(g->a, g->dtype, rows[s] * g->k + p) * elem(g->b, g->dtype, cols[s] * g->k + p);
            ref += t;
            norm += t * t;
        }
        double got = elem(g->c, g->dtype, cols[s] * g->m + rows[s]);
        double err = fabs(got - ref) / (sqrt(norm) > 0 ? sqrt(norm) : 1.0);
        if (!(err <= worst)) /* NaN propagates as the worst */
            worst = isnan(err) ? INFINITY : err;
    }
    return worst;
}

static uint64_t host_gemm_checksum(const host_gemm *g)
{
    uint64_t sum = 0;
    int64_t count = g->m * g->n;
    for (int64_t i = 0; i < count; i++) {
        uint64_t bits = 0;
        if (g->dtype == GA_FP64)
            memcpy(&bits, (const double *)g->c + i, sizeof(double));
        else
            memcpy(&bits, (const float *)g->c + i, sizeof(float));
        sum += gf_checksum_term(bits, (uint64_t)i);
    }
    return sum;
}

static void describe(gf_record *r, const gf_opts *o)
{
    openblas_set_num_threads(o->threads);
    r->threads = o->threads;
    r->m = o->m;
    r->n = o->n;
    r->k = o->k;
    const char *cfg = openblas_get_config();
    snprintf(r->library, sizeof r->library, "%s", cfg ? cfg : "OpenBLAS");
    const char *core = openblas_get_corename();
    snprintf(r->group, sizeof r->group, "%s | OpenBLAS %s | %d threads", r->model, core ? core : "?",
             o->threads);
}

int gf_host_measure(const gf_opts *o, gf_record *r, char *err, size_t errlen)
{
    describe(r, o);
    for (int d = 0; d < GA_DTYPE_COUNT; d++) {
        if (!(o->dtypes & (1u << d)))
            continue;
        gf_result x = {0}; /* this measurement; r->dt[d] keeps them all (gf_result_add) */
        if (d != GA_FP32 && d != GA_FP64) {
            x.state = GF_SKIPPED;
            snprintf(x.note, sizeof x.note,
                     "%s: the host path has OpenBLAS sgemm and dgemm only (fp32, fp64)", ga_dtype_name(d));
            gf_result_add(&r->dt[d], &x);
            continue;
        }
        ga_phase("%s GEMM %lldx%lldx%lld on %d threads", ga_dtype_name(d), (long long)o->m, (long long)o->n,
                 (long long)o->k, o->threads);
        host_gemm g;
        if (host_gemm_init(&g, d, o) != 0) {
            snprintf(err, errlen, "out of memory for the %s matrices of %lldx%lldx%lld", ga_dtype_name(d),
                     (long long)o->m, (long long)o->n, (long long)o->k);
            return GF_OUT_OF_MEMORY;
        }
        double one = 0;
        for (int w = 0; w < (o->warmup > 0 ? o->warmup : 1); w++) {
            double t0 = ga_now();
            host_gemm_run(&g);
            one = ga_now() - t0;
        }
        int iters = o->iters;
        if (iters <= 0)
            iters = (int)fmin(1000.0, fmax(1.0, ceil(o->target_s / fmax(one, 1e-6))));
        /* Timed by the CPU time of the process's threads (OpenBLAS's and this one), shared among o->threads:
         * the cores' own time, as the GPU path times its GEMMs on the GPU, whatever else the host runs. */
        double t0 = ga_process_cpu_now();
        for (int i = 0; i < iters; i++)
            host_gemm_run(&g);
        ga_test_slow_down(o->slow_factor, ga_process_cpu_now() - t0, ga_process_cpu_now); /* 1: nothing */
        double t = (ga_process_cpu_now() - t0) / (o->threads > 0 ? o->threads : 1);
        x.state = GF_MEASURED;
        x.iters = iters;
        x.time_s = t;
        x.tflops = gf_tflops(o->m, o->n, o->k, iters, t);
        x.check_tol = gf_check_tolerance(d);
        x.check_err = host_gemm_check(&g, o->seed);
        x.check_ok = x.check_err <= x.check_tol;
        gf_result_add(&r->dt[d], &x);
        host_gemm_free(&g);
    }
    return 0;
}

int gf_host_burn(const gf_opts *o, gf_record *r, char *err, size_t errlen)
{
    int d = o->burn_dtype;
    if (d != GA_FP32 && d != GA_FP64) {
        snprintf(err, errlen, "burn dtype %s: the host path has fp32 and fp64 only", ga_dtype_name(d));
        return -1;
    }
    describe(r, o);
    host_gemm g;
    if (host_gemm_init(&g, d, o) != 0) {
        snprintf(err, errlen, "out of memory for the %s burn matrices of %lldx%lldx%lld", ga_dtype_name(d),
                 (long long)o->m, (long long)o->n, (long long)o->k);
        return GF_OUT_OF_MEMORY;
    }
    r->burn_dtype = d;
    r->intervals = gf_burn_intervals(o->duration_s, o->interval_s, &r->interval_s);
    double flop = 2.0 * (double)o->m * (double)o->n * (double)o->k;
    for (int t = 0; t < r->intervals; t++) {
        ga_phase("burn interval %d of %d", t + 1, r->intervals);
        double t0 = ga_now(), now = t0;
        long done = 0;
        while (now - t0 < r->interval_s) {
            host_gemm_run(&g);
            done++;
            now = ga_now();
        }
        r->interval_tflops[t] = flop * done / (now - t0) / 1e12;
        r->interval_checksum[t] = host_gemm_checksum(&g);
        ga_log("COMPUTE", "burn interval %d/%d: %.4g TFLOP/s, checksum %016llx (rank 0)", t + 1, r->intervals,
               r->interval_tflops[t], (unsigned long long)r->interval_checksum[t]);
    }
    host_gemm_free(&g);
    return 0;
}
