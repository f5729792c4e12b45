/* Estimates of each step's wall time (estimate.h): the figures the models take as given, the simple models
 * of node_health, env_audit, gemm_flops, mem_bw and ddp_smoke, and the dry run's lines. allreduce_bw's
 * model is estimate_ar.c. */
#include "estimate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ar_coll.h"
#include "estimate_model.h"
#include "ga_parse.h"
#include "suite_util.h"

/* Per GPU, one NDR InfiniBand NIC (400 Gb/s) of an HGX H100 node: "for NDR @ 400Gbps you should see 46-48GB/s
 * per NIC" (an NCCL maintainer, NVIDIA/nccl-tests issue 290); 4 such nodes reach 366 GB/s (issue 309). */
#define EST_NIC_GBPS 46.0

void est_figures_for(const suite_est_cluster *c, est_figures *f)
{
    memset(f, 0, sizeof *f);
    f->gpu = c->gpu;
    f->launch_s = 1.0, f->launch_per_node_s = 0.02; /* mpirun's daemons over ssh, a tree: an assumption */
    f->split_s = 1e-3, f->split_per_rank = 1e-6;
    f->check_per_byte = 4e-9; /* fill 2.1-2.5 ns/B + compare 1.4-1.7 ns/B, one EPYC core (CPU time) */
    f->mpi_alpha = 20e-6, f->mpi_GBps = 2.0;
    f->report_s = 0.5;
    f->slow_factor = 1;
    f->host_GFLOPs[0] = 40, f->host_GFLOPs[1] = 20; /* docs/gemm_flops.md: 34-47 fp32, 16-24 fp64 per core */
    f->host_mem_GBps = 20, f->host_llc_bytes = 32.0 * (1 << 20);
    if (c->gpu) {
        f->busbw_intra = c->node_busbw_GBps > 0 ? c->node_busbw_GBps : 200;
        double nics = EST_NIC_GBPS * c->ranks_per_node;
        f->busbw_inter = nics < f->busbw_intra ? nics : f->busbw_intra;
        f->alpha_intra = 10e-6, f->alpha_inter = 20e-6, f->alpha_per_doubling = 5e-6;
        f->comm_init_s = 0.5, f->comm_init_per_rank = 2e-3; /* NCCL init: 16 ranks 0.53 s, 4096 8.7 s */
        f->copy_GBps = 25;
        f->nh_s = 2.0, f->ea_s = 1.0;
        f->gemm_setup_s = 0.5, f->gemm_TFLOPs = c->gemm_bf16_TFLOPs;
        f->mem_setup_s = 1.0, f->hbm_GBps = c->mem_copy_GBps > 0 ? c->mem_copy_GBps : 1500, f->pcie_GBps = 25;
        f->ddp_GFLOPs = 20000, f->ddp_step_floor_s = 1e-3;
    } else {
        f->busbw_intra = 4.0, f->busbw_inter = 1.25; /* shared memory; 10 Gb/s Ethernet */
        f->alpha_intra = 5e-6, f->alpha_inter = 50e-6, f->alpha_per_doubling = 10e-6;
        f->copy_GBps = 10;
        f->nh_s = 0.5, f->ea_s = 1.0;
        f->gemm_setup_s = 0.2;
        f->mem_setup_s = 0.2;
        f->ddp_GFLOPs = 20;
    }
}

double est_launch_s(const est_figures *f, int nodes)
{
    return f->launch_s + f->launch_per_node_s * nodes;
}

double est_mpi_small_s(const est_figures *f, int ranks)
{
    return ranks > 1 ? f->mpi_alpha * ceil(log2((double)ranks)) : 0;
}

double est_op_s(const est_figures *f, int coll, int type, size_t size_bytes, int ranks, int nodes, bool slow)
{
    ar_counts c;
    ar_coll_counts((ar_coll_id)coll, size_bytes, (ar_dtype)type, ranks, &c);
    size_t bytes = ar_coll_bytes(&c, (ar_dtype)type);
    if (ranks <= 1)
        return f->alpha_intra + (double)bytes / (f->copy_GBps * 1e9);
    /* busbw at a time of 1 s is the bytes the bus carries: busbw = that / time */
    double alg = 0, carried = 0;
    ar_coll_bandwidth((ar_coll_id)coll, bytes, 1.0, ranks, &alg, &carried);
    if (nodes < 2)
        return f->alpha_intra + carried / f->busbw_intra;
    double busbw = f->busbw_inter / (slow ? f->slow_factor : 1);
    return f->alpha_inter + f->alpha_per_doubling * log2((double)nodes / 2) + carried / busbw;
}

char **est_argv(const char *program, const json_t *args, int *argc)
{
    size_t n = json_array_size(args);
    char **argv = calloc(n + 2, sizeof *argv);
    if (!argv)
        return NULL;
    argv[0] = strdup(program);
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = strdup(
            json_string_value(json_array_get(args, i)) ? json_string_value(json_array_get(args, i)) : "");
    *argc = (int)n + 1;
    for (int i = 0; i < *argc; i++)
        if (!argv[i]) {
            est_argv_free(argv, *argc);
            return NULL;
        }
    return argv;
}

void est_argv_free(char **argv, int argc)
{
    for (int i = 0; argv && i < argc; i++)
        free(argv[i]);
    free(argv);
}

/* ---- the arguments of the simple models ---- */

/* The last value given to --long_name or -short_key (also --long_name=V), NULL when none. */
static const char *arg_value(const json_t *args, const char *long_name, char short_key)
{
    const char *found = NULL;
    size_t n = json_array_size(args), len = strlen(long_name);
    for (size_t i = 0; i < n; i++) {
        const char *w = json_string_value(json_array_get(args, i));
        if (!w)
            continue;
        bool is_long = strncmp(w, "--", 2) == 0 && strncmp(w + 2, long_name, len) == 0;
        if (is_long && w[2 + len] == '=')
            found = w + 3 + len;
        else if (i + 1 < n &&
                 ((is_long && !w[2 + len]) || (short_key && w[0] == '-' && w[1] == short_key && !w[2])))
            found = json_string_value(json_array_get(args, i + 1));
    }
    return found;
}

static bool arg_flag(const json_t *args, const char *word)
{
    size_t i;
    json_t *v;
    json_array_foreach(args, i, v)
        if (json_string_value(v) && strcmp(json_string_value(v), word) == 0)
            return true;
    return false;
}

static double arg_num(const json_t *args, const char *long_name, char short_key, double dflt)
{
    const char *v = arg_value(args, long_name, short_key);
    double x;
    char err[64];
    return v && ga_parse_double(v, -1e15, 1e15, &x, err, sizeof err) == 0 ? x : dflt;
}

static double arg_size(const json_t *args, const char *long_name, char short_key, double dflt)
{
    const char *v = arg_value(args, long_name, short_key);
    uint64_t x;
    char err[64];
    return v && ga_parse_size(v, &x, err, sizeof err) == 0 ? (double)x : dflt;
}

/* ---- the simple models: one call per case (fault-free, slow node) ---- */

typedef struct {
    const est_figures *f;
    const suite_est_cluster *c;
    const json_t *args;
    bool slow;
    char *model; /* written on the fault-free call */
    size_t model_len;
} simple_in;

static double gather_records_s(const est_figures *f, int ranks, double bytes_each)
{
    return est_mpi_small_s(f, ranks) + ranks * bytes_each / (f->mpi_GBps * 1e9);
}

static double model_fixed(const simple_in *in, double work_s)
{
    int world = in->c->nodes * in->c->ranks_per_node;
    if (!in->slow)
        snprintf(in->model, in->model_len,
                 "fixed: launch %.0f s + %.0f ms per node, its checks %.1f s, gather and report %.1f s; a "
                 "slow link "
                 "changes nothing",
                 in->f->launch_s, in->f->launch_per_node_s * 1e3, work_s, in->f->report_s);
    return est_launch_s(in->f, in->c->nodes) + work_s + gather_records_s(in->f, world, 4096) +
           in->f->report_s;
}

/* gemm_flops --dtype LIST: how many dtypes run; on the host OpenBLAS's fp32 and fp64 alone, in fp64[0] and
 * fp64[1] (fp32, fp64). */
static int gemm_dtypes(const simple_in *in, int host[2])
{
    const char *list = arg_value(in->args, "dtype", 'd');
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
static double gemm_dtype_s(const est_figures *f, double flop, double rate, double warm, double iters,
                           double target)
{
    double one = rate > 0 ? flop / rate : 0;
    return f->gemm_setup_s + (warm + 1) * one + (iters > 0 ? iters * one : fmax(target, one));
}

static double model_gemm(const simple_in *in)
{
    const est_figures *f = in->f;
    const json_t *a = in->args;
    bool quick = arg_flag(a, "--quick");
    double dim = f->gpu ? (quick ? 4096 : 8192) : (quick ? 512 : 2048);
    double m = arg_num(a, "m", 'm', dim), n = arg_num(a, "n", 'n', m), k = arg_num(a, "k", 'k', m);
    double target = quick ? 0.25 : 1.0, warm = arg_num(a, "warmup", 'w', 3),
           iters = arg_num(a, "iters", 0, 0);
    double burn = arg_num(a, "duration", 0, 0), flop = 2 * m * n * k;
    int host[2], dtypes = gemm_dtypes(in, host);
    double work = 0;
    if (f->gpu) /* every dtype at the SKU's bf16 figure: the time target dominates a GPU's GEMMs */
        work = dtypes * gemm_dtype_s(f, flop, f->gemm_TFLOPs * 1e12, warm, iters, target);
    for (int d = 0; !f->gpu && d < 2; d++)
        work += host[d] * gemm_dtype_s(f, flop, f->host_GFLOPs[d] * 1e9, warm, iters, target);
    double interval = burn > 0 ? fmin(60, fmax(1, burn / 10)) : 1;
    int world = in->c->nodes * in->c->ranks_per_node;
    double burn_s = burn > 0 ? burn + ceil(burn / interval) * est_mpi_small_s(f, world) : 0;
    if (!in->slow)
        snprintf(in->model, in->model_len,
                 "launch + %d dtype%s x (set-up %.1f s, %.0f warm-ups, timed GEMMs for %.2f s at least, the "
                 "check) "
                 "of %.0fx%.0fx%.0f at %s + burn %.0f s; a slow link changes nothing",
                 dtypes, dtypes == 1 ? "" : "s", f->gemm_setup_s, warm, target, m, n, k,
                 f->gpu
                     ? (f->gemm_TFLOPs > 0 ? "the baseline's bf16 TFLOP/s" : "no figure (the target alone)")
                     : "the host rates per rank (one core)",
                 burn);
    if (!in->slow && !f->gpu)
        snprintf(in->model + strlen(in->model), in->model_len - strlen(in->model),
                 " (host: %.0f GFLOP/s fp32, %.0f fp64 per core, docs/gemm_flops.md)", f->host_GFLOPs[0],
                 f->host_GFLOPs[1]);
    return est_launch_s(f, in->c->nodes) + work + burn_s + gather_records_s(f, world, 8192) + f->report_s;
}

static double model_mem(const simple_in *in)
{
    const est_figures *f = in->f;
    bool quick = arg_flag(in->args, "--quick");
    double reps = arg_num(in->args, "reps", 0, quick ? 5 : 20) + 1; /* one untimed first */
    double work;
    if (f->gpu) {
        double size = arg_size(in->args, "size", 's', quick ? 256.0 * (1 << 20) : 1024.0 * (1 << 20));
        double pinned = arg_size(in->args, "pinned-size", 0, quick ? 64.0 * (1 << 20) : 256.0 * (1 << 20));
        work = reps * ((2 + 3) * size / (f->hbm_GBps * 1e9) + 2 * pinned / (f->pcie_GBps * 1e9));
        if (!in->slow)
            snprintf(in->model, in->model_len,
                     "launch + set-up %.1f s + %.0f x (copy and triad of %.0f MiB at %.0f GB/s, H2D and D2H "
                     "of %.0f "
                     "MiB at %.0f GB/s per GPU); a slow link changes nothing",
                     f->mem_setup_s, reps, size / (1 << 20), f->hbm_GBps, pinned / (1 << 20), f->pcie_GBps);
    } else {
        double per_rank = f->host_mem_GBps / in->c->ranks_per_node;
        double size = arg_size(in->args, "size", 's',
                               fmax(32.0 * (1 << 20), 4 * f->host_llc_bytes / in->c->ranks_per_node));
        work = (reps + 1) * 3 * size / (per_rank * 1e9);
        if (!in->slow)
            snprintf(in->model, in->model_len,
                     "launch + set-up %.1f s + %.0f triads of 3 x %.0f MiB at %.1f GB/s per rank (a node's "
                     "%.0f GB/s, "
                     "%.0f MiB LLC assumed); a slow link changes nothing",
                     f->mem_setup_s, reps, size / (1 << 20), per_rank, f->host_mem_GBps,
                     f->host_llc_bytes / (1 << 20));
    }
    return est_launch_s(f, in->c->nodes) + f->mem_setup_s + work +
           gather_records_s(f, in->c->nodes * in->c->ranks_per_node, 4096) + f->report_s;
}

/* ddp_smoke: --steps optimiser steps of the MLP, each its compute and its gradients' allreduce in buckets. */
static double model_ddp(const simple_in *in)
{
    const est_figures *f = in->f;
    const json_t *a = in->args;
    bool quick = arg_flag(a, "--quick");
    int world = in->c->nodes * in->c->ranks_per_node;
    double layers = arg_num(a, "layers", 0, 2), h = arg_num(a, "hidden", 0, quick ? 128 : 512);
    double in_dim = arg_num(a, "input-dim", 0, 64), classes = arg_num(a, "classes", 0, 10);
    double batch = arg_num(a, "batch-size", 0, quick ? 32 : 128),
           samples = arg_num(a, "samples", 0, quick ? 16384 : 65536);
    double steps = arg_num(a, "steps", 'n', quick ? 300 : 500), epochs = arg_num(a, "epochs", 0, 0);
    double bucket = arg_size(a, "bucket-size", 0, quick ? 64 << 10 : 1 << 20);
    if (epochs > 0)
        steps = epochs * ceil(samples / (world * batch));
    double params = layers > 0 ? (in_dim * h + h) + (layers - 1) * (h * h + h) + (h * classes + classes)
                               : in_dim * classes + classes;
    double grad_bytes = params * (f->gpu ? 4 : 8), buckets = ceil(grad_bytes / bucket);
    double compute = fmax(f->ddp_step_floor_s, 6 * batch * params / (f->ddp_GFLOPs * 1e9));
    double comm = world > 1
                      ? buckets * est_op_s(f, AR_ALLREDUCE, f->gpu ? AR_FLOAT : AR_DOUBLE,
                                           (size_t)(grad_bytes / buckets), world, in->c->nodes, in->slow)
                      : 0;
    double init = f->comm_init_s + f->comm_init_per_rank * world;
    if (!in->slow)
        snprintf(
            in->model, in->model_len,
            "launch + init %.1f s + %.0f steps x (compute 6 x %.0f samples x %.0f params at %.4g GFLOP/s, at "
            "least %.0f ms, + %.0f bucket allreduce%s of %.0f KiB over %d ranks, the alpha-beta model of "
            "allreduce_bw); slow node: the allreduce through its links",
            init, steps, batch, params, f->ddp_GFLOPs, f->ddp_step_floor_s * 1e3, buckets,
            buckets == 1 ? "" : "s", grad_bytes / buckets / 1024, world);
    return est_launch_s(f, in->c->nodes) + init + steps * (compute + comm) +
           gather_records_s(f, world, 4096) + f->report_s;
}

/* lm_train: --steps optimiser steps of the named GPT-2 size (tiny on the host path, d12 on GPUs), each its
 * training FLOPs (6N per token) and its gradients' allreduce, bounded by the program's --timeout (its time is
 * a budget: steps that do not fit are cut, never the run lengthened). A rough model until its own file. */
static double model_lm(const simple_in *in)
{
    const est_figures *f = in->f;
    const json_t *a = in->args;
    bool quick = arg_flag(a, "--quick");
    int world = in->c->nodes * in->c->ranks_per_node;
    const char *name = arg_value(a, "model", 0);
    bool tiny = name ? strcmp(name, "tiny") == 0 : !f->gpu;
    /* tiny: 2 x 64 wide, seq 64, vocab 256; d12: 12 x 768, seq 1024, vocab 50304 (padded) */
    double L = tiny ? 2 : 12, C = tiny ? 64 : 768, T = tiny ? 64 : 1024, V = tiny ? 256 : 50304;
    double params = 12 * L * C * C + V * C + T * C;
    double batch = arg_num(a, "batch-size", 0, quick ? 4 : f->gpu ? 16 : 8) * arg_num(a, "grad-accum", 0, 1);
    double steps = arg_num(a, "steps", 'n', quick ? 40 : 300) * (arg_flag(a, "--scaling") ? 2 : 1);
    /* GPU: 40 % of the bf16 GEMM rate (a GPT-2-small step leaves an H100 under-used); host: ddp_smoke's rate
     */
    double rate = f->gpu ? 0.4e12 * (f->gemm_TFLOPs > 0 ? f->gemm_TFLOPs : 700) : f->ddp_GFLOPs * 1e9;
    double compute = fmax(f->ddp_step_floor_s, 6 * params * batch * T / rate);
    double comm =
        world > 1 ? est_op_s(f, AR_ALLREDUCE, AR_FLOAT, (size_t)(params * 4), world, in->c->nodes, in->slow)
                  : 0;
    double init = f->comm_init_s + f->comm_init_per_rank * world;
    double budget = in->c->program_timeout_s > 0 ? in->c->program_timeout_s : 1800;
    double train = fmin(steps * (compute + comm), 0.9 * budget);
    if (!in->slow)
        snprintf(in->model, in->model_len,
                 "launch + init %.1f s + %.0f steps x (6 x %.3g params x %.0f tokens at %.4g TFLOP/s + an "
                 "allreduce of %.0f KiB over %d ranks), at most 90%% of --timeout %.0f s",
                 init, steps, params, batch * T, rate / 1e12, params * 4 / 1024, world, budget);
    return est_launch_s(f, in->c->nodes) + init + train + gather_records_s(f, world, 4096) + f->report_s;
}

/* ---- allreduce_bw ---- */

static void ar_model_line(const est_figures *f, const suite_est_cluster *c, const est_ar_plan *p, char *buf,
                          size_t len)
{
    snprintf(
        buf, len,
        "launch %.0f s + %.0f ms/node; alpha-beta t = a + f(n) S / busbw, busbw %.4g GB/s within a node%s, "
        "%.4g across nodes%s, a = %.0f us in a node, %.0f us + %.0f us per doubling across; %s %.1f s + "
        "%.0f ms/rank; check %.0f ns/B on one core; its plan (ar_budget.h) over %d sizes: world, node, "
        "pairs shares 0.35/0.15/0.50 of --timeout %.0f s less the reserve, the screen at the judging size, "
        "rounds cut where a pair is judged; slow node: its links %.0fx slower",
        f->launch_s, f->launch_per_node_s * 1e3, f->busbw_intra,
        f->gpu && c->node_busbw_GBps > 0 ? " (baseline)" : "", f->busbw_inter,
        f->gpu ? " (46 GB/s per NDR NIC, one per GPU)" : " (10 Gb/s Ethernet)", f->alpha_intra * 1e6,
        f->alpha_inter * 1e6, f->alpha_per_doubling * 1e6, f->gpu ? "NCCL init" : "communicator",
        f->comm_init_s, f->comm_init_per_rank * 1e3, f->check_per_byte * 1e9, p->n_sizes, p->timeout_s,
        EST_SLOW_FACTOR);
}

/* The pairs' coverage and what --rounds all and, where it is fewer, --rounds 3 cost (fault-free, no time
 * limit). */
static void ar_pairs_note(est_figures *f, const suite_est_cluster *c, int argc, char **argv,
                          const est_ar_plan *p, char *buf, size_t len)
{
    est_ar_plan all, three;
    char err[256];
    if (!p->rounds_asked ||
        est_allreduce_bw(f, argc, argv, c->nodes, c->ranks_per_node, 0, false, 1 << 30, &all, err,
                         sizeof err) ||
        est_allreduce_bw(f, argc, argv, c->nodes, c->ranks_per_node, 0, false, 3, &three, err, sizeof err))
        return;
    int n = snprintf(buf, len,
                     "pairs: %d of %d pairs tested (%d of %d rounds of %d pairs of %ss); --rounds all is %d "
                     "round%s, %.0f s of pairs",
                     p->pairs_tested, p->pairs_total, p->rounds_run, p->rounds_asked, p->members / 2,
                     p->by_rank ? "rank" : "node", all.rounds_asked, all.rounds_asked == 1 ? "" : "s",
                     all.pairs_s);
    if (all.rounds_asked > 3 && n > 0 && (size_t)n < len)
        snprintf(
            buf + n, len - (size_t)n,
            "; --rounds 3: %.0f s of pairs, every %s in every round with 3 different partners (%d pairs)",
            three.pairs_s, p->by_rank ? "rank" : "node", three.pairs_tested);
}

static int model_allreduce(est_figures *f, const suite_est_cluster *c, const json_t *args,
                           suite_est_step *out)
{
    int argc;
    char **argv = est_argv("allreduce_bw", args, &argc);
    if (!argv)
        return -1;
    int rc = 0;
    for (int k = 0; k < SUITE_EST_CASES && rc == 0; k++) {
        est_ar_plan plan, whole;
        bool slow = k == SUITE_EST_SLOW_NODE;
        f->slow_factor = slow ? EST_SLOW_FACTOR : 1;
        rc = est_allreduce_bw(f, argc, argv, c->nodes, c->ranks_per_node, c->program_timeout_s, slow, 0,
                              &plan, out->model, sizeof out->model);
        rc = rc ? rc
                : est_allreduce_bw(f, argc, argv, c->nodes, c->ranks_per_node, 0, slow, 0, &whole, out->model,
                                   sizeof out->model);
        if (rc)
            break;
        double launch = est_launch_s(f, c->nodes);
        out->s[k] = launch + plan.total_s;
        out->whole_s[k] = launch + whole.total_s;
        snprintf(out->cut[k], sizeof out->cut[k], "%s", plan.cut);
        if (!slow) {
            ar_model_line(f, c, &plan, out->model, sizeof out->model);
            ar_pairs_note(f, c, argc, argv, &plan, out->note, sizeof out->note);
        }
    }
    est_argv_free(argv, argc);
    return rc;
}

int suite_estimate_step(const char *program, const json_t *args, const suite_est_cluster *c,
                        suite_est_step *out)
{
    memset(out, 0, sizeof *out);
    out->limit_s = c->step_limit_s;
    est_figures f;
    est_figures_for(c, &f);
    if (strcmp(program, "allreduce_bw") == 0)
        return model_allreduce(&f, c, args, out);
    for (int k = 0; k < SUITE_EST_CASES; k++) {
        f.slow_factor = k == SUITE_EST_SLOW_NODE ? EST_SLOW_FACTOR : 1;
        simple_in in = {&f, c, args, k == SUITE_EST_SLOW_NODE, out->model, sizeof out->model};
        if (strcmp(program, "node_health") == 0)
            out->s[k] = model_fixed(&in, f.nh_s);
        else if (strcmp(program, "env_audit") == 0)
            out->s[k] = model_fixed(&in, f.ea_s);
        else if (strcmp(program, "gemm_flops") == 0)
            out->s[k] = model_gemm(&in);
        else if (strcmp(program, "mem_bw") == 0)
            out->s[k] = model_mem(&in);
        else if (strcmp(program, "ddp_smoke") == 0)
            out->s[k] = model_ddp(&in);
        else if (strcmp(program, "lm_train") == 0)
            out->s[k] = model_lm(&in);
        else {
            snprintf(out->model, sizeof out->model, "no model of %s", program);
            return -1;
        }
        out->whole_s[k] = out->s[k];
    }
    return 0;
}

/* ---- the cluster and the lines ---- */

/* The baseline's value of PROGRAM/NAME, 0 when it has none. */
static double baseline_value(const json_t *baseline, const char *program, const char *name)
{
    size_t i;
    json_t *m;
    json_array_foreach(sj_arr(baseline, "metrics"), i, m)
        if (strcmp(sj_str(m, "program", ""), program) == 0 && strcmp(sj_str(m, "name", ""), name) == 0)
            return sj_num(m, "value", 0);
    return 0;
}

int suite_estimate_cluster(const suite_profile_env *env, const json_t *baseline, int nodes_hint,
                           double step_limit_s, double program_timeout_s, suite_est_cluster *out)
{
    memset(out, 0, sizeof *out);
    out->step_limit_s = step_limit_s;
    out->program_timeout_s = program_timeout_s;
    int nodes = env->node_count > 0 ? env->node_count : nodes_hint, world = env->world_size;
    if (nodes <= 0)
        return -1;
    int rpn = env->expect_gpus > 0 ? env->expect_gpus : world > 0 ? (world + nodes - 1) / nodes : 1;
    if (world > 0 && world < nodes * rpn) /* -np below the slots: mpirun fills the first nodes' slots */
        nodes = (world + rpn - 1) / rpn, rpn = world < rpn ? world : rpn;
    out->nodes = nodes;
    out->ranks_per_node = rpn;
    out->gpu = baseline != NULL;
    if (baseline) {
        snprintf(out->sku, sizeof out->sku, "%s", sj_str(baseline, "model", "?"));
        out->node_busbw_GBps = baseline_value(baseline, "allreduce_bw", "busbw_at_max");
        out->gemm_bf16_TFLOPs = baseline_value(baseline, "gemm_flops", "tflops_bf16");
        out->mem_copy_GBps = baseline_value(baseline, "mem_bw", "GBps_device_copy");
    }
    return 0;
}

void suite_estimate_cluster_label(const suite_est_cluster *c, char *buf, size_t len)
{
    snprintf(buf, len, "%d node%s x %d rank%s, %s%s%s", c->nodes, c->nodes == 1 ? "" : "s", c->ranks_per_node,
             c->ranks_per_node == 1 ? "" : "s", c->gpu ? "GPU paths (" : "host paths (no SKU baseline)",
             c->gpu ? c->sku : "", c->gpu ? ")" : "");
}

void suite_estimate_print(FILE *f, const char *prefix, const suite_est_step *e)
{
    static const char *const cases[SUITE_EST_CASES] = {"fault-free", "with one slow node"};
    fprintf(f, "%sestimate: %.0f s fault-free, %.0f s with one slow node (model: %s)\n", prefix,
            e->s[SUITE_EST_FAULT_FREE], e->s[SUITE_EST_SLOW_NODE], e->model);
    for (int k = 0; k < SUITE_EST_CASES; k++)
        if (e->cut[k][0])
            fprintf(f, "%sestimate %s: cut: %s (the whole plan needs %.0f s, the step's limit is %.0f s)\n",
                    prefix, cases[k], e->cut[k], e->whole_s[k], e->limit_s);
    for (int k = 0; k < SUITE_EST_CASES; k++)
        if (e->limit_s > 0 && e->s[k] > e->limit_s)
            fprintf(f, "%sestimate %s: over the step limit of %.0f s: the suite would kill the step\n",
                    prefix, cases[k], e->limit_s);
    if (e->note[0])
        fprintf(f, "%sestimate: %s\n", prefix, e->note);
}
