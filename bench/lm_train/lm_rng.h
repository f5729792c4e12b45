/* lm_train's deterministic random numbers: splitmix64 keyed by (seed, stream, index), so that parameter
 * initialisation and every synthetic batch are functions of their coordinates alone, the same on every rank,
 * platform and thread count. */
#ifndef LM_RNG_H
#define LM_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
} lm_rng;

static inline uint64_t lm_rng_next(lm_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A generator for one coordinate: mixing each key through the generator keeps nearby keys uncorrelated. */
static inline lm_rng lm_rng_for(uint64_t seed, uint64_t stream, uint64_t index)
{
    lm_rng r = {seed};
    r.state = lm_rng_next(&r) ^ stream;
    r.state = lm_rng_next(&r) ^ index;
    lm_rng_next(&r);
    return r;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double lm_rng_uniform(lm_rng *r)
{
    return (double)(lm_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n): the modulo bias is below 2^-40 for the n used here (n < 2^24). */
static inline uint32_t lm_rng_below(lm_rng *r, uint32_t n)
{
    return (uint32_t)(lm_rng_next(r) % n);
}

/* Standard normal by Box-Muller (one of the pair; determinism matters here, not speed). */
static inline double lm_rng_normal(lm_rng *r)
{
    double u1 = lm_rng_uniform(r), u2 = lm_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
