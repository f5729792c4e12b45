/* Helpers shared by the two backends (compiled without CUDA). */
#include <math.h>

#include "gf_backend.h"
#include "gf_random.h"

void gf_result_add(gf_result *dst, const gf_result *src)
{
    if (src->state != GF_MEASURED) {
        /* skipped or failed from the start; a GEMM that fails when measured again has failed */
        if (dst->state == GF_NOT_RUN || src->state == GF_FAILED) {
            int measured = dst->measured;
            *dst = *src;
            dst->measured = measured;
        }
        return;
    }
    if (dst->state != GF_MEASURED) {
        *dst = *src;
        dst->measured = 1;
        dst->measurements[0] = src->tflops;
        return;
    }
    if (dst->measured < GF_MAX_MEASUREMENTS)
        dst->measurements[dst->measured++] = src->tflops;
    /* the check of a wrong measurement is the one to report, whichever was faster */
    gf_result wrong = !dst->check_ok ? *dst : *src;
    if (src->tflops > dst->tflops) {
        int measured = dst->measured;
        double ms[GF_MAX_MEASUREMENTS];
        for (int i = 0; i < measured; i++)
            ms[i] = dst->measurements[i];
        *dst = *src;
        dst->measured = measured;
        for (int i = 0; i < measured; i++)
            dst->measurements[i] = ms[i];
    }
    if (!wrong.check_ok) {
        dst->check_ok = 0;
        dst->check_err = wrong.check_err;
        dst->check_tol = wrong.check_tol;
    }
}

double gf_check_tolerance(int dtype)
{
    switch (dtype) {
    case GA_FP64:
        return 1e-10;
    case GA_FP32:
        return 1e-4;
    case GA_TF32: /* inputs rounded to 10 mantissa bits by the tensor cores */
        return 2e-2;
    case GA_FP16: /* fp16 output: 11 bits */
        return 1e-2;
    case GA_BF16: /* bf16 output: 8 bits */
        return 2e-2;
    case GA_FP8: /* bf16 output, and Hopper's FP8 accumulation keeps fewer bits than fp32 */
        return 5e-2;
    case GA_INT8: /* int32 accumulation is exact */
        return 0;
    }
    return 0;
}

int gf_burn_intervals(double duration_s, double interval_s, double *actual)
{
    double iv = interval_s > 0 ? interval_s : fmin(60.0, fmax(1.0, duration_s / 10.0));
    int n = (int)ceil(duration_s / iv - 1e-9);
    if (n < 1)
        n = 1;
    if (n > GF_MAX_INTERVALS) {
        n = GF_MAX_INTERVALS;
        iv = duration_s / n;
    }
    *actual = iv;
    return n;
}

void gf_check_positions(int64_t m, int64_t n, uint64_t seed, int64_t *rows, int64_t *cols)
{
    int64_t corners[4][2] = {{0, 0}, {m - 1, 0}, {0, n - 1}, {m - 1, n - 1}};
    for (int s = 0; s < GF_CHECK_SAMPLES; s++) {
        if (s < 4) {
            rows[s] = corners[s][0];
            cols[s] = corners[s][1];
        } else {
            uint64_t h = gf_mix64(seed ^ (0xc0ffeeULL + (uint64_t)s));
            rows[s] = (int64_t)(h % (uint64_t)m);
            cols[s] = (int64_t)((h >> 32) % (uint64_t)n);
        }
    }
}

int gf_fastest_candidate(const double *seconds, int n, double margin)
{
    int chosen = -1;
    for (int i = 0; i < n; i++)
        if (seconds[i] > 0 && (chosen < 0 || seconds[i] < seconds[chosen]))
            chosen = i;
    if (chosen > 0 && seconds[0] > 0 && seconds[chosen] > seconds[0] * (1 - margin))
        chosen = 0;
    return chosen;
}
