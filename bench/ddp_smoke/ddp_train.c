#include "ddp_train.h"

#include <math.h>
#include <stdlib.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_runtime.h"
#include "ga_time.h"

void ddp_train_run(ddp_trainer *t, ddp_sampler *sampler, const ddp_loop_config *c, ddp_loop_result *out)
{
    const int B = c->local_batch, global_batch = c->ranks * c->local_batch, dim = sampler->ds->dim;
    out->loss_curve = calloc((size_t)c->steps, sizeof *out->loss_curve);
    out->accuracy_curve = calloc((size_t)c->steps, sizeof *out->accuracy_curve);
    float *x = malloc((size_t)B * (size_t)dim * sizeof *x);
    int32_t *labels = malloc((size_t)B * sizeof *labels);
    if (!out->loss_curve || !out->accuracy_curve || !x || !labels)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory for a batch of %d x %d", B, dim);
    out->steps_done = out->timed_steps = 0;
    out->nonfinite_step = -1;
    out->train_s = out->comm_wait_s = out->compute_s = 0;

    const int log_every = c->steps >= 10 ? c->steps / 10 : 1;
    double interval_t0 = ga_now(), interval_wait = 0;
    int interval_steps = 0;
    for (int step = 0; step < c->steps; step++) {
        ga_phase("training step %d of %d", step + 1, c->steps);
        double t0 = ga_now();
        /* Global step `step` covers stream positions [step*R*B, (step+1)*R*B); this rank reads its slice. */
        ddp_sampler_fill(sampler, (int64_t)step * global_batch + (int64_t)c->rank * B, B, x, labels);
        ddp_step_result r;
        t->step(t, x, labels, &r);
        double dt = ga_now() - t0;

        out->loss_curve[step] = r.loss;
        out->accuracy_curve[step] = r.accuracy;
        out->steps_done = step + 1;
        if (step >= c->warmup) {
            out->timed_steps++;
            out->train_s += dt;
            out->comm_wait_s += r.comm_wait_s;
            out->compute_s = out->compute_s >= 0 && r.compute_s >= 0 ? out->compute_s + r.compute_s : -1;
        }
        interval_steps++;
        interval_wait += r.comm_wait_s;
        /* The loss is the allreduced one, the same on every rank: all stop together. */
        if (!isfinite(r.loss)) {
            out->nonfinite_step = step;
            ga_log("TRAIN", "step %d: the global loss is %g; stopping", step + 1, r.loss);
            break;
        }
        if (!c->quiet && ((step + 1) % log_every == 0 || step + 1 == c->steps)) {
            double span = ga_now() - interval_t0;
            int64_t epoch = ((int64_t)(step + 1) * global_batch - 1) / c->dataset_size;
            ga_log("TRAIN", "step %5d/%d  epoch %lld  loss %.5f  acc %.3f  %.0f samples/s (%.0f per rank)",
                   step + 1, c->steps, (long long)epoch + 1, r.loss, r.accuracy,
                   interval_steps * global_batch / span, interval_steps * B / span);
            ga_debug("DDP", "steps %d-%d: %.3f ms/step, %.3f ms/step waiting on gradients",
                     step + 2 - interval_steps, step + 1, 1e3 * span / interval_steps,
                     1e3 * interval_wait / interval_steps);
            interval_t0 = ga_now();
            interval_steps = 0;
            interval_wait = 0;
        }
    }
    free(x);
    free(labels);
}

void ddp_loop_result_free(ddp_loop_result *r)
{
    free(r->loss_curve);
    free(r->accuracy_curve);
    r->loss_curve = r->accuracy_curve = NULL;
}
