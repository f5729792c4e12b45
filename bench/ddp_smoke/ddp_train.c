#include "ddp_train.h"

#include <math.h>
#include <stdlib.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_runtime.h"
#include "ga_time.h"
#include "ga_train_budget.h"

/* Each step's timings, kept until the loop knows how many steps it took: the warm-up left out of the figures
 * is at most half of them, so that a run cut short by its time still measures its throughput. */
typedef struct {
    double *dt, *wait, *compute;
} step_times;

static void alloc_all(const ddp_loop_config *c, ddp_loop_result *out, step_times *st)
{
    size_t n = (size_t)(c->steps > 0 ? c->steps : 1);
    out->loss_curve = calloc(n, sizeof *out->loss_curve);
    out->accuracy_curve = calloc(n, sizeof *out->accuracy_curve);
    st->dt = calloc(n, sizeof *st->dt);
    st->wait = calloc(n, sizeof *st->wait);
    st->compute = calloc(n, sizeof *st->compute);
    if (!out->loss_curve || !out->accuracy_curve || !st->dt || !st->wait || !st->compute)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory for %d steps' figures", c->steps);
    out->steps_done = out->timed_steps = 0;
    out->nonfinite_step = -1;
    out->steps_planned = c->steps;
    out->out_of_time = false;
    out->train_s = out->comm_wait_s = out->compute_s = 0;
}

/* The figures over the timed steps: those after the warm-up, which is at most half of the steps taken. */
static void sum_timed(const ddp_loop_config *c, const step_times *st, ddp_loop_result *out)
{
    int done = out->steps_done, w = c->warmup < done / 2 ? c->warmup : done / 2;
    for (int k = w; k < done; k++) {
        out->train_s += st->dt[k];
        out->comm_wait_s += st->wait[k];
        out->compute_s = out->compute_s >= 0 && st->compute[k] >= 0 ? out->compute_s + st->compute[k] : -1;
    }
    out->timed_steps = done - w;
}

/* Whether to agree again on the steps that fit: after the first step, the third, then every twentieth of
 * the steps planned (the same count on every rank), so that a pace that changes is seen and the agreement
 * stays a small part of the run. */
static bool plan_now(const ddp_loop_config *c, int planned, int done)
{
    int every = planned >= 40 ? planned / 20 : 2;
    return c->phase_end > 0 && (done == 1 || done == 3 || done % every == 0);
}

static void log_interval(const ddp_loop_config *c, int step, const ddp_step_result *r, double span, int steps,
                         double wait)
{
    const int global_batch = c->ranks * c->local_batch;
    int64_t epoch = ((int64_t)(step + 1) * global_batch - 1) / c->dataset_size;
    ga_log("TRAIN", "step %5d/%d  epoch %lld  loss %.5f  acc %.3f  %.0f samples/s (%.0f per rank)", step + 1,
           c->steps, (long long)epoch + 1, r->loss, r->accuracy, steps * global_batch / span,
           steps * c->local_batch / span);
    ga_debug("DDP", "steps %d-%d: %.3f ms/step, %.3f ms/step waiting on gradients", step + 2 - steps,
             step + 1, 1e3 * span / steps, 1e3 * wait / steps);
}

void ddp_train_run(ddp_trainer *t, ddp_sampler *sampler, const ddp_loop_config *c, ddp_loop_result *out)
{
    const int B = c->local_batch, global_batch = c->ranks * c->local_batch, dim = sampler->ds->dim;
    step_times st;
    alloc_all(c, out, &st);
    float *x = malloc((size_t)B * (size_t)dim * sizeof *x);
    int32_t *labels = malloc((size_t)B * sizeof *labels);
    if (!x || !labels)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory for a batch of %d x %d", B, dim);

    const int log_every = c->steps >= 10 ? c->steps / 10 : 1;
    double loop_t0 = ga_now(), interval_t0 = loop_t0, interval_wait = 0;
    int interval_steps = 0;
    for (int step = 0; step < out->steps_planned; step++) {
        ga_phase("training step %d of %d", step + 1, c->steps);
        double t0 = ga_now();
        /* Global step `step` covers stream positions [step*R*B, (step+1)*R*B); this rank reads its slice. */
        ddp_sampler_fill(sampler, (int64_t)step * global_batch + (int64_t)c->rank * B, B, x, labels);
        ddp_step_result r;
        t->step(t, x, labels, &r);
        st.dt[step] = ga_now() - t0;
        st.wait[step] = r.comm_wait_s;
        st.compute[step] = r.compute_s;
        out->loss_curve[step] = r.loss;
        out->accuracy_curve[step] = r.accuracy;
        out->steps_done = step + 1;
        interval_steps++;
        interval_wait += r.comm_wait_s;
        /* The loss is the allreduced one, the same on every rank: all stop together. */
        if (!isfinite(r.loss)) {
            out->nonfinite_step = step;
            ga_log("TRAIN", "step %d: the global loss is %g; stopping", step + 1, r.loss);
            break;
        }
        if (!c->quiet && ((step + 1) % log_every == 0 || step + 1 == c->steps)) {
            log_interval(c, step, &r, ga_now() - interval_t0, interval_steps, interval_wait);
            interval_t0 = ga_now();
            interval_steps = 0;
            interval_wait = 0;
        }
        if (plan_now(c, out->steps_planned, step + 1))
            out->steps_planned = ga_train_steps_that_fit(c->comm, (ga_now() - loop_t0) / (step + 1),
                                                         c->phase_end, step + 1, c->steps);
    }
    out->out_of_time = out->nonfinite_step < 0 && out->steps_done < c->steps;
    sum_timed(c, &st, out);
    free(st.dt);
    free(st.wait);
    free(st.compute);
    free(x);
    free(labels);
}

void ddp_loop_result_free(ddp_loop_result *r)
{
    free(r->loss_curve);
    free(r->accuracy_curve);
    r->loss_curve = r->accuracy_curve = NULL;
}
