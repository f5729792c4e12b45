#include "ddp_model.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ddp_rng.h"

int ddp_layout_init(ddp_layout *m, int input_dim, int hidden, int hidden_layers, int classes, char *err,
                    size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (hidden_layers < 0 || hidden_layers > DDP_MAX_LINEAR - 1) {
        snprintf(err, errlen, "--layers must be 0 to %d hidden layers", DDP_MAX_LINEAR - 1);
        return -1;
    }
    if (input_dim < 1 || hidden < 1 || classes < 2) {
        snprintf(err, errlen, "input %d, hidden %d, classes %d: each must be positive (classes >= 2)",
                 input_dim, hidden, classes);
        return -1;
    }
    m->n_linear = hidden_layers + 1;
    m->dims[0] = input_dim;
    for (int i = 1; i < m->n_linear; i++)
        m->dims[i] = hidden;
    m->dims[m->n_linear] = classes;
    size_t off = 0;
    for (int i = 0; i < m->n_linear; i++) {
        size_t in = (size_t)m->dims[i], out = (size_t)m->dims[i + 1];
        m->layer_off[i] = m->w_off[i] = off;
        m->b_off[i] = off + out * in;
        m->layer_len[i] = out * in + out;
        off += m->layer_len[i];
    }
    for (int i = 0; i <= m->n_linear; i++)
        if (m->dims[i] > m->max_dim)
            m->max_dim = m->dims[i];
    if (off > (size_t)INT_MAX) { /* MPI counts are int */
        snprintf(err, errlen, "%zu parameters: at most %d", off, INT_MAX);
        return -1;
    }
    m->n_params = off;
    m->n_grad = off + DDP_N_STATS;
    return 0;
}

void ddp_params_init(const ddp_layout *m, uint64_t seed, double *params)
{
    for (int i = 0; i < m->n_linear; i++) {
        size_t in = (size_t)m->dims[i], out = (size_t)m->dims[i + 1];
        /* He for the ReLU layers; 1/sqrt(in) for the output, so the first loss is near log(classes). */
        double bound = i + 1 < m->n_linear ? sqrt(6.0 / (double)in) : sqrt(1.0 / (double)in);
        ddp_rng r = ddp_rng_for(seed, DDP_STREAM_PARAMS, (uint64_t)i);
        for (size_t k = 0; k < out * in; k++)
            params[m->w_off[i] + k] = bound * (2.0 * ddp_rng_uniform(&r) - 1.0);
        memset(params + m->b_off[i], 0, out * sizeof *params);
    }
}
