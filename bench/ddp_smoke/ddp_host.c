/* The host path: the same training step as the GPU path, in double with OpenBLAS and MPI_Iallreduce. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ddp_host_math.h"
#include "ddp_reducer_host.h"
#include "ddp_trainer.h"
#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_testhook.h"
#include "ga_time.h"

typedef struct {
    ddp_trainer base; /* first: the interface pointer is the object */
    ddp_trainer_config cfg;
    MPI_Comm comm;
    ddp_host_net net;
    double *params, *velocity, *grad;
} host_trainer;

static void host_step(ddp_trainer *t, const float *x, const int32_t *labels, ddp_step_result *out)
{
    host_trainer *h = (host_trainer *)t;
    const ddp_layout *m = h->cfg.layout;
    ga_test_delay(h->cfg.delay_s); /* the test hook: 0 (nothing) unless set */
    ddp_host_reducer red;
    ddp_host_reducer_init(&red, &t->plan, h->comm, h->grad, h->cfg.comm_timeout_s);
    double t0 = ga_thread_cpu_now();
    ddp_host_forward_backward(&h->net, h->params, x, labels, h->cfg.global_batch, h->grad,
                              ddp_host_reducer_on_grad_ready, &red);
    /* the test hook: 1 (nothing) unless set */
    ga_test_slow_down(h->cfg.slow_factor, ga_thread_cpu_now() - t0, ga_thread_cpu_now);
    double compute = ga_thread_cpu_now() - t0;
    out->comm_wait_s = ddp_host_reducer_finish(&red);
    out->loss = h->grad[m->n_params + DDP_STAT_LOSS];
    out->accuracy = h->grad[m->n_params + DDP_STAT_CORRECT];
    double t1 = ga_thread_cpu_now();
    ddp_sgd_step(&h->cfg.sgd, h->params, h->velocity, h->grad, m->n_params);
    out->compute_s = compute + (ga_thread_cpu_now() - t1);
}

static const void *host_params(ddp_trainer *t)
{
    return ((host_trainer *)t)->params;
}

static void host_perturb(ddp_trainer *t)
{
    host_trainer *h = (host_trainer *)t;
    h->params[0] = nextafter(h->params[0], INFINITY);
}

static void host_destroy(ddp_trainer *t)
{
    host_trainer *h = (host_trainer *)t;
    ddp_host_net_free(&h->net);
    free(h->params);
    free(h->velocity);
    free(h->grad);
    free(h);
}

ddp_trainer *ddp_host_trainer_create(const ddp_trainer_config *cfg, MPI_Comm comm)
{
    host_trainer *h = calloc(1, sizeof *h);
    if (!h)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    const ddp_layout *m = cfg->layout;
    h->cfg = *cfg;
    h->comm = comm;
    h->params = malloc(m->n_params * sizeof *h->params);
    h->velocity = calloc(m->n_params, sizeof *h->velocity);
    h->grad = calloc(m->n_grad, sizeof *h->grad);
    if (!h->params || !h->velocity || !h->grad || ddp_host_net_init(&h->net, m, cfg->local_batch) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory for a model of %zu parameters, batch %d", m->n_params,
                 cfg->local_batch);
    ddp_params_init(m, cfg->seed, h->params);
    ga_deadline_arm("broadcast of the initial parameters");
    GA_MPI_CHECK(MPI_Bcast(h->params, (int)m->n_params, MPI_DOUBLE, 0, comm));
    ga_deadline_disarm();

    h->base.backend = "host";
    h->base.dtype = "fp64";
    h->base.elem_size = sizeof(double);
    ddp_bucket_plan_build(m, sizeof(double), cfg->bucket_cap_bytes, &h->base.plan);
    h->base.step = host_step;
    h->base.params = host_params;
    h->base.perturb = host_perturb;
    h->base.destroy = host_destroy;
    return &h->base;
}
