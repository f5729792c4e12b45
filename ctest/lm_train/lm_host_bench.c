/* lm_train host benchmark (not a test): tokens/s of a full training step (forward, backward, AdamW) of the
 * host fp32 model on the synthetic stream, for the tiny configuration and a small one, with the FLOP rate by
 * llm.c's 6N + 6LCT rule. Benchmark output for the notes; nothing is asserted.
 *
 *     lm_host_bench [STEPS]   (default 10 timed steps after 2 warm-up steps) */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lm_config.h"
#include "lm_data.h"
#include "lm_model.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void one_step(lm_model *m, const lm_markov *mc, const lm_optim_config *oc, int step, int *tok,
                     int *tgt)
{
    lm_markov_batch(mc, (uint64_t)step * (uint64_t)m->batch, m->batch, m->cfg.seq_len, tok, tgt);
    lm_zero_grad(m);
    lm_forward(m, tok, tgt);
    lm_backward(m, 1.0f);
    lm_optim_step(m, oc);
}

static int bench(const char *name, const lm_config *c, int batch, int steps)
{
    char err[200];
    lm_model m;
    lm_markov mc;
    if (lm_model_init(&m, c, batch, err, sizeof err) != 0 ||
        lm_markov_init(&mc, c->vocab, 1, err, sizeof err)) {
        fprintf(stderr, "lm_host_bench: %s\n", err);
        return 1;
    }
    lm_model_init_params(&m, 1);
    lm_optim_config oc = lm_optim_defaults(2, steps + 2);
    size_t bt = (size_t)batch * (size_t)c->seq_len;
    int *tok = malloc(bt * sizeof *tok), *tgt = malloc(bt * sizeof *tgt);
    for (int s = 0; s < 2; s++)
        one_step(&m, &mc, &oc, s, tok, tgt);
    double t0 = now();
    for (int s = 2; s < steps + 2; s++)
        one_step(&m, &mc, &oc, s, tok, tgt);
    double secs = now() - t0, tps = (double)steps * (double)bt / secs;
    printf("%-5s L%d C%d NH%d T%d V%d B%d: %zu params, %.1f ms/step, %.0f tokens/s, %.2f GFLOP/s (6N+6LCT), "
           "loss %.3f\n",
           name, c->layers, c->channels, c->heads, c->seq_len, c->vocab, batch, m.n_params,
           1e3 * secs / steps, tps, tps * lm_flops_per_token(c, LM_FLOPS_LLMC) / 1e9, m.loss);
    free(tok);
    free(tgt);
    lm_markov_free(&mc);
    lm_model_free(&m);
    return 0;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    lm_config tiny, small;
    char err[200];
    if (steps < 1 || lm_config_named("tiny", &tiny, err, sizeof err) != 0 ||
        lm_config_make(&small, 4, 128, 4, 128, 512, err, sizeof err) != 0) {
        fprintf(stderr, "usage: lm_host_bench [STEPS >= 1]\n");
        return 2;
    }
    printf("OpenBLAS threads: %d\n", openblas_get_num_threads());
    return bench("tiny", &tiny, 8, steps) || bench("small", &small, 4, steps);
}
