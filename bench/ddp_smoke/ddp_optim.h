/* SGD with momentum (PyTorch's form: v = mu v + g; p -= lr v) on the host. The GPU path runs the same
 * update in a kernel (ddp_gpu_kernels.cu). Pure. */
#ifndef DDP_OPTIM_H
#define DDP_OPTIM_H

#include <stddef.h>

typedef struct {
    double lr, momentum;
} ddp_sgd;

void ddp_sgd_step(const ddp_sgd *opt, double *params, double *velocity, const double *grad, size_t n);

#endif
