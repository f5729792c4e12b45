/* The descriptors against an independent simulation of each collective: for every collective, type, op and
 * a range of rank counts, the outputs a correct collective produces pass the check and one corrupted element
 * is counted; nccl-tests' byte counts and bus factors; the minifloat codec; sizes; the -a aggregation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_coll.h"
#include "ar_nccltests.h"
#include "ar_sweep.h"
#include "ga_test.h"

/* The reduction of element i over every rank's input, computed here in double from the inputs. */
static double reduce_ref(ar_dtype t, ar_op op, void **in, int n, size_t i)
{
    double acc = ar_load(t, in[0], i);
    for (int r = 1; r < n; r++) {
        double v = ar_load(t, in[r], i);
        if (op == AR_SUM || op == AR_AVG)
            acc += v;
        else if (op == AR_PROD)
            acc *= v;
        else if (op == AR_MIN)
            acc = v < acc ? v : acc;
        else
            acc = v > acc ? v : acc;
    }
    if (op != AR_AVG)
        return acc;
    if (ar_dtype_get(t)->is_float)
        return acc / n;
    unsigned char tmp[8];
    ar_store_int(t, tmp, 0, (int64_t)acc); /* the integer sum wraps in the type, then divides */
    return (double)((int64_t)ar_load(t, tmp, 0) / n);
}

/* What rank r's output must be, element j, by the collective's definition. */
static double simulate(ar_coll_id c, const ar_pattern *p, void **in, int r, size_t j)
{
    const ar_counts *k = &p->counts;
    switch (c) {
    case AR_ALLREDUCE:
    case AR_REDUCE:
        return reduce_ref(p->type, p->op, in, p->nranks, j);
    case AR_REDUCE_SCATTER:
        return reduce_ref(p->type, p->op, in, p->nranks, (size_t)r * k->recv_count + j);
    case AR_ALLGATHER:
    case AR_HYPERCUBE: /* an allgather by pairwise exchanges */
    case AR_GATHER:    /* the root's output; the others' is not checked (see below) */
        return ar_load(p->type, in[j / k->send_count], j % k->send_count);
    case AR_SCATTER:
        return ar_load(p->type, in[p->root], (size_t)r * k->recv_count + j);
    case AR_BROADCAST:
        return ar_load(p->type, in[p->root], j);
    case AR_ALLTOALL:
        return ar_load(p->type, in[j / k->param_count], (size_t)r * k->param_count + j % k->param_count);
    default:
        return ar_load(p->type, in[(r - 1 + p->nranks) % p->nranks], j);
    }
}

static void check_collectives(void)
{
    const int rank_counts[] = {1, 2, 3, 5, 8};
    const size_t sizes[] = {0, 8, 56, 4000};
    int cases = 0;
    for (int c = 0; c < AR_NCOLLS; c++)
        for (int t = 0; t < AR_NTYPES; t++)
            for (int op = 0; op < AR_NOPS; op++) {
                if (!ar_coll_get((ar_coll_id)c)->reduces && op > 0)
                    continue;
                for (size_t ni = 0; ni < sizeof rank_counts / sizeof rank_counts[0]; ni++)
                    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                        int n = rank_counts[ni];
                        ar_pattern p = {(ar_dtype)t, (ar_op)op, n, n - 1, (uint32_t)si, {0}};
                        ar_coll_counts((ar_coll_id)c, sizes[si], (ar_dtype)t, n, &p.counts);
                        size_t es = ar_dtype_get((ar_dtype)t)->size;
                        void *in[8], *out = malloc(p.counts.recv_count * es + 1);
                        for (int r = 0; r < n; r++) {
                            in[r] = malloc(p.counts.send_count * es + 1);
                            ar_fill_input((ar_coll_id)c, &p, r, in[r]);
                        }
                        for (int r = 0; r < n; r++) {
                            for (size_t j = 0; j < p.counts.recv_count; j++)
                                ar_store(p.type, out, j, simulate((ar_coll_id)c, &p, in, r, j));
                            int64_t w = ar_count_wrong((ar_coll_id)c, &p, r, out);
                            CHECKF(w == 0, "%s %s %s n=%d size=%zu rank %d: %lld wrong in a correct output",
                                   ar_coll_get((ar_coll_id)c)->name, ar_dtype_get(p.type)->name,
                                   ar_op_name(p.op), n, sizes[si], r, (long long)w);
                            bool checked = !((c == AR_REDUCE || c == AR_GATHER) && r != p.root);
                            if (p.counts.recv_count > 0) {
                                /* far from the value, beyond the avg tolerance of fp8, and no integer wrap */
                                double v = ar_load(p.type, out, p.counts.recv_count - 1);
                                ar_store(p.type, out, p.counts.recv_count - 1, v > 8 ? 1 : v * 4 + 4);
                                w = ar_count_wrong((ar_coll_id)c, &p, r, out);
                                CHECKF(w == (checked ? 1 : 0),
                                       "%s %s %s n=%d rank %d: corrupted element: %lld wrong",
                                       ar_coll_get((ar_coll_id)c)->name, ar_dtype_get(p.type)->name,
                                       ar_op_name(p.op), n, r, (long long)w);
                            }
                            cases++;
                        }
                        for (int r = 0; r < n; r++)
                            free(in[r]);
                        free(out);
                    }
            }
    CHECKF(cases > 5000, "only %d cases ran", cases);
}

static void check_counts_and_factors(void)
{
    /* nccl-tests, 8 ranks, -b 1M, float: size printed, count printed, busbw at 1 s. */
    const struct {
        ar_coll_id c;
        size_t bytes, count;
        double busbw, algbw_share;
    } want[] = {
        {AR_ALLREDUCE, 1048576, 262144, 1048576e-9 * 2 * 7 / 8, 1.0},
        {AR_GATHER, 1048576, 32768, 1048576e-9 * 7 / 8, 1.0},
        {AR_SCATTER, 1048576, 32768, 1048576e-9 * 7 / 8, 1.0},
        /* hypercube: algbw = count x (n-1) x size / time, busbw = algbw */
        {AR_HYPERCUBE, 1048576, 32768, 1048576e-9 * 7 / 8, 7.0 / 8},
        {AR_ALLGATHER, 1048576, 32768, 1048576e-9 * 7 / 8, 1.0},
        {AR_REDUCE_SCATTER, 1048576, 32768, 1048576e-9 * 7 / 8, 1.0},
        {AR_ALLTOALL, 1048576, 32768, 1048576e-9 * 7 / 8, 1.0},
        {AR_BROADCAST, 1048576, 262144, 1048576e-9, 1.0},
        {AR_REDUCE, 1048576, 262144, 1048576e-9, 1.0},
        {AR_SENDRECV, 1048576, 262144, 1048576e-9, 1.0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ar_counts k;
        ar_coll_counts(want[i].c, 1048576, AR_FLOAT, 8, &k);
        double alg, bus;
        size_t bytes = ar_coll_bytes(&k, AR_FLOAT);
        ar_coll_bandwidth(want[i].c, bytes, 1.0, 8, &alg, &bus);
        CHECKF(bytes == want[i].bytes && k.param_count == want[i].count && fabs(bus - want[i].busbw) < 1e-12,
               "%s: bytes %zu count %zu busbw %g", ar_coll_get(want[i].c)->name, bytes, k.param_count, bus);
        double share = want[i].algbw_share > 0 ? want[i].algbw_share : 1.0;
        CHECKF(fabs(alg - bytes * 1e-9 * share) < 1e-12, "%s: algbw %g", ar_coll_get(want[i].c)->name, alg);
    }
    /* nccl-tests rounds the per-rank count down to a multiple of 16 bytes: (count / n) & ~(16 / size - 1) */
    const struct {
        ar_coll_id c;
        ar_dtype t;
        size_t size;
        int n;
        size_t param, send, recv, bytes;
    } aligned[] = {
        {AR_ALLGATHER, AR_FLOAT, 1000, 3, 80, 80, 240, 960},       /* 250 / 3 = 83 -> 80 */
        {AR_ALLGATHER, AR_INT8, 1000, 3, 320, 320, 960, 960},      /* 333 -> 320 */
        {AR_REDUCE_SCATTER, AR_HALF, 1000, 3, 160, 480, 160, 960}, /* 166 -> 160 */
        {AR_ALLTOALL, AR_DOUBLE, 1000, 3, 40, 120, 120, 960},      /* 41 -> 40 */
        {AR_GATHER, AR_BFLOAT16, 100, 4, 8, 8, 32, 64},            /* 12 -> 8 */
        {AR_SCATTER, AR_UINT64, 8, 2, 0, 0, 0, 0},                 /* 0: nothing left, as in nccl-tests */
        {AR_HYPERCUBE, AR_FLOAT, 4096, 4, 256, 256, 1024, 4096},   /* already aligned */
        {AR_ALLREDUCE, AR_FLOAT, 1000, 3, 250, 250, 250, 1000},    /* not per rank: not aligned */
    };
    for (size_t i = 0; i < sizeof aligned / sizeof aligned[0]; i++) {
        ar_counts k;
        ar_coll_counts(aligned[i].c, aligned[i].size, aligned[i].t, aligned[i].n, &k);
        CHECKF(k.param_count == aligned[i].param && k.send_count == aligned[i].send &&
                   k.recv_count == aligned[i].recv && ar_coll_bytes(&k, aligned[i].t) == aligned[i].bytes,
               "%s %s %zu B on %d ranks: count %zu send %zu recv %zu", ar_coll_get(aligned[i].c)->name,
               ar_dtype_get(aligned[i].t)->name, aligned[i].size, aligned[i].n, k.param_count, k.send_count,
               k.recv_count);
    }
    CHECK(ar_coll_unsupported(AR_HYPERCUBE, 6) != NULL && ar_coll_unsupported(AR_HYPERCUBE, 8) == NULL);
    CHECK(strcmp(ar_coll_op_label(AR_HYPERCUBE, AR_SUM), "") == 0 &&
          strcmp(ar_coll_op_label(AR_GATHER, AR_SUM), "none") == 0 &&
          strcmp(ar_coll_op_label(AR_ALLREDUCE, AR_MAX), "max") == 0);
}

static void check_codec(void)
{
    const struct {
        double v;
        int e, m;
        uint32_t bits;
    } cases[] = {
        {1.0, 5, 10, 0x3c00},
        {65504, 5, 10, 0x7bff},
        {ldexp(1, -24), 5, 10, 0x0001},
        {1 + ldexp(1, -11), 5, 10, 0x3c00},
        {1 + 3 * ldexp(1, -11), 5, 10, 0x3c02},
        {-2.0, 5, 10, 0xc000},
        {1.0, 8, 7, 0x3f80},
        {3.0, 8, 7, 0x4040},
        {1.0, 4, 3, 0x38},
        {448, 4, 3, 0x7e},
        {1000, 4, 3, 0x7e},
        {1.0, 5, 2, 0x3c},
        {57344, 5, 2, 0x7b},
        {1e6, 5, 2, 0x7c},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t b = ar_minifloat_encode(cases[i].v, cases[i].e, cases[i].m);
        CHECKF(b == cases[i].bits, "encode %g (e%dm%d): 0x%x, want 0x%x", cases[i].v, cases[i].e, cases[i].m,
               b, cases[i].bits);
    }
    for (uint32_t b = 0; b < 0x7c00; b++) /* every finite positive half round-trips */
        if (ar_minifloat_encode(ar_minifloat_decode(b, 5, 10), 5, 10) != b) {
            CHECKF(0, "half 0x%x does not round-trip", b);
            break;
        }
    for (uint32_t b = 0; b < 0x7f; b++)
        CHECKF(ar_minifloat_encode(ar_minifloat_decode(b, 4, 3), 4, 3) == b, "e4m3 0x%x does not round-trip",
               b);
    CHECKF(isnan(ar_minifloat_decode(0x7f, 4, 3)) && isinf(ar_minifloat_decode(0x7c, 5, 2)), "fp8 specials");
    CHECKF(ar_ulps(AR_HALF, 1.0 + ldexp(1, -9), 1.0) == 2.0, "ulps");
    CHECKF(ar_check_skip_reason(AR_FP8_E4M3, AR_AVG) && ar_check_skip_reason(AR_FP8_E5M2, AR_AVG) &&
               !ar_check_skip_reason(AR_FP8_E4M3, AR_SUM) && !ar_check_skip_reason(AR_HALF, AR_AVG) &&
               !ar_check_skip_reason(AR_FLOAT, AR_AVG),
           "fp8 avg is the one combination not checked");
    CHECKF(ar_check_tolerance_ulps(AR_FLOAT, AR_AVG, 8) == 3 &&
               ar_check_tolerance_ulps(AR_BFLOAT16, AR_AVG, 1024) == 3 &&
               ar_check_tolerance_ulps(AR_INT32, AR_AVG, 8) == 0 &&
               ar_check_tolerance_ulps(AR_FLOAT, AR_SUM, 8) == 0,
           "tolerances");
}

/* v rounded to the type, as a GPU stores it. */
static double round_to(ar_dtype t, double v)
{
    unsigned char tmp[8];
    ar_store(t, tmp, 0, v);
    return ar_load(t, tmp, 0);
}

/* Issue 28 finding 17: avg of bf16 and half on large communicators, reduced as NCCL does it (each input times
 * 1/n rounded to the type, partial sums rounded at every step, in ring order from every starting rank). The
 * check passes that output and still sees an element 5 % off; the tolerance of n + 1 ULPs it had let a 5 %
 * error pass at n = 1024 (and, with every rank contributing, the right answer could lie beyond it). */
static void check_avg_large_communicators(void)
{
    const ar_dtype types[] = {AR_BFLOAT16, AR_HALF, AR_FLOAT};
    const int sizes[] = {8, 1024, 4096};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (size_t ni = 0; ni < sizeof sizes / sizeof sizes[0]; ni++) {
            int n = sizes[ni];
            ar_dtype t = types[ti];
            ar_pattern p = {t, AR_AVG, n, 0, 3, {0}};
            ar_coll_counts(AR_ALLREDUCE, 64 * ar_dtype_get(t)->size, t, n, &p.counts);
            size_t count = p.counts.send_count, es = ar_dtype_get(t)->size;
            unsigned char *in = malloc((size_t)n * count * es), *out = malloc(count * es);
            for (int r = 0; r < n; r++)
                ar_fill_input(AR_ALLREDUCE, &p, r, in + (size_t)r * count * es);
            double scale = round_to(t, 1.0 / n);
            for (size_t j = 0; j < count; j++) {
                double acc = 0;
                for (int k = 0; k < n; k++) {
                    int r = (int)((j + (size_t)k) % (size_t)n); /* the ring starts at a different rank */
                    acc = round_to(t, acc + round_to(t, ar_load(t, in + (size_t)r * count * es, j) * scale));
                }
                ar_store(t, out, j, acc);
            }
            int64_t w = ar_count_wrong(AR_ALLREDUCE, &p, 0, out);
            CHECKF(w == 0, "%s avg n=%d: %lld wrong in NCCL's rounding", ar_dtype_get(t)->name, n,
                   (long long)w);
            ar_store(t, out, 5, ar_load(t, out, 5) * 1.05);
            w = ar_count_wrong(AR_ALLREDUCE, &p, 0, out);
            CHECKF(w == 1, "%s avg n=%d: an element 5 %% off counted %lld wrong", ar_dtype_get(t)->name, n,
                   (long long)w);
            free(in);
            free(out);
        }
}

static void check_sizes_and_aggregation(void)
{
    uint64_t s[64];
    char err[160];
    CHECKF(ar_sweep_sizes(8, 1 << 20, 2, 0, s, 64, err, sizeof err) == 18 && s[17] == 1 << 20, "8..1M x2");
    CHECKF(ar_sweep_sizes(1, 100, 1, 1, s, 64, err, sizeof err) == -1, "more than 64 sizes accepted");
    CHECKF(ar_sweep_sizes(16, 8, 2, 0, s, 64, err, sizeof err) == -1, "min > max accepted");
    CHECKF(ar_sweep_sizes(1024, 4096, 1, 1024, s, 64, err, sizeof err) == 4 && s[3] == 4096,
           "additive steps");
    CHECKF(ar_sweep_sizes(32, 32, 1, 0, s, 64, err, sizeof err) == 1, "single size");

    ar_sample smp[4] = {{{1e-6, 2e-6}, {0, -1}, {1, 1}, {1, 1}, {-1, -1}},
                        {{2e-6, 2e-6}, {3, -1}, {1, 1}, {1, 1}, {-1, -1}},
                        {{6e-6, 2e-6}, {0, -1}, {1, 1}, {1, 1}, {-1, -1}},
                        {{3e-6, 2e-6}, {1, -1}, {1, 1}, {1, 1}, {-1, -1}}};
    const ar_sample *ptr[4] = {&smp[0], &smp[1], &smp[2], &smp[3]};
    const double want[4] = {1e-6, 3e-6, 1e-6, 6e-6};
    for (int mode = 0; mode < 4; mode++) {
        ar_agg a;
        ar_aggregate(ptr, 4, 0, (ar_time_mode)mode, &a);
        CHECKF(fabs(a.time_s - want[mode]) < 1e-15 && a.slowest == 2 && a.wrong == 4 &&
                   fabs(a.mean_s - 3e-6) < 1e-15,
               "-a %d: time %g slowest %d wrong %lld", mode, a.time_s, a.slowest, (long long)a.wrong);
    }
    ar_agg a;
    ar_aggregate(ptr, 4, 1, AR_TIME_AVG, &a);
    CHECKF(a.wrong == -1, "unchecked placement reads as checked");
}

/* nccl-tests' getFloatStr: as many decimals as fit the column, then scientific notation. */
static void check_nccltests_numbers(void)
{
    const struct {
        double v;
        int width;
        const char *want;
    } cases[] = {
        {5.831, 7, "   5.83"},      {12345.678, 7, "12345.7"}, {1234567.8, 7, "1234568"},
        {12345678.0, 7, "1.2e+07"}, {0.004, 6, "  0.00"},      {123.456, 6, "123.46"},
        {1234.5, 6, "1234.5"},      {123456.0, 6, "123456"},   {1234567.0, 6, " 1e+06"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        ar_nt_float(cases[i].v, cases[i].width, buf);
        CHECKF(strcmp(buf, cases[i].want) == 0, "%g in %d: '%s', want '%s'", cases[i].v, cases[i].width, buf,
               cases[i].want);
    }
    uint32_t d, b, v;
    CHECK(ar_nt_parse_pci("00000000:17:00.0", &d, &b, &v) == 0 && d == 0 && b == 0x17 && v == 0);
    CHECK(ar_nt_parse_pci("0001:c3:1f.0", &d, &b, &v) == 0 && d == 1 && b == 0xc3 && v == 0x1f);
    CHECK(ar_nt_parse_pci("garbage", &d, &b, &v) != 0);
    /* -I statistics: nearest-rank p99, population standard deviation, the skipped iterations left out */
    double t[] = {100, 1, 2, 3, 4};
    ar_nt_iter it = {.skipped = 1, .n = 5, .times = t};
    ar_nt_iter_stats(&it);
    CHECKF(it.min == 1 && it.max == 4 && it.avg == 2.5 && it.p50 == 3 && it.p99 == 4 &&
               fabs(it.stdev - sqrt(1.25)) < 1e-12 && fabs(it.cv_pct - sqrt(1.25) / 2.5 * 100) < 1e-9,
           "stats min %g max %g avg %g p50 %g p99 %g sd %g", it.min, it.max, it.avg, it.p50, it.p99,
           it.stdev);
}

int main(void)
{
    check_nccltests_numbers();
    check_collectives();
    check_counts_and_factors();
    check_codec();
    check_avg_large_communicators();
    check_sizes_and_aggregation();
    return ga_test_finish();
}
