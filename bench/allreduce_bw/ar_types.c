#include "ar_types.h"

#include "ar_elem.h"

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

/* The codec is ar_elem.h's, shared with the device check. */
uint32_t ar_minifloat_encode(double v, int exp_bits, int man_bits)
{
    return ar_elem_minifloat_encode(v, exp_bits, man_bits);
}

double ar_minifloat_decode(uint32_t bits, int exp_bits, int man_bits)
{
    return ar_elem_minifloat_decode(bits, exp_bits, man_bits);
}

double ar_load(ar_dtype t, const void *buf, size_t i)
{
    return ar_elem_load(t, buf, i);
}

void ar_store_int(ar_dtype t, void *buf, size_t i, int64_t v)
{
    if (ar_elem_is_float(t))
        ar_elem_store(t, buf, i, (double)v);
    else
        ar_elem_store_int(t, buf, i, v);
}

void ar_store(ar_dtype t, void *buf, size_t i, double v)
{
    ar_elem_store(t, buf, i, v);
}

double ar_ulps(ar_dtype t, double got, double expected)
{
    return ar_elem_ulps(t, got, expected);
}
