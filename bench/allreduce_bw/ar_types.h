/* Element types and reduction operations of the sweep, with a host-side codec for every type (the check and
 * the host path's user-defined MPI operations read and write elements through it). Pure: no MPI, no CUDA. */
#ifndef AR_TYPES_H
#define AR_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    AR_INT8,
    AR_UINT8,
    AR_INT32,
    AR_UINT32,
    AR_INT64,
    AR_UINT64,
    AR_HALF,
    AR_FLOAT,
    AR_DOUBLE,
    AR_BFLOAT16,
    AR_FP8_E4M3,
    AR_FP8_E5M2,
    AR_NTYPES
} ar_dtype;

typedef enum { AR_SUM, AR_PROD, AR_MIN, AR_MAX, AR_AVG, AR_NOPS } ar_op;

typedef struct {
    const char *name; /* as nccl-tests spells it: "float", "bfloat16" */
    size_t size;      /* bytes per element */
    bool is_float;
    bool is_signed;
    int exp_bits, man_bits; /* floating-point layout (explicit mantissa bits) */
    int64_t exact_max;      /* every integer in [0, exact_max] is exactly representable */
    bool fp8;               /* needs a GPU of compute capability >= 9.0 */
} ar_dtype_info;

const ar_dtype_info *ar_dtype_get(ar_dtype t);
const char *ar_op_name(ar_op op);

/* Parse a name; returns 0, or -1 when unknown. "all" is for the caller to handle. */
int ar_dtype_parse(const char *name, ar_dtype *out);
int ar_op_parse(const char *name, ar_op *out);

/* Element i of buf as a double (integers exactly up to 2^53), and its store: floating types round to nearest
 * even, integer types wrap as the hardware does (v is then taken as an integer). */
double ar_load(ar_dtype t, const void *buf, size_t i);
void ar_store(ar_dtype t, void *buf, size_t i, double v);
/* Integer stores with two's complement wrap: the exact expectation of an overflowing integer sum. */
void ar_store_int(ar_dtype t, void *buf, size_t i, int64_t v);

/* A minifloat (1 sign, e exponent, m mantissa bits, IEEE bias) from and to double, round to nearest even.
 * Used for half, bfloat16 and the fp8 types. */
uint32_t ar_minifloat_encode(double v, int exp_bits, int man_bits);
double ar_minifloat_decode(uint32_t bits, int exp_bits, int man_bits);

/* The distance in units in the last place of the type at the expected value, for the avg bound. */
double ar_ulps(ar_dtype t, double got, double expected);

#endif
