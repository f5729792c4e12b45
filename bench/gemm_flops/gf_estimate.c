/* gemm_flops' run time for `gpuaccept run --dry-run` (ga_estimate.h): per dtype its set-up, warm-ups, timed
 * GEMMs and check, at the SKU's bf16 figure on a GPU and at one core's rates on the host, and the burn. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ga_estimate.h"
#include "gf_defaults.h"

ga_estimate_fn gemm_flops_estimate; /* named by the registry, called through its generated table */

/* gemm_flops --datatype LIST (or its deprecated --dtype): how many dtypes run; on the host OpenBLAS's fp32
 * and fp64 alone, in host[0] and host[1]. */
static int gemm_dtypes(const ga_estimate_in *in, int host[2])
{
    const char *list = ga_est_arg_value(in->args, "datatype", 'd');
    if (!list)
        list = ga_est_arg_value(in->args, "dtype", 0);
    host[0] = host[1] = 0;
    if (!list || strcmp(list, "all") == 0) {
        host[0] = host[1] = 1;
        return in->f->gpu ? 7 : 2;
    }
    int n = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        for (int d = 0; d < 2; d++)
            host[d] += len == 4 && strncmp(p, d ? "fp64" : "fp32", 4) == 0;
        n++;
        p += len + (p[len] == ',');
    }
    return in->f->gpu ? n : host[0] + host[1];
}

/* One dtype: set-up, the warm-ups, the timed GEMMs (--iters, else as many as fill the target, at least one),
 * the check. */
static double gemm_dtype_s(const ga_est_figures *f, double flop, double rate, double warm, double iters,
                           double target)
{
    double one = rate > 0 ? flop / rate : 0;
    return f->gemm_setup_s + (warm + 1) * one + (iters > 0 ? iters * one : fmax(target, one));
}

/* --algos N on a GPU: each candidate once, then two rounds of at least 3 GEMMs or 20 ms (gf_gpu.cu). */
static double candidates_s(double flop, double rate, double algos)
{
    double one = rate > 0 ? flop / rate : 0;
    return algos > 1 ? algos * (one + 2 * fmax(3 * one, 0.02)) : 0;
}

static void gemm_model_line(const ga_est_figures *f, int dtypes, double warm, double target, double m,
                            double n, double k, double burn, ga_estimate_out *out)
{
    snprintf(out->model, sizeof out->model,
             "launch + %d dtype%s x (set-up %.1f s, on a GPU the algorithm candidates, %.0f warm-ups, timed "
             "GEMMs for %.2f s at least, the check) of %.0fx%.0fx%.0f at %s + burn %.0f s; a slow link "
             "changes nothing",
             dtypes, dtypes == 1 ? "" : "s", f->gemm_setup_s, warm, target, m, n, k,
             f->gpu ? (f->gemm_TFLOPs > 0 ? "the baseline's bf16 TFLOP/s" : "no figure (the target alone)")
                    : "the host rates per rank (one core)",
             burn);
    if (!f->gpu)
        snprintf(out->model + strlen(out->model), sizeof out->model - strlen(out->model),
                 " (host: %.0f GFLOP/s fp32, %.0f fp64 per core, docs/gemm_flops.md)", f->host_GFLOPs[0],
                 f->host_GFLOPs[1]);
}

int gemm_flops_estimate(const ga_estimate_in *in, ga_estimate_out *out)
{
    const ga_est_figures *f = in->f;
    const json_t *a = in->args;
    bool quick = ga_est_arg_flag(a, "--quick");
    double dim = f->gpu ? (quick ? 4096 : 8192) : (quick ? 512 : 2048);
    double m = ga_est_arg_num(a, "m", 'm', dim), n = ga_est_arg_num(a, "n", 'n', m),
           k = ga_est_arg_num(a, "k", 'k', m);
    double target = quick ? 0.25 : 1.0, warm = ga_est_arg_num(a, "warmup", 'w', 3),
           iters = ga_est_arg_num(a, "iters", 0, 0);
    double burn = ga_est_arg_num(a, "duration", 0, 0), flop = 2 * m * n * k;
    int host[2], dtypes = gemm_dtypes(in, host);
    double work = 0;
    if (f->gpu) /* every dtype at the SKU's bf16 figure: the time target dominates a GPU's GEMMs */
        work = dtypes *
               (gemm_dtype_s(f, flop, f->gemm_TFLOPs * 1e12, warm, iters, target) +
                candidates_s(flop, f->gemm_TFLOPs * 1e12, ga_est_arg_num(a, "algos", 0, GF_DEFAULT_ALGOS)));
    for (int d = 0; !f->gpu && d < 2; d++)
        work += host[d] * gemm_dtype_s(f, flop, f->host_GFLOPs[d] * 1e9, warm, iters, target);
    double interval = burn > 0 ? fmin(60, fmax(1, burn / 10)) : 1;
    int world = in->c->nodes * in->c->ranks_per_node;
    double burn_s = burn > 0 ? burn + ceil(burn / interval) * ga_est_mpi_small_s(f, world) : 0;
    gemm_model_line(f, dtypes, warm, target, m, n, k, burn, out);
    out->run_s = work + burn_s + ga_est_gather_s(f, world, 8192) + f->report_s;
    return 0;
}
