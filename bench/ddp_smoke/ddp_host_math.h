/* Forward and backward of the MLP on the host in double precision with OpenBLAS. Double so that the
 * equivalence test (N ranks against one rank with the N-fold batch) can hold a tight tolerance: the two
 * differ only by the order of a few floating-point sums. Pure: no MPI. */
#ifndef DDP_HOST_MATH_H
#define DDP_HOST_MATH_H

#include <stdint.h>

#include "ddp_model.h"

typedef struct {
    const ddp_layout *m;
    int batch;      /* rows in this rank's batch */
    double **act;   /* act[0] input, act[i] output of linear layer i-1 (after ReLU, logits for the last) */
    double *delta;  /* batch x max_dim: gradient flowing back */
    double *delta2; /* the same, the other half of the ping-pong */
} ddp_host_net;

int ddp_host_net_init(ddp_host_net *net, const ddp_layout *m, int batch);
void ddp_host_net_free(ddp_host_net *net);

/* Called when the gradients of linear layer `layer` are complete (last layer first). */
typedef void (*ddp_grad_ready_fn)(void *user, int layer);

/* Forward and backward for one batch. grad (m->n_grad) receives this rank's share of the global mean:
 * sums over its samples divided by global_batch, so that summing grad over ranks gives the mean gradient
 * of the global batch; grad[n_params + DDP_STAT_LOSS] and [.. + DDP_STAT_CORRECT] likewise receive the
 * loss and the accuracy shares. on_ready may be NULL. */
void ddp_host_forward_backward(ddp_host_net *net, const double *params, const float *x, const int32_t *labels,
                               int global_batch, double *grad, ddp_grad_ready_fn on_ready, void *user);

#endif
