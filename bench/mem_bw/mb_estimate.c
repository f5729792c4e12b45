/* mem_bw's run time for `gpuaccept run --dry-run` (ga_estimate.h): its repetitions of the copy and triad (and
 * on a GPU the host link's copies) at the SKU's or the host's memory bandwidth. */
#include <math.h>
#include <stdio.h>

#include "ga_estimate.h"

ga_estimate_fn mem_bw_estimate; /* named by the registry, called through its generated table */

static double mem_gpu_s(const ga_estimate_in *in, bool quick, double reps, ga_estimate_out *out)
{
    const ga_est_figures *f = in->f;
    double size = ga_est_arg_size(in->args, "size", 's', quick ? 256.0 * (1 << 20) : 1024.0 * (1 << 20));
    double pinned = ga_est_arg_size(in->args, "pinned-size", 0, quick ? 64.0 * (1 << 20) : 256.0 * (1 << 20));
    snprintf(out->model, sizeof out->model,
             "launch + set-up %.1f s + %.0f x (copy and triad of %.0f MiB at %.0f GB/s, H2D and D2H of %.0f "
             "MiB at %.0f GB/s per GPU); a slow link changes nothing",
             f->mem_setup_s, reps, size / (1 << 20), f->hbm_GBps, pinned / (1 << 20), f->pcie_GBps);
    return reps * ((2 + 3) * size / (f->hbm_GBps * 1e9) + 2 * pinned / (f->pcie_GBps * 1e9));
}

static double mem_host_s(const ga_estimate_in *in, double reps, ga_estimate_out *out)
{
    const ga_est_figures *f = in->f;
    double per_rank = f->host_mem_GBps / in->c->ranks_per_node;
    double size = ga_est_arg_size(in->args, "size", 's',
                                  fmax(32.0 * (1 << 20), 4 * f->host_llc_bytes / in->c->ranks_per_node));
    snprintf(
        out->model, sizeof out->model,
        "launch + set-up %.1f s + %.0f triads of 3 x %.0f MiB at %.1f GB/s per rank (a node's %.0f GB/s, "
        "%.0f MiB LLC assumed); a slow link changes nothing",
        f->mem_setup_s, reps, size / (1 << 20), per_rank, f->host_mem_GBps, f->host_llc_bytes / (1 << 20));
    return (reps + 1) * 3 * size / (per_rank * 1e9);
}

int mem_bw_estimate(const ga_estimate_in *in, ga_estimate_out *out)
{
    const ga_est_figures *f = in->f;
    bool quick = ga_est_arg_flag(in->args, "--quick");
    /* --iters, or its deprecated name --reps; one untimed repetition first */
    double reps =
        ga_est_arg_num(in->args, "iters", 0, ga_est_arg_num(in->args, "reps", 0, quick ? 5 : 20)) + 1;
    double work = f->gpu ? mem_gpu_s(in, quick, reps, out) : mem_host_s(in, reps, out);
    out->run_s =
        f->mem_setup_s + work + ga_est_gather_s(f, in->c->nodes * in->c->ranks_per_node, 4096) + f->report_s;
    return 0;
}
