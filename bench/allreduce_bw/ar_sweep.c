#include "ar_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ar_sweep_sizes(uint64_t min_bytes, uint64_t max_bytes, uint64_t factor, uint64_t step, uint64_t *out,
                   int max_n, char *err, size_t errlen)
{
    if (min_bytes > max_bytes) {
        snprintf(err, errlen, "--minbytes %llu is larger than --maxbytes %llu", (unsigned long long)min_bytes,
                 (unsigned long long)max_bytes);
        return -1;
    }
    if (factor <= 1 && step == 0 && min_bytes != max_bytes) {
        snprintf(err, errlen, "--stepbytes 0 with --stepfactor 1 never reaches --maxbytes");
        return -1;
    }
    if (factor > 1 && min_bytes == 0) {
        snprintf(err, errlen, "--minbytes 0 with --stepfactor %llu never grows", (unsigned long long)factor);
        return -1;
    }
    int n = 0;
    for (uint64_t s = min_bytes; s <= max_bytes;) {
        if (n == max_n) {
            snprintf(err, errlen, "the sweep has more than %d sizes: raise --stepfactor or --stepbytes",
                     max_n);
            return -1;
        }
        out[n++] = s;
        uint64_t next = factor > 1 ? s * factor : s + step;
        if (next <= s) /* overflow, or a single size */
            break;
        s = next;
    }
    return n;
}

void ar_aggregate(const ar_sample *const *samples, int n, int placement, ar_time_mode mode, ar_agg *out)
{
    memset(out, 0, sizeof *out);
    out->wrong = -1;
    if (n <= 0)
        return;
    double sum = 0;
    out->min_s = out->max_s = samples[0]->time_s[placement];
    for (int i = 0; i < n; i++) {
        double t = samples[i]->time_s[placement];
        sum += t;
        if (t < out->min_s)
            out->min_s = t;
        if (t > out->max_s) {
            out->max_s = t;
            out->slowest = i;
        }
        int64_t w = samples[i]->wrong[placement];
        if (w >= 0)
            out->wrong = (out->wrong < 0 ? 0 : out->wrong) + w;
    }
    out->mean_s = sum / n;
    switch (mode) {
    case AR_TIME_RANK0:
        out->time_s = samples[0]->time_s[placement];
        break;
    case AR_TIME_MIN:
        out->time_s = out->min_s;
        break;
    case AR_TIME_MAX:
        out->time_s = out->max_s;
        break;
    default:
        out->time_s = out->mean_s;
    }
}
