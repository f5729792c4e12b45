/* The MLP's parameter layout: every layer's weights and bias in one contiguous buffer, layer 0 first, so that
 * gradient buckets are plain slices of the gradient buffer. The gradient buffer has DDP_N_STATS extra slots
 * after the parameters (the batch's loss and correct count), reduced with the last layer's bucket, so that
 * every rank learns the global loss without a collective of its own. Pure: no MPI, no CUDA. */
#ifndef DDP_MODEL_H
#define DDP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define DDP_MAX_LINEAR 33 /* up to 32 hidden layers and the output layer */

enum { DDP_STAT_LOSS = 0, DDP_STAT_CORRECT = 1, DDP_N_STATS = 2 };

typedef struct {
    int n_linear;                     /* linear layers: hidden layers + 1 */
    int dims[DDP_MAX_LINEAR + 1];     /* dims[0] input, dims[n_linear] classes */
    size_t w_off[DDP_MAX_LINEAR];     /* W_i: dims[i+1] x dims[i], row-major (out x in) */
    size_t b_off[DDP_MAX_LINEAR];     /* b_i: dims[i+1] */
    size_t layer_off[DDP_MAX_LINEAR]; /* == w_off[i]; W_i then b_i */
    size_t layer_len[DDP_MAX_LINEAR];
    size_t n_params;
    size_t n_grad; /* n_params + DDP_N_STATS */
    int max_dim;   /* widest layer, for activation buffers */
} ddp_layout;

/* 0, or -1 with a message when the sizes are out of range. */
int ddp_layout_init(ddp_layout *m, int input_dim, int hidden, int hidden_layers, int classes, char *err,
                    size_t errlen);

/* He-uniform weights and zero biases, from seed alone (identical on every rank). */
void ddp_params_init(const ddp_layout *m, uint64_t seed, double *params);

#endif
