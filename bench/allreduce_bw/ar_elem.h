/* The per-element maths of the check, written once for the host (C) and the GPU (nvcc): the value a rank
 * writes at index i of its input and the exact value expected at index j of its output, from (collective,
 * type, op, ranks, rank, seed, index) alone, with the codec of every type. The host check (ar_coll.c) and the
 * device check (ar_check.cu) both call these, so the host tests exercise the maths the GPU runs, and the test
 * double's stand-ins of the two kernels run them too. Pure: no MPI, no CUDA runtime, no tables in memory.
 *
 * Data (exact whatever the order of the reduction): see ar_coll.c's comment and docs/allreduce_bw.md. */
#ifndef AR_ELEM_H
#define AR_ELEM_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ar_coll.h"

#ifdef __CUDACC__
#define AR_HD __host__ __device__ static inline
#else
#define AR_HD static inline
#endif

/* One check as the kernels take it, by value (48 bytes: six words of a launch's arguments). */
typedef struct {
    uint8_t coll, type, op, pad;
    int32_t nranks, root, rank;
    uint32_t seed, pad2;
    uint64_t send_count, recv_count, param_count;
} ar_elem_job;

/* ---- the types, by their enum alone (ar_types.c's table says the same; a test holds them equal) ---- */

AR_HD bool ar_elem_is_float(int t)
{
    return t >= AR_HALF;
}

AR_HD void ar_elem_layout(int t, int *exp_bits, int *man_bits)
{
    int e = 0, m = 0;
    switch (t) {
    case AR_HALF:
        e = 5, m = 10;
        break;
    case AR_FLOAT:
        e = 8, m = 23;
        break;
    case AR_DOUBLE:
        e = 11, m = 52;
        break;
    case AR_BFLOAT16:
        e = 8, m = 7;
        break;
    case AR_FP8_E4M3:
        e = 4, m = 3;
        break;
    case AR_FP8_E5M2:
        e = 5, m = 2;
        break;
    default:
        break;
    }
    *exp_bits = e;
    *man_bits = m;
}

/* The largest value data movement writes: every integer up to it is exact in the type (at most 2^20). */
AR_HD int64_t ar_elem_data_limit(int t)
{
    switch (t) {
    case AR_INT8:
        return 127;
    case AR_UINT8:
        return 255;
    case AR_HALF:
        return 1 << 11;
    case AR_BFLOAT16:
        return 1 << 8;
    case AR_FP8_E4M3:
        return 1 << 4;
    case AR_FP8_E5M2:
        return 1 << 3;
    default:
        return 1 << 20;
    }
}

/* ---- the codec: minifloats (half, bfloat16, fp8) round to nearest even, integers wrap ---- */

/* e4m3 is the "fn" variant of fp8: no infinities, the top exponent holds normal numbers up to 448. */
AR_HD bool ar_elem_has_infinity(int exp_bits, int man_bits)
{
    return !(exp_bits == 4 && man_bits == 3);
}

AR_HD uint32_t ar_elem_minifloat_encode(double v, int exp_bits, int man_bits)
{
    uint32_t sign_bit = (signbit(v) ? 1u : 0u) << (exp_bits + man_bits);
    uint32_t exp_max = (1u << exp_bits) - 1;
    if (isnan(v))
        return sign_bit | (exp_max << man_bits) | ((1u << man_bits) - 1);
    double a = fabs(v);
    if (a == 0.0)
        return sign_bit;
    int bias = (1 << (exp_bits - 1)) - 1, e;
    frexp(a, &e);
    e -= 1; /* a = 1.f * 2^e */
    int min_normal = 1 - bias;
    uint32_t biased, mant;
    if (e < min_normal) {
        double m = nearbyint(ldexp(a, man_bits - min_normal)); /* subnormal: units of 2^(min_normal-man) */
        biased = m >= (double)(1u << man_bits) ? 1 : 0;        /* rounded up into the smallest normal */
        mant = biased ? 0 : (uint32_t)m;
    } else {
        double m = nearbyint(ldexp(a, man_bits - e)); /* in [2^man, 2^(man+1)] */
        if (m >= (double)(1u << (man_bits + 1))) {
            m /= 2;
            e++;
        }
        biased = (uint32_t)(e + bias);
        mant = (uint32_t)m - (1u << man_bits);
    }
    bool inf = ar_elem_has_infinity(exp_bits, man_bits);
    uint32_t top = inf ? exp_max - 1 : exp_max;
    uint32_t top_mant = inf ? (1u << man_bits) - 1 : (1u << man_bits) - 2;
    if (biased > top || (biased == top && mant > top_mant)) /* overflow: infinity, or saturate (e4m3) */
        return inf ? sign_bit | (exp_max << man_bits) : sign_bit | (top << man_bits) | top_mant;
    return sign_bit | (biased << man_bits) | mant;
}

AR_HD double ar_elem_minifloat_decode(uint32_t bits, int exp_bits, int man_bits)
{
    uint32_t exp_max = (1u << exp_bits) - 1;
    uint32_t mant = bits & ((1u << man_bits) - 1);
    uint32_t biased = (bits >> man_bits) & exp_max;
    bool neg = (bits >> (exp_bits + man_bits)) & 1u;
    int bias = (1 << (exp_bits - 1)) - 1;
    double v;
    if (biased == exp_max && ar_elem_has_infinity(exp_bits, man_bits))
        v = mant ? NAN : INFINITY;
    else if (biased == exp_max && mant == (1u << man_bits) - 1)
        v = NAN;
    else if (biased == 0)
        v = ldexp((double)mant, 1 - bias - man_bits);
    else
        v = ldexp((double)(mant | (1u << man_bits)), (int)biased - bias - man_bits);
    return neg ? -v : v;
}

AR_HD double ar_elem_load(int t, const void *buf, size_t i)
{
    int eb, mb;
    ar_elem_layout(t, &eb, &mb);
    switch (t) {
    case AR_INT8:
        return ((const int8_t *)buf)[i];
    case AR_UINT8:
        return ((const uint8_t *)buf)[i];
    case AR_INT32:
        return ((const int32_t *)buf)[i];
    case AR_UINT32:
        return ((const uint32_t *)buf)[i];
    case AR_INT64:
        return (double)((const int64_t *)buf)[i];
    case AR_UINT64:
        return (double)((const uint64_t *)buf)[i];
    case AR_FLOAT:
        return ((const float *)buf)[i];
    case AR_DOUBLE:
        return ((const double *)buf)[i];
    case AR_HALF:
    case AR_BFLOAT16:
        return ar_elem_minifloat_decode(((const uint16_t *)buf)[i], eb, mb);
    case AR_FP8_E4M3:
    case AR_FP8_E5M2:
        return ar_elem_minifloat_decode(((const uint8_t *)buf)[i], eb, mb);
    default:
        return NAN;
    }
}

/* conversions to unsigned wrap modulo 2^n: the hardware's integer overflow */
AR_HD void ar_elem_store_int(int t, void *buf, size_t i, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (t) {
    case AR_INT8:
    case AR_UINT8:
        ((uint8_t *)buf)[i] = (uint8_t)u;
        break;
    case AR_INT32:
    case AR_UINT32:
        ((uint32_t *)buf)[i] = (uint32_t)u;
        break;
    default:
        ((uint64_t *)buf)[i] = u;
    }
}

AR_HD void ar_elem_store(int t, void *buf, size_t i, double v)
{
    int eb, mb;
    ar_elem_layout(t, &eb, &mb);
    switch (t) {
    case AR_FLOAT:
        ((float *)buf)[i] = (float)v;
        break;
    case AR_DOUBLE:
        ((double *)buf)[i] = v;
        break;
    case AR_HALF:
    case AR_BFLOAT16:
        ((uint16_t *)buf)[i] = (uint16_t)ar_elem_minifloat_encode(v, eb, mb);
        break;
    case AR_FP8_E4M3:
    case AR_FP8_E5M2:
        ((uint8_t *)buf)[i] = (uint8_t)ar_elem_minifloat_encode(v, eb, mb);
        break;
    default:
        ar_elem_store_int(t, buf, i, (int64_t)trunc(v));
    }
}

/* The distance in units in the last place of the type at the expected value (the avg bound). */
AR_HD double ar_elem_ulps(int t, double got, double expected)
{
    if (!ar_elem_is_float(t))
        return got == expected ? 0.0 : INFINITY;
    if (isnan(got))
        return INFINITY;
    if (got == expected)
        return 0.0;
    int eb, mb, e = 0;
    ar_elem_layout(t, &eb, &mb);
    frexp(fabs(expected) > 0 ? fabs(expected) : 1.0, &e);
    int min_exp =
        2 - (1 << (eb - 1)); /* 1 - bias: below the smallest normal the spacing stays the subnormals' */
    double ulp = ldexp(1.0, (e - 1 > min_exp ? e - 1 : min_exp) - mb);
    return fabs(got - expected) / ulp;
}

/* 0 (exact) except avg on floating-point types: two rounded products (x / n, with 1/n itself rounded) and
 * their rounded sum are within 3 ULPs of the exact (a + 1) / n whatever n. */
AR_HD double ar_elem_tolerance_ulps(int t, int op)
{
    return op == AR_AVG && ar_elem_is_float(t) ? 3.0 : 0.0;
}

/* ---- the data ---- */

AR_HD double ar_elem_mark(const ar_elem_job *j, uint64_t i)
{
    return (double)(1 + (i + j->seed) % 3);
}

AR_HD double ar_elem_reduce_input(const ar_elem_job *j, int rank, uint64_t i)
{
    uint64_t n = (uint64_t)j->nranks;
    bool first = (uint64_t)rank == i % n;
    bool second = n > 1 && (uint64_t)rank == (i + 1) % n;
    double a = ar_elem_mark(j, i);
    switch (j->op) {
    case AR_SUM:
        return (first ? a : 0) + (second ? 1 : 0);
    case AR_PROD:
        return (first ? a : 1) * (second ? 2 : 1);
    case AR_MIN:
        return first ? a : (second ? 3 : 4);
    case AR_MAX:
        return first ? a : (second ? 1 : 0);
    default: /* avg: floats as sum; integers every rank a(i) */
        return ar_elem_is_float(j->type) ? (first ? a : 0) + (second ? 1 : 0) : a;
    }
}

/* Two's complement wrap of v to the width and signedness of an integer type. */
AR_HD int64_t ar_elem_wrap_int(int t, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (t) {
    case AR_INT8:
        return (int8_t)(uint8_t)u;
    case AR_UINT8:
        return (uint8_t)u;
    case AR_INT32:
        return (int32_t)(uint32_t)u;
    case AR_UINT32:
        return (uint32_t)u;
    default:
        return v;
    }
}

AR_HD double ar_elem_reduce_expected(const ar_elem_job *j, uint64_t i)
{
    double a = ar_elem_mark(j, i);
    bool two = j->nranks > 1;
    switch (j->op) {
    case AR_SUM:
        return a + (two ? 1 : 0);
    case AR_PROD:
        return a * (two ? 2 : 1);
    case AR_MIN:
    case AR_MAX:
        return a;
    default:
        if (ar_elem_is_float(j->type))
            return (a + (two ? 1 : 0)) / j->nranks;
        /* integer avg: the sum wraps in the type, then divides (truncating), as NCCL's and our host's do */
        return (double)(ar_elem_wrap_int(j->type, (int64_t)a * j->nranks) / j->nranks);
    }
}

AR_HD double ar_elem_data_value(const ar_elem_job *j, int rank, uint64_t i)
{
    return (double)(1 + ((uint64_t)rank * 7u + i * 3u + j->seed) % (uint64_t)ar_elem_data_limit(j->type));
}

AR_HD bool ar_elem_reduces(int coll)
{
    return coll == AR_ALLREDUCE || coll == AR_REDUCE_SCATTER || coll == AR_REDUCE;
}

/* The value the job's rank writes at index i of its input (send_count elements). */
AR_HD double ar_elem_input(const ar_elem_job *j, uint64_t i)
{
    return ar_elem_reduces(j->coll) ? ar_elem_reduce_input(j, j->rank, i) : ar_elem_data_value(j, j->rank, i);
}

/* The value expected at index k of the job's rank's output (recv_count elements); false where nothing is
 * expected (reduce and gather off the root). */
AR_HD bool ar_elem_expected(const ar_elem_job *j, uint64_t k, double *v)
{
    int r = j->rank, n = j->nranks;
    uint64_t per = j->send_count, pc = j->param_count, rc = j->recv_count;
    bool off_root = r != j->root;
    switch (j->coll) {
    case AR_ALLREDUCE:
        *v = ar_elem_reduce_expected(j, k);
        return true;
    case AR_REDUCE:
        *v = ar_elem_reduce_expected(j, k);
        return !off_root;
    case AR_REDUCE_SCATTER:
        *v = ar_elem_reduce_expected(j, (uint64_t)r * rc + k);
        return true;
    case AR_BROADCAST:
        *v = ar_elem_data_value(j, j->root, k);
        return true;
    case AR_ALLTOALL:
        *v = ar_elem_data_value(j, (int)(k / pc), (uint64_t)r * pc + k % pc);
        return true;
    case AR_SENDRECV:
        *v = ar_elem_data_value(j, (r - 1 + n) % n, k);
        return true;
    case AR_SCATTER:
        *v = ar_elem_data_value(j, j->root, (uint64_t)r * rc + k);
        return true;
    case AR_GATHER:
        *v = ar_elem_data_value(j, (int)(k / per), k % per);
        return !off_root;
    default: /* allgather, hypercube */
        *v = ar_elem_data_value(j, (int)(k / per), k % per);
        return true;
    }
}

/* The job of rank's check of a pattern. */
AR_HD ar_elem_job ar_elem_job_of(ar_coll_id id, const ar_pattern *p, int rank)
{
    ar_elem_job j = {(uint8_t)id,
                     (uint8_t)p->type,
                     (uint8_t)p->op,
                     0,
                     p->nranks,
                     p->root,
                     rank,
                     p->seed,
                     0,
                     p->counts.send_count,
                     p->counts.recv_count,
                     p->counts.param_count};
    return j;
}

/* Whether the output element at index k, read as got, is wrong (false where nothing is expected). */
AR_HD bool ar_elem_wrong(const ar_elem_job *j, uint64_t k, double got)
{
    double want, tol = ar_elem_tolerance_ulps(j->type, j->op);
    if (!ar_elem_expected(j, k, &want))
        return false;
    return got != want && !(tol > 0 && ar_elem_ulps(j->type, got, want) <= tol);
}

#endif
