/* lm_train's training loop (lm_loop.h). */
#include "lm_loop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_log.h"
#include "ga_time.h"

static void fill_batch(const lm_source *src, uint64_t first, int n_seq, int T, int *tokens, int *targets)
{
    if (src->shard)
        lm_shard_batch(src->shard, first, n_seq, T, tokens, targets);
    else
        lm_markov_batch(src->markov, first, n_seq, T, tokens, targets);
}

/* Whether every rank may take another step: none would end past the phase's end at its last step's pace.
 * The slowest rank's pace decides, so a slow rank shortens the phase and never lengthens the run. */
static bool all_have_time(const lm_loop_config *c, double last_step_s)
{
    int out_of_time = c->phase_end > 0 && ga_now() + last_step_s > c->phase_end, any = 0;
    GA_MPI_CHECK(MPI_Allreduce(&out_of_time, &any, 1, MPI_INT, MPI_MAX, c->comm));
    return !any;
}

static void log_progress(const lm_loop_config *c, int step, const lm_step_result *r, double span, int steps,
                         int ranks)
{
    double tokens = (double)steps * ranks * c->micro_batch * c->grad_accum * c->seq_len;
    ga_log("TRAIN", "step %5d/%d  loss %.4f  grad norm %.3f  %.0f tokens/s (%.0f per rank)  %.1f ms/step",
           step + 1, c->steps, r->loss, r->grad_norm, tokens / span, tokens / span / ranks,
           1e3 * span / steps);
}

static void alloc_result(const lm_loop_config *c, lm_loop_result *out)
{
    *out = (lm_loop_result){.nonfinite_step = -1};
    out->loss_curve = calloc((size_t)c->steps, sizeof *out->loss_curve);
    out->step_s = calloc((size_t)c->steps, sizeof *out->step_s);
    out->compute_s = calloc((size_t)c->steps, sizeof *out->compute_s);
    if (!out->loss_curve || !out->step_s || !out->compute_s)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory for %d steps' figures", c->steps);
}

static void account(const lm_loop_config *c, int step, const lm_step_result *r, double dt,
                    lm_loop_result *out)
{
    out->loss_curve[step] = r->loss;
    out->steps_done = step + 1;
    out->last_grad_norm = r->grad_norm;
    if (step < c->warmup)
        return;
    out->step_s[out->timed_steps] = dt;
    /* the host path's CPU time; on GPUs the step less its wait for gradients */
    out->compute_s[out->timed_steps++] = r->compute_s >= 0 ? r->compute_s : dt - r->comm_wait_s;
    out->train_s += dt;
    out->comm_wait_s += r->comm_wait_s;
}

int lm_loop_run(lm_trainer *t, const lm_source *src, const lm_loop_config *c, lm_loop_result *out, char *err,
                size_t errlen)
{
    int rank = 0, ranks = 1;
    GA_MPI_CHECK(MPI_Comm_rank(c->comm, &rank));
    GA_MPI_CHECK(MPI_Comm_size(c->comm, &ranks));
    const int per_rank = c->micro_batch * c->grad_accum;
    size_t n = (size_t)per_rank * (size_t)c->seq_len;
    int *tokens = malloc(n * sizeof *tokens), *targets = malloc(n * sizeof *targets);
    if (!tokens || !targets)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory for a batch of %d x %d tokens", per_rank, c->seq_len);
    alloc_result(c, out);
    const int log_every = c->steps >= 10 ? c->steps / 10 : 1;
    double interval_t0 = ga_now(), last_step_s = 0;
    int interval_steps = 0, rc = 0;
    for (int step = 0; step < c->steps; step++) {
        if (step > 0 && !all_have_time(c, last_step_s)) {
            out->out_of_time = true;
            break;
        }
        ga_phase("%s step %d of %d", c->what, step + 1, c->steps);
        double t0 = ga_now();
        /* Global step `step` covers sequences [step*R*b, (step+1)*R*b) past the phase's start; this rank
         * reads its slice of b = micro-batch x accumulation. */
        uint64_t first = c->first_sequence + ((uint64_t)step * ranks + (uint64_t)rank) * (uint64_t)per_rank;
        fill_batch(src, first, per_rank, c->seq_len, tokens, targets);
        lm_step_result r;
        if ((rc = t->step(t, tokens, targets, &r, err, errlen)) != 0)
            break;
        last_step_s = ga_now() - t0;
        account(c, step, &r, last_step_s, out);
        interval_steps++;
        /* The loss is the allreduced one, the same on every rank: all stop together. */
        if (!isfinite(r.loss)) {
            out->nonfinite_step = step;
            ga_log("TRAIN", "step %d: the global loss is %g; stopping", step + 1, r.loss);
            break;
        }
        if (!c->quiet && ((step + 1) % log_every == 0 || step + 1 == c->steps)) {
            log_progress(c, step, &r, ga_now() - interval_t0, interval_steps, ranks);
            interval_t0 = ga_now();
            interval_steps = 0;
        }
    }
    free(tokens);
    free(targets);
    return rc == 0 ? 0 : -1;
}

void lm_loop_result_free(lm_loop_result *r)
{
    free(r->loss_curve);
    free(r->step_s);
    free(r->compute_s);
    *r = (lm_loop_result){.nonfinite_step = -1};
}
