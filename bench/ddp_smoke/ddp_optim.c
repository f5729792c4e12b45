#include "ddp_optim.h"

void ddp_sgd_step(const ddp_sgd *opt, double *params, double *velocity, const double *grad, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        velocity[k] = opt->momentum * velocity[k] + grad[k];
        params[k] -= opt->lr * velocity[k];
    }
}
