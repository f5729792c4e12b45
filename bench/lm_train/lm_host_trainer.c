/* lm_train's host path: the fp32 model of lm_model.h trained data-parallel over MPI. Each block's gradient
 * slice is averaged with its own MPI_Iallreduce as soon as backward leaves the block, progressed between
 * blocks and finished with a bounded wait, as ddp_smoke's host reducer does; then every rank takes the same
 * AdamW step on the same averaged gradients, so the replicas stay bit-identical. */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_testhook.h"
#include "ga_time.h"
#include "lm_model.h"
#include "lm_trainer.h"

/* The gradient reduction of one optimiser step: one request per block, two for the slices outside the
 * blocks (embeddings; final layernorm), one for the loss. */
typedef struct {
    MPI_Comm comm;
    float *grads;
    const lm_config *cfg;
    MPI_Request *req;
    int launched, capacity;
    double loss_sum; /* this rank's mean loss in, the sum over ranks out */
    double loss_in;
} host_reducer;

typedef struct {
    lm_trainer base; /* first: the interface pointer is the object */
    lm_trainer_config cfg;
    MPI_Comm comm;
    int ranks;
    lm_model model;
    host_reducer red;
} host_trainer;

static void reduce_slice(host_reducer *r, size_t offset, size_t count)
{
    /* Slices start in the same order on every rank: backward is the same program everywhere. */
    GA_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, r->grads + offset, (int)count, MPI_FLOAT, MPI_SUM, r->comm,
                                &r->req[r->launched++]));
}

/* An lm_block_done_fn: starts the reduction of the slice backward has just finished, then lets MPI progress
 * the ones in flight. */
static void on_block_done(void *user, int layer)
{
    host_reducer *r = user;
    size_t offset, count;
    if (layer == LM_BLOCK_REST) {
        size_t head, tail_offset, tail_count;
        lm_rest_ranges(r->cfg, &head, &tail_offset, &tail_count);
        reduce_slice(r, 0, head);
        reduce_slice(r, tail_offset, tail_count);
    } else {
        lm_block_range(r->cfg, layer, &offset, &count);
        reduce_slice(r, offset, count);
    }
    int done = 0;
    GA_MPI_CHECK(MPI_Testall(r->launched, r->req, &done, MPI_STATUSES_IGNORE));
}

/* Waits for every reduction of this step, each wait bounded by timeout_s; returns the seconds waited. */
static double reducer_finish(host_reducer *r, double timeout_s)
{
    double t0 = ga_now(), deadline = t0 + timeout_s;
    ga_test_delay(ga_test_comm_delay_s()); /* the test hook (a slow fabric): 0 unless set */
    for (;;) {
        int done = 0;
        GA_MPI_CHECK(MPI_Testall(r->launched, r->req, &done, MPI_STATUSES_IGNORE));
        if (done)
            break;
        if (ga_now() > deadline)
            ga_deadline_expired("timeout: gradient allreduce (%d slices) did not complete within %g s",
                                r->launched, timeout_s);
        sched_yield(); /* ranks may share cores: let the peer we wait for run */
    }
    r->launched = 0;
    return ga_now() - t0;
}

/* Forward and backward over the step's micro-batches; the last one's backward starts the reductions. The
 * loss scale folds both the mean over micro-batches and the mean over ranks into the gradients, so that the
 * reduction's sum is the average. Returns this rank's mean loss. */
static double forward_backward(host_trainer *h, const int *tokens, const int *targets)
{
    lm_model *m = &h->model;
    const int accum = h->cfg.grad_accum;
    const size_t bt = (size_t)h->cfg.micro_batch * (size_t)h->cfg.cfg.seq_len;
    const float scale = 1.0f / ((float)accum * (float)h->ranks);
    double loss = 0;
    lm_zero_grad(m);
    for (int k = 0; k < accum; k++) {
        loss += lm_forward(m, tokens + (size_t)k * bt, targets + (size_t)k * bt);
        lm_backward_hooked(m, scale, k == accum - 1 ? on_block_done : NULL, &h->red);
    }
    return loss / accum;
}

static int host_step(lm_trainer *t, const int *tokens, const int *targets, lm_step_result *out, char *err,
                     size_t errlen)
{
    (void)err;
    (void)errlen;
    host_trainer *h = (host_trainer *)t;
    double wall0 = ga_now();
    ga_test_delay(h->cfg.delay_s); /* the test hook: 0 (nothing) unless set */
    double cpu0 = ga_thread_cpu_now();
    h->red.loss_in = forward_backward(h, tokens, targets);
    GA_MPI_CHECK(MPI_Iallreduce(&h->red.loss_in, &h->red.loss_sum, 1, MPI_DOUBLE, MPI_SUM, h->comm,
                                &h->red.req[h->red.launched++]));
    /* the test hook: 1 (nothing) unless set */
    ga_test_slow_down(h->cfg.slow_factor, ga_thread_cpu_now() - cpu0, ga_thread_cpu_now);
    double compute = ga_thread_cpu_now() - cpu0;
    out->comm_wait_s = reducer_finish(&h->red, h->cfg.comm_timeout_s);
    double cpu1 = ga_thread_cpu_now();
    out->grad_norm = lm_optim_step(&h->model, &h->cfg.optim);
    out->compute_s = compute + (ga_thread_cpu_now() - cpu1);
    out->loss = h->red.loss_sum / h->ranks;
    out->step_s = ga_now() - wall0;
    return 0;
}

static const float *host_params(lm_trainer *t)
{
    return ((host_trainer *)t)->model.params;
}

static void host_perturb(lm_trainer *t)
{
    float *p = ((host_trainer *)t)->model.params;
    p[0] = nextafterf(p[0], INFINITY);
}

static void host_destroy(lm_trainer *t)
{
    host_trainer *h = (host_trainer *)t;
    lm_model_free(&h->model);
    free(h->red.req);
    free(h);
}

/* Every rank learns whether any failed to build its model, so that none waits in the broadcast for one that
 * gave up. Returns true when all did. */
static bool all_built(bool mine, MPI_Comm comm)
{
    int failed = !mine, any = 0;
    GA_MPI_CHECK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm));
    return !any;
}

static void fill_interface(host_trainer *h)
{
    const lm_model *m = &h->model;
    h->base.backend = "host";
    h->base.dtype = "fp32";
    h->base.n_params = m->n_params;
    /* params, grads, AdamW m and v; activations and their gradients; the micro-batch's tokens and targets */
    h->base.bytes_used = 4.0 * m->n_params * sizeof(float) + 2.0 * m->n_acts * sizeof(float) +
                         2.0 * m->batch * m->cfg.seq_len * sizeof(int);
    h->base.step = host_step;
    h->base.params = host_params;
    h->base.perturb = host_perturb;
    h->base.destroy = host_destroy;
}

lm_trainer *lm_host_trainer_create(const lm_trainer_config *cfg, MPI_Comm comm, char *err, size_t errlen)
{
    host_trainer *h = calloc(1, sizeof *h);
    bool ok = h != NULL;
    if (!ok)
        snprintf(err, errlen, "out of host memory for the trainer");
    if (ok) {
        h->cfg = *cfg;
        h->comm = comm;
        GA_MPI_CHECK(MPI_Comm_size(comm, &h->ranks));
        h->red = (host_reducer){.comm = comm, .cfg = &h->model.cfg, .capacity = cfg->cfg.layers + 3};
        h->red.req = malloc((size_t)h->red.capacity * sizeof *h->red.req);
        ok = h->red.req && lm_model_init(&h->model, &cfg->cfg, cfg->micro_batch, err, errlen) == 0;
        if (!h->red.req)
            snprintf(err, errlen, "out of host memory for the trainer");
    }
    if (!all_built(ok, comm)) {
        if (ok)
            snprintf(err, errlen, "another rank could not build its model");
        if (h && h->model.params)
            lm_model_free(&h->model);
        free(h ? h->red.req : NULL);
        free(h);
        return NULL;
    }
    h->red.grads = h->model.grads;
    lm_model_init_params(&h->model, cfg->seed);
    GA_MPI_CHECK(MPI_Bcast(h->model.params, (int)h->model.n_params, MPI_FLOAT, 0, comm));
    fill_interface(h);
    return &h->base;
}
