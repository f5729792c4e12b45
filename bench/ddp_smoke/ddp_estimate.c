/* ddp_smoke's run time for `gpuaccept run --dry-run` (ga_estimate.h): --steps optimiser steps of the MLP,
 * each its compute and its gradients' allreduce in buckets (the alpha-beta model allreduce_bw's is too), at
 * most the training's share of --timeout, as the program plans them (ga_train_budget.h). */
#include <math.h>
#include <stdio.h>

#include "ga_estimate.h"

ga_estimate_fn ddp_smoke_estimate; /* named by the registry, called through its generated table */

int ddp_smoke_estimate(const ga_estimate_in *in, ga_estimate_out *out)
{
    const ga_est_figures *f = in->f;
    const json_t *a = in->args;
    bool quick = ga_est_arg_flag(a, "--quick");
    int world = in->c->nodes * in->c->ranks_per_node;
    double layers = ga_est_arg_num(a, "layers", 0, 2), h = ga_est_arg_num(a, "hidden", 0, quick ? 128 : 512);
    double in_dim = ga_est_arg_num(a, "input-dim", 0, 64), classes = ga_est_arg_num(a, "classes", 0, 10);
    double batch = ga_est_arg_num(a, "batch-size", 0, quick ? 32 : 128),
           samples = ga_est_arg_num(a, "samples", 0, quick ? 16384 : 65536);
    double steps = ga_est_arg_num(a, "steps", 'n', quick ? 300 : 500),
           epochs = ga_est_arg_num(a, "epochs", 0, 0);
    double bucket = ga_est_arg_size(a, "bucket-size", 0, quick ? 64 << 10 : 1 << 20);
    if (epochs > 0)
        steps = epochs * ceil(samples / (world * batch));
    double params = layers > 0 ? (in_dim * h + h) + (layers - 1) * (h * h + h) + (h * classes + classes)
                               : in_dim * classes + classes;
    double grad_bytes = params * (f->gpu ? 4 : 8), buckets = ceil(grad_bytes / bucket);
    double compute = fmax(f->ddp_step_floor_s, 6 * batch * params / (f->ddp_GFLOPs * 1e9));
    /* fp32 gradients on a GPU, fp64 on the host */
    double comm = world > 1 ? buckets * ga_est_allreduce_s(f, (size_t)(grad_bytes / buckets), f->gpu ? 4 : 8,
                                                           world, in->c->nodes, in->slow)
                            : 0;
    double init = f->comm_init_s + f->comm_init_per_rank * world;
    snprintf(
        out->model, sizeof out->model,
        "launch + init %.1f s + %.0f steps x (compute 6 x %.0f samples x %.0f params at %.4g GFLOP/s, at "
        "least %.0f ms, + %.0f bucket allreduce%s of %.0f KiB over %d ranks, the alpha-beta model of "
        "allreduce_bw); slow node: the allreduce through its links",
        init, steps, batch, params, f->ddp_GFLOPs, f->ddp_step_floor_s * 1e3, buckets,
        buckets == 1 ? "" : "s", grad_bytes / buckets / 1024, world);
    double budget = in->c->program_timeout_s > 0 ? in->c->program_timeout_s : 1800;
    double train = steps * (compute + comm), bounded = fmin(train, 0.9 * budget);
    if (train > bounded)
        snprintf(out->cut, sizeof out->cut,
                 "ddp_smoke: about %.0f of %.0f steps fit 90%% of --timeout %.0f s",
                 floor(steps * bounded / train), steps, budget);
    double tail = ga_est_gather_s(f, world, 4096) + f->report_s;
    out->run_s = init + bounded + tail;
    out->whole_s = init + train + tail;
    return 0;
}
