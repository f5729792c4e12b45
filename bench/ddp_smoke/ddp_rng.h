/* A counter-based generator (splitmix64): any sample or parameter is a function of (seed, stream, index)
 * alone, so every rank derives the same data and the same initial weights without communicating. */
#ifndef DDP_RNG_H
#define DDP_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
} ddp_rng;

static inline uint64_t ddp_rng_next(ddp_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Independent streams: data samples, teacher weights, model weights, epoch shuffles. */
enum { DDP_STREAM_TEACHER = 1, DDP_STREAM_SAMPLE = 2, DDP_STREAM_PARAMS = 3, DDP_STREAM_SHUFFLE = 4 };

static inline ddp_rng ddp_rng_for(uint64_t seed, uint64_t stream, uint64_t index)
{
    ddp_rng r = {seed * 0xD1B54A32D192ED03ull ^ (stream << 56) ^ index};
    ddp_rng_next(&r); /* decorrelate neighbouring indices */
    return r;
}

/* Uniform in [0, 1). */
static inline double ddp_rng_uniform(ddp_rng *r)
{
    return (double)(ddp_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal (Box-Muller). */
static inline double ddp_rng_normal(ddp_rng *r)
{
    double u1 = 1.0 - ddp_rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = ddp_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
