/* lm_train's run time for `gpuaccept run --dry-run` (ga_estimate.h): --steps optimiser steps of the GPT-2
 * size asked (tiny on the host path, d12 on GPUs), each its compute (6 FLOPs per parameter per token) and one
 * allreduce of its gradients (the alpha-beta model allreduce_bw's is too), at most 90 % of --timeout, which
 * the program spends as its budget (docs/lm_train.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ga_estimate.h"
#include "lm_config.h"

ga_estimate_fn lm_train_estimate; /* named by the registry, called through its generated table */

/* The model's size as the program would choose it: --model, else explicit sizes, else tiny (host) or d12. */
static int model_of(const ga_estimate_in *in, lm_config *cfg, char *err, size_t errlen)
{
    const json_t *a = in->args;
    const char *name = ga_est_arg_value(a, "model", 0);
    if (lm_config_named(name ? name : in->f->gpu ? "d12" : "tiny", cfg, err, errlen) != 0)
        return -1;
    if (name || !ga_est_arg_value(a, "layers", 0))
        return 0;
    return lm_config_make(cfg, (int)ga_est_arg_num(a, "layers", 0, cfg->layers),
                          (int)ga_est_arg_num(a, "channels", 0, cfg->channels),
                          (int)ga_est_arg_num(a, "heads", 0, cfg->heads),
                          (int)ga_est_arg_num(a, "seq-len", 0, cfg->seq_len),
                          (int)ga_est_arg_num(a, "vocab", 0, cfg->vocab), err, errlen);
}

int lm_train_estimate(const ga_estimate_in *in, ga_estimate_out *out)
{
    const ga_est_figures *f = in->f;
    const json_t *a = in->args;
    lm_config cfg;
    if (model_of(in, &cfg, out->model, sizeof out->model) != 0)
        return -1;
    bool quick = ga_est_arg_flag(a, "--quick");
    int world = in->c->nodes * in->c->ranks_per_node;
    double params = (double)lm_param_count(&cfg);
    double tokens = ga_est_arg_num(a, "batch-size", 0,
                                   quick    ? 4
                                   : f->gpu ? 16
                                            : 8) *
                    ga_est_arg_num(a, "grad-accum", 0, 1) * cfg.seq_len;
    double steps =
        ga_est_arg_num(a, "steps", 'n', quick ? 40 : 300) * (ga_est_arg_flag(a, "--scaling") ? 2 : 1);
    /* GPU: 40 % of the bf16 GEMM rate (a GPT-2-small step leaves an H100 under-used); host: ddp_smoke's rate
     */
    double rate = f->gpu ? 0.4e12 * (f->gemm_TFLOPs > 0 ? f->gemm_TFLOPs : 700) : f->ddp_GFLOPs * 1e9;
    double compute = fmax(f->ddp_step_floor_s, lm_flops_per_token(&cfg, LM_FLOPS_LLMC) * tokens / rate);
    double comm =
        world > 1 ? ga_est_allreduce_s(f, (size_t)(params * 4), 4, world, in->c->nodes, in->slow) : 0;
    double init = f->comm_init_s + f->comm_init_per_rank * world;
    double budget = in->c->program_timeout_s > 0 ? in->c->program_timeout_s : 1800;
    double train = steps * (compute + comm), bounded = fmin(train, 0.9 * budget);
    snprintf(out->model, sizeof out->model,
             "launch + init %.1f s + %.0f steps x (%.4g FLOPs per token x %.0f tokens at %.4g TFLOP/s + an "
             "allreduce of %.0f KiB over %d ranks), at most 90%% of --timeout %.0f s",
             init, steps, lm_flops_per_token(&cfg, LM_FLOPS_LLMC), tokens, rate / 1e12, params * 4 / 1024,
             world, budget);
    if (train > bounded)
        snprintf(out->cut, sizeof out->cut, "lm_train: about %.0f of %.0f steps fit 90%% of --timeout %.0f s",
                 floor(steps * bounded / train), steps, budget);
    double tail = ga_est_gather_s(f, world, 4096) + f->report_s;
    out->run_s = init + bounded + tail;
    out->whole_s = init + train + tail;
    return 0;
}
