/* Gradient buckets, as DDP frameworks build them: whole layers, last layer first (the order in which the
 * backward pass completes them), up to a byte cap per bucket. A bucket is a slice of the gradient buffer and
 * is reduced as soon as its lowest layer's gradients are ready. Pure. */
#ifndef DDP_BUCKET_H
#define DDP_BUCKET_H

#include <stddef.h>

#include "ddp_model.h"

typedef struct {
    int first_layer, last_layer; /* layers first..last; complete when first_layer's gradients are */
    size_t offset, count;        /* slice of the gradient buffer, in elements */
} ddp_bucket;

typedef struct {
    int n;
    ddp_bucket b[DDP_MAX_LINEAR];
    int bucket_of_layer[DDP_MAX_LINEAR];
} ddp_bucket_plan;

/* Bucket 0 holds the last layer and the loss slots. A layer larger than cap_bytes is a bucket of its own. */
void ddp_bucket_plan_build(const ddp_layout *m, size_t elem_size, size_t cap_bytes, ddp_bucket_plan *plan);

/* The bucket that becomes complete when `layer`'s gradients are, or -1. */
int ddp_bucket_completed_by(const ddp_bucket_plan *plan, int layer);

#endif
