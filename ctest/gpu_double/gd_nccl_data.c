/* What the double's collectives compute, for every NCCL type: integers wrap, floats round to their type after
 * every operation as NCCL's kernels do (half and bfloat16 add in their own precision; avg of a float type is
 * NCCL's pre-multiplied sum: each input times 1/n rounded to the type, then added). */
#include "gd_nccl.h"

#include <math.h>
#include <string.h>

const char *const gd_coll_names[C_KINDS] = {"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                            "AlltoAll",  "SendRecv",  "Gather", "Scatter"};

/* A small binary float format: exponent and mantissa bits, and whether its top exponent is inf/NaN (IEEE) or
 * holds finite values (fp8 e4m3: no infinity, only S.1111.111 is NaN). */
typedef struct {
    int exp_bits, man_bits;
    bool ieee;
} float_format;

static const float_format HALF = {5, 10, true}, BF16 = {8, 7, true}, E4M3 = {4, 3, false},
                          E5M2 = {5, 2, true};

static const float_format *format_of(ncclDataType_t t)
{
    switch (t) {
    case ncclFloat16:
        return &HALF;
    case ncclBfloat16:
        return &BF16;
    case ncclFloat8e4m3:
        return &E4M3;
    case ncclFloat8e5m2:
        return &E5M2;
    default:
        return NULL;
    }
}

static int bias_of(const float_format *f)
{
    return (1 << (f->exp_bits - 1)) - 1;
}

static double max_finite(const float_format *f)
{
    int top = (1 << f->exp_bits) - 1 - (f->ieee ? 1 : 0);
    double man = f->ieee ? 2.0 - ldexp(1.0, -f->man_bits) : 2.0 - ldexp(2.0, -f->man_bits);
    return man * ldexp(1.0, top - bias_of(f));
}

static double decode(const float_format *f, uint32_t bits)
{
    uint32_t man = bits & ((1u << f->man_bits) - 1), exp = (bits >> f->man_bits) & ((1u << f->exp_bits) - 1);
    double sign = bits >> (f->exp_bits + f->man_bits) & 1 ? -1.0 : 1.0;
    uint32_t top = (1u << f->exp_bits) - 1;
    if (f->ieee && exp == top)
        return man ? NAN : sign * INFINITY;
    if (!f->ieee && exp == top && man == (1u << f->man_bits) - 1)
        return NAN;
    if (exp == 0)
        return sign * ldexp((double)man, 1 - bias_of(f) - f->man_bits);
    return sign * ldexp(1.0 + ldexp((double)man, -f->man_bits), (int)exp - bias_of(f));
}

/* v rounded to the nearest value of the format (ties to even); beyond the largest finite value: infinity, or
 * NaN where the format has none. */
static double round_format(const float_format *f, double v)
{
    if (isnan(v) || v == 0)
        return v;
    double a = fabs(v);
    int e = 0;
    frexp(a, &e);
    int unbiased = e - 1, min_normal = 1 - bias_of(f);
    double quantum = ldexp(1.0, (unbiased < min_normal ? min_normal : unbiased) - f->man_bits);
    double r = nearbyint(a / quantum) * quantum;
    if (r > max_finite(f))
        r = f->ieee ? INFINITY : NAN;
    return v < 0 ? -r : r;
}

static uint32_t encode(const float_format *f, double v)
{
    uint32_t sign = signbit(v) ? 1u << (f->exp_bits + f->man_bits) : 0;
    uint32_t top = (1u << f->exp_bits) - 1;
    double r = round_format(f, v);
    if (isnan(r))
        return sign | (top << f->man_bits) | ((1u << f->man_bits) - 1);
    if (isinf(r))
        return sign | (top << f->man_bits);
    double a = fabs(r);
    int min_normal = 1 - bias_of(f);
    if (a < ldexp(1.0, min_normal))
        return sign | (uint32_t)(a / ldexp(1.0, min_normal - f->man_bits));
    int e = 0;
    frexp(a, &e);
    uint32_t man = (uint32_t)((ldexp(a, -(e - 1)) - 1.0) * ldexp(1.0, f->man_bits));
    return sign | ((uint32_t)(e - 1 + bias_of(f)) << f->man_bits) | man;
}

size_t gd_type_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
        return 1;
    case ncclFloat16:
    case ncclBfloat16:
        return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
        return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
        return 8;
    default:
        return 0;
    }
}

bool gd_type_is_float(ncclDataType_t t)
{
    return t == ncclFloat32 || t == ncclFloat64 || format_of(t) != NULL;
}

double gd_round_to(ncclDataType_t t, double v)
{
    const float_format *f = format_of(t);
    if (f)
        return round_format(f, v);
    return t == ncclFloat32 ? (double)(float)v : v;
}

double gd_load(ncclDataType_t t, const void *p, size_t i)
{
    const float_format *f = format_of(t);
    if (f)
        return decode(f, gd_type_size(t) == 2 ? ((const uint16_t *)p)[i] : ((const uint8_t *)p)[i]);
    switch (t) {
    case ncclInt8:
        return ((const int8_t *)p)[i];
    case ncclUint8:
        return ((const uint8_t *)p)[i];
    case ncclInt32:
        return ((const int32_t *)p)[i];
    case ncclUint32:
        return ((const uint32_t *)p)[i];
    case ncclInt64:
        return (double)((const int64_t *)p)[i];
    case ncclUint64:
        return (double)((const uint64_t *)p)[i];
    case ncclFloat32:
        return ((const float *)p)[i];
    default:
        return ((const double *)p)[i];
    }
}

void gd_store(ncclDataType_t t, void *p, size_t i, double v)
{
    const float_format *f = format_of(t);
    if (f) {
        if (gd_type_size(t) == 2)
            ((uint16_t *)p)[i] = (uint16_t)encode(f, v);
        else
            ((uint8_t *)p)[i] = (uint8_t)encode(f, v);
        return;
    }
    switch (t) {
    case ncclInt8:
        ((int8_t *)p)[i] = (int8_t)(int64_t)v;
        break;
    case ncclUint8:
        ((uint8_t *)p)[i] = (uint8_t)(int64_t)v;
        break;
    case ncclInt32:
        ((int32_t *)p)[i] = (int32_t)(int64_t)v;
        break;
    case ncclUint32:
        ((uint32_t *)p)[i] = (uint32_t)(int64_t)v;
        break;
    case ncclInt64:
        ((int64_t *)p)[i] = (int64_t)v;
        break;
    case ncclUint64:
        ((uint64_t *)p)[i] = (uint64_t)v;
        break;
    case ncclFloat32:
        ((float *)p)[i] = (float)v;
        break;
    default:
        ((double *)p)[i] = v;
    }
}

unsigned char *gd_slot(struct ncclComm *c, int rank)
{
    return (unsigned char *)c->h + sizeof(shm_header) + (size_t)rank * c->slot_bytes;
}

/* Element i of the reduction over every rank's slot, in rank order, rounded to the type at every step. */
static double reduce_at(struct ncclComm *c, const coll_op *o, size_t i)
{
    bool fl = gd_type_is_float(o->type);
    double scale = gd_round_to(o->type, 1.0 / c->nranks); /* avg of floats: NCCL's pre-multiplied sum */
    double acc = 0;
    for (int r = 0; r < c->nranks; r++) {
        double v = gd_load(o->type, gd_slot(c, r), i);
        if (o->redop == ncclAvg && fl)
            v = gd_round_to(o->type, v * scale);
        if (r == 0) {
            acc = v;
            continue;
        }
        switch (o->redop) {
        case ncclProd:
            acc *= v;
            break;
        case ncclMin:
            acc = v < acc ? v : acc;
            break;
        case ncclMax:
            acc = v > acc ? v : acc;
            break;
        default:
            acc += v;
        }
        acc = gd_round_to(o->type, acc);
    }
    if (o->redop == ncclAvg && !fl)
        acc = (double)((int64_t)acc / c->nranks);
    return acc;
}

size_t gd_posted_bytes(const coll_op *o, int rank)
{
    size_t es = gd_type_size(o->type), n = (size_t)o->comm->nranks;
    switch (o->kind) {
    case C_REDUCESCATTER:
    case C_ALLTOALL:
        return o->count * es * n;
    case C_SCATTER:
        return rank == o->root ? o->count * es * n : 0;
    default:
        return o->count * es;
    }
}

void gd_coll_compute(struct ncclComm *c, coll_op *o)
{
    size_t es = gd_type_size(o->type), n = o->count;
    int me = c->rank;
    unsigned char *out = o->out;
    switch (o->kind) {
    case C_ALLREDUCE:
        for (size_t i = 0; i < n; i++)
            gd_store(o->type, out, i, reduce_at(c, o, i));
        break;
    case C_REDUCE:
        if (me == o->root)
            for (size_t i = 0; i < n; i++)
                gd_store(o->type, out, i, reduce_at(c, o, i));
        break;
    case C_BROADCAST:
        memmove(out, gd_slot(c, o->root), n * es);
        break;
    case C_ALLGATHER:
        for (int r = 0; r < c->nranks; r++)
            memmove(out + (size_t)r * n * es, gd_slot(c, r), n * es);
        break;
    case C_GATHER:
        if (me == o->root)
            for (int r = 0; r < c->nranks; r++)
                memmove(out + (size_t)r * n * es, gd_slot(c, r), n * es);
        break;
    case C_SCATTER:
        memmove(out, gd_slot(c, o->root) + (size_t)me * n * es, n * es);
        break;
    case C_REDUCESCATTER:
        for (size_t i = 0; i < n; i++)
            gd_store(o->type, out, i, reduce_at(c, o, (size_t)me * n + i));
        break;
    case C_ALLTOALL:
        for (int r = 0; r < c->nranks; r++)
            memmove(out + (size_t)r * n * es, gd_slot(c, r) + (size_t)me * n * es, n * es);
        break;
    case C_SENDRECV:
        memmove(out, gd_slot(c, o->recv_peer), n * es);
        break;
    case C_KINDS:
        break;
    }
}
