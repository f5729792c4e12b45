/* Training data: a synthetic, learnable set (inputs from a normal distribution, labels from a fixed random
 * teacher network) or MNIST-format IDX files, and the sampler that cuts the global batch into rank shards.
 * Pure: no MPI, no CUDA. */
#ifndef DDP_DATA_H
#define DDP_DATA_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t n;         /* samples */
    int dim;           /* features per sample */
    int classes;       /* labels are 0 .. classes-1 */
    float *xf;         /* synthetic: n x dim features */
    uint8_t *xu8;      /* IDX: n x dim pixels, scaled by 1/255 when a batch is filled */
    uint8_t *labels;   /* n labels */
    char source[1100]; /* "synthetic(seed 1)" or the IDX directory */
} ddp_dataset;

#define DDP_TEACHER_HIDDEN 32

/* A data set the MLP can learn: x ~ N(0, I), label = argmax(T2 tanh(T1 x)) with a teacher drawn from seed. */
/* The data functions' return when memory runs out (other failures are -1): the job then ends with exit 5 on
 * every rank (docs/exit-codes.md), whichever rank it happened on. */
#define DDP_DATA_OUT_OF_MEMORY (-2)

int ddp_dataset_synthetic(ddp_dataset *ds, int64_t n, int dim, int classes, uint64_t seed, char *err,
                          size_t errlen);

/* DIR/train-images-idx3-ubyte and DIR/train-labels-idx1-ubyte (or the names with a '.' before "idx").
 * Validates magic numbers, dimensions, counts and file sizes; 0, or -1 with a one-line message. */
int ddp_dataset_load_idx(ddp_dataset *ds, const char *dir, char *err, size_t errlen);

void ddp_dataset_free(ddp_dataset *ds);

/* The data stream: position p of the stream is sample perm_e[p mod n] with e = p / n, a fresh shuffle of
 * the data set for every epoch e (from the seed). Global step g, rank r of R, per-rank batch B read the
 * positions [g*R*B + r*B, g*R*B + (r+1)*B): one rank with batch R*B reads exactly the same samples. */
typedef struct {
    const ddp_dataset *ds;
    uint64_t seed;
    int64_t epoch; /* whose permutation perm holds; -1 none yet */
    int64_t *perm;
} ddp_sampler;

int ddp_sampler_init(ddp_sampler *s, const ddp_dataset *ds, uint64_t seed);
void ddp_sampler_free(ddp_sampler *s);
/* Fills count rows of x (row-major, dim floats each) and labels from positions [first, first+count). */
void ddp_sampler_fill(ddp_sampler *s, int64_t first, int count, float *x, int32_t *labels);

#endif
