#include "ddp_host_math.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ddp_host_net_init(ddp_host_net *net, const ddp_layout *m, int batch)
{
    memset(net, 0, sizeof *net);
    net->m = m;
    net->batch = batch;
    net->act = calloc((size_t)m->n_linear + 1, sizeof *net->act);
    size_t wide = (size_t)batch * (size_t)m->max_dim;
    net->delta = malloc(wide * sizeof *net->delta);
    net->delta2 = malloc(wide * sizeof *net->delta2);
    if (!net->act || !net->delta || !net->delta2)
        return -1;
    for (int i = 0; i <= m->n_linear; i++)
        if (!(net->act[i] = malloc((size_t)batch * (size_t)m->dims[i] * sizeof(double))))
            return -1;
    return 0;
}

void ddp_host_net_free(ddp_host_net *net)
{
    for (int i = 0; net->act && i <= net->m->n_linear; i++)
        free(net->act[i]);
    free(net->act);
    free(net->delta);
    free(net->delta2);
    memset(net, 0, sizeof *net);
}

/* Softmax cross-entropy on the logits: loss and correct count of the batch, and d(loss_sum)/d(logits) * scale
 * into delta. */
static void softmax_xent(const double *logits, const int32_t *labels, int batch, int classes, double scale,
                         double *delta, double *loss_sum, double *correct)
{
    double loss = 0, hits = 0;
    for (int b = 0; b < batch; b++) {
        const double *z = logits + (size_t)b * (size_t)classes;
        double *d = delta + (size_t)b * (size_t)classes;
        int arg = 0;
        for (int c = 1; c < classes; c++)
            if (z[c] > z[arg])
                arg = c;
        double sum = 0;
        for (int c = 0; c < classes; c++)
            sum += exp(z[c] - z[arg]);
        int y = labels[b];
        loss += log(sum) - (z[y] - z[arg]);
        hits += arg == y;
        for (int c = 0; c < classes; c++)
            d[c] = (exp(z[c] - z[arg]) / sum - (c == y)) * scale;
    }
    *loss_sum = loss;
    *correct = hits;
}

void ddp_host_forward_backward(ddp_host_net *net, const double *params, const float *x, const int32_t *labels,
                               int global_batch, double *grad, ddp_grad_ready_fn on_ready, void *user)
{
    const ddp_layout *m = net->m;
    const int B = net->batch, L = m->n_linear;
    for (size_t k = 0; k < (size_t)B * (size_t)m->dims[0]; k++)
        net->act[0][k] = x[k];

    for (int i = 0; i < L; i++) {
        int in = m->dims[i], out = m->dims[i + 1];
        double *z = net->act[i + 1];
        const double *bias = params + m->b_off[i];
        /* z (B x out) = act (B x in) W^T, W (out x in) */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0, net->act[i], in,
                    params + m->w_off[i], in, 0.0, z, out);
        for (int b = 0; b < B; b++)
            for (int o = 0; o < out; o++) {
                double v = z[(size_t)b * (size_t)out + (size_t)o] + bias[o];
                z[(size_t)b * (size_t)out + (size_t)o] = (i + 1 < L && v < 0) ? 0 : v;
            }
    }

    double scale = 1.0 / (double)global_batch, loss_sum = 0, correct = 0;
    softmax_xent(net->act[L], labels, B, m->dims[L], scale, net->delta, &loss_sum, &correct);
    grad[m->n_params + DDP_STAT_LOSS] = loss_sum * scale;
    grad[m->n_params + DDP_STAT_CORRECT] = correct * scale;

    double *d = net->delta, *d_prev = net->delta2;
    for (int i = L - 1; i >= 0; i--) {
        int in = m->dims[i], out = m->dims[i + 1];
        /* dW (out x in) = d^T (out x B) act (B x in); db = column sums of d */
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, B, 1.0, d, out, net->act[i], in, 0.0,
                    grad + m->w_off[i], in);
        double *db = grad + m->b_off[i];
        for (int o = 0; o < out; o++)
            db[o] = 0;
        for (int b = 0; b < B; b++)
            for (int o = 0; o < out; o++)
                db[o] += d[(size_t)b * (size_t)out + (size_t)o];
        if (on_ready)
            on_ready(user, i);
        if (i == 0)
            break;
        /* d_prev (B x in) = d (B x out) W (out x in), through the ReLU of layer i-1 */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, in, out, 1.0, d, out, params + m->w_off[i],
                    in, 0.0, d_prev, in);
        const double *a = net->act[i];
        for (size_t k = 0; k < (size_t)B * (size_t)in; k++)
            if (a[k] <= 0)
                d_prev[k] = 0;
        double *t = d;
        d = d_prev;
        d_prev = t;
    }
}
