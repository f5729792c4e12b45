/* Helpers shared by the two backends (compiled without CUDA). */
#include <math.h>

#include "gf_backend.h"
#include "gf_random.h"

double gf_check_tolerance(int dtype)
{
    switch (dtype) {
    case TP_FP64:
        return 1e-10;
    case TP_FP32:
        return 1e-4;
    case TP_TF32: /* inputs rounded to 10 mantissa bits by the tensor cores */
        return 2e-2;
    case TP_FP16: /* fp16 output: 11 bits */
        return 1e-2;
    case TP_BF16: /* bf16 output: 8 bits */
        return 2e-2;
    case TP_FP8: /* bf16 output, and Hopper's FP8 accumulation keeps fewer bits than fp32 */
        return 5e-2;
    case TP_INT8: /* int32 accumulation is exact */
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
