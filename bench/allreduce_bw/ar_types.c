#include "ar_types.h"

#include <math.h>
#include <string.h>

static const ar_dtype_info types[AR_NTYPES] = {
    [AR_INT8] = {"int8", 1, false, true, 0, 0, INT8_MAX, false},
    [AR_UINT8] = {"uint8", 1, false, false, 0, 0, UINT8_MAX, false},
    [AR_INT32] = {"int32", 4, false, true, 0, 0, INT32_MAX, false},
    [AR_UINT32] = {"uint32", 4, false, false, 0, 0, UINT32_MAX, false},
    [AR_INT64] = {"int64", 8, false, true, 0, 0, INT64_MAX, false},
    [AR_UINT64] = {"uint64", 8, false, false, 0, 0, INT64_MAX, false},
    [AR_HALF] = {"half", 2, true, true, 5, 10, 1 << 11, false},
    [AR_FLOAT] = {"float", 4, true, true, 8, 23, 1 << 24, false},
    [AR_DOUBLE] = {"double", 8, true, true, 11, 52, (int64_t)1 << 53, false},
    [AR_BFLOAT16] = {"bfloat16", 2, true, true, 8, 7, 1 << 8, false},
    [AR_FP8_E4M3] = {"f8e4m3", 1, true, true, 4, 3, 1 << 4, true},
    [AR_FP8_E5M2] = {"f8e5m2", 1, true, true, 5, 2, 1 << 3, true},
};

static const char *const op_names[AR_NOPS] = {"sum", "prod", "min", "max", "avg"};

const ar_dtype_info *ar_dtype_get(ar_dtype t)
{
    return &types[t];
}

const char *ar_op_name(ar_op op)
{
    return op_names[op];
}

/* nccl-tests' spellings, and the aliases its users type. */
static const struct {
    const char *alias;
    ar_dtype type;
} type_aliases[] = {
    {"char", AR_INT8},     {"int", AR_INT32},           {"fp16", AR_HALF},           {"float16", AR_HALF},
    {"fp32", AR_FLOAT},    {"float32", AR_FLOAT},       {"fp64", AR_DOUBLE},         {"float64", AR_DOUBLE},
    {"bf16", AR_BFLOAT16}, {"fp8_e4m3", AR_FP8_E4M3},   {"fp8_e5m2", AR_FP8_E5M2},   {"e4m3", AR_FP8_E4M3},
    {"e5m2", AR_FP8_E5M2}, {"float8e4m3", AR_FP8_E4M3}, {"float8e5m2", AR_FP8_E5M2},
};

int ar_dtype_parse(const char *name, ar_dtype *out)
{
    for (int t = 0; t < AR_NTYPES; t++)
        if (strcmp(name, types[t].name) == 0) {
            *out = (ar_dtype)t;
            return 0;
        }
    for (size_t i = 0; i < sizeof type_aliases / sizeof type_aliases[0]; i++)
        if (strcmp(name, type_aliases[i].alias) == 0) {
            *out = type_aliases[i].type;
            return 0;
        }
    return -1;
}

int ar_op_parse(const char *name, ar_op *out)
{
    for (int o = 0; o < AR_NOPS; o++)
        if (strcmp(name, op_names[o]) == 0) {
            *out = (ar_op)o;
            return 0;
        }
    return -1;
}

/* e4m3 is the "fn" variant of fp8: no infinities, the top exponent holds normal numbers up to 448. */
static bool has_infinity(int exp_bits, int man_bits)
{
    return !(exp_bits == 4 && man_bits == 3);
}

uint32_t ar_minifloat_encode(double v, int exp_bits, int man_bits)
{
    uint32_t sign = signbit(v) ? 1u : 0u;
    uint32_t sign_bit = sign << (exp_bits + man_bits);
    uint32_t exp_max = (1u << exp_bits) - 1;
    if (isnan(v))
        return sign_bit | (exp_max << man_bits) | ((1u << man_bits) - 1);
    double a = fabs(v);
    if (a == 0.0)
        return sign_bit;
    int bias = (1 << (exp_bits - 1)) - 1;
    int e;
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
    uint32_t top = has_infinity(exp_bits, man_bits) ? exp_max - 1 : exp_max;
    uint32_t top_mant = has_infinity(exp_bits, man_bits) ? (1u << man_bits) - 1 : (1u << man_bits) - 2;
    if (biased > top || (biased == top && mant > top_mant)) { /* overflow: infinity, or saturate (e4m3) */
        if (has_infinity(exp_bits, man_bits))
            return sign_bit | (exp_max << man_bits);
        return sign_bit | (top << man_bits) | top_mant;
    }
    return sign_bit | (biased << man_bits) | mant;
}

double ar_minifloat_decode(uint32_t bits, int exp_bits, int man_bits)
{
    uint32_t exp_max = (1u << exp_bits) - 1;
    uint32_t mant = bits & ((1u << man_bits) - 1);
    uint32_t biased = (bits >> man_bits) & exp_max;
    bool neg = (bits >> (exp_bits + man_bits)) & 1u;
    int bias = (1 << (exp_bits - 1)) - 1;
    double v;
    if (biased == exp_max && has_infinity(exp_bits, man_bits))
        v = mant ? NAN : INFINITY;
    else if (biased == exp_max && mant == (1u << man_bits) - 1)
        v = NAN;
    else if (biased == 0)
        v = ldexp((double)mant, 1 - bias - man_bits);
    else
        v = ldexp((double)(mant | (1u << man_bits)), (int)biased - bias - man_bits);
    return neg ? -v : v;
}

double ar_load(ar_dtype t, const void *buf, size_t i)
{
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
        return ar_minifloat_decode(((const uint16_t *)buf)[i], types[t].exp_bits, types[t].man_bits);
    case AR_FP8_E4M3:
    case AR_FP8_E5M2:
        return ar_minifloat_decode(((const uint8_t *)buf)[i], types[t].exp_bits, types[t].man_bits);
    default:
        return NAN;
    }
}

void ar_store_int(ar_dtype t, void *buf, size_t i, int64_t v)
{
    uint64_t u = (uint64_t)v; /* conversions to unsigned wrap modulo 2^n: the hardware's integer overflow */
    switch (t) {
    case AR_INT8:
    case AR_UINT8:
        ((uint8_t *)buf)[i] = (uint8_t)u;
        break;
    case AR_INT32:
    case AR_UINT32:
        ((uint32_t *)buf)[i] = (uint32_t)u;
        break;
    case AR_INT64:
    case AR_UINT64:
        ((uint64_t *)buf)[i] = u;
        break;
    default:
        ar_store(t, buf, i, (double)v);
    }
}

void ar_store(ar_dtype t, void *buf, size_t i, double v)
{
    switch (t) {
    case AR_FLOAT:
        ((float *)buf)[i] = (float)v;
        break;
    case AR_DOUBLE:
        ((double *)buf)[i] = v;
        break;
    case AR_HALF:
    case AR_BFLOAT16:
        ((uint16_t *)buf)[i] = (uint16_t)ar_minifloat_encode(v, types[t].exp_bits, types[t].man_bits);
        break;
    case AR_FP8_E4M3:
    case AR_FP8_E5M2:
        ((uint8_t *)buf)[i] = (uint8_t)ar_minifloat_encode(v, types[t].exp_bits, types[t].man_bits);
        break;
    default:
        ar_store_int(t, buf, i, (int64_t)trunc(v));
    }
}

double ar_ulps(ar_dtype t, double got, double expected)
{
    const ar_dtype_info *d = &types[t];
    if (!d->is_float)
        return got == expected ? 0.0 : INFINITY;
    if (isnan(got))
        return INFINITY;
    if (got == expected)
        return 0.0;
    int e = 0;
    frexp(fabs(expected) > 0 ? fabs(expected) : 1.0, &e);
    /* below the smallest normal the spacing stays that of the subnormals */
    int min_exp = 2 - (1 << (d->exp_bits - 1)); /* 1 - bias */
    double ulp = ldexp(1.0, (e - 1 > min_exp ? e - 1 : min_exp) - d->man_bits);
    return fabs(got - expected) / ulp;
}
