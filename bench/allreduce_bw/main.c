/* allreduce_bw: NCCL (or MPI host) collective bandwidth sweep, nccl-tests compatible, with a check of every
 * element and, in --pattern pairs, the isolation of a slow node or link. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if GA_HAVE_CUDA
#include <nccl.h>
#endif

#include "ar_bench.h"
#include "ar_json.h"
#include "ar_budget.h"
#include "ar_run.h"
#include "ga_deadline.h"
#include "ar_transport.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gpu.h"
#include "ga_headline.h"
#include "ga_log.h"
#include "ga_engine.h"
#include "ga_report.h"
#include "ga_time.h"

static const ga_program_spec ar_command_line = {
    .name = "allreduce_bw",
    .summary =
        "NCCL collective bandwidth sweep (nccl-tests compatible) with an exact check of every element and "
        "bad-link isolation by pairs; MPI on host memory where no GPU is visible.",
    .epilog =
        "-T/--wait-timeout bounds communicator init and every wait (nccl-tests' -T); --timeout bounds the\n"
        "whole run, as in every program (none unless given: each wait has its bound). docs/options.md\n"
        "Examples:\n"
        "  mpirun -np 16 --map-by ppr:8:node allreduce_bw -b 8 -e 1G -f 2 --min-busbw 150\n"
        "  mpirun -np 64 --map-by ppr:8:node allreduce_bw --pattern pairs --rounds 3 -b 1M -e 256M -f 4\n"
        "  mpirun -np 4 allreduce_bw --backend mpi -b 8 -e 64M -f 2 -d all -o all",
    .options = ar_options,
    .n_options = AR_N_OPTIONS,
    .on_option = ar_on_option,
    .default_timeout_s = 0, /* no whole-run bound unless --timeout: -T already bounds every wait */
};

/* What the phases share: the plan the command line and the job make, and the run's own state. */
typedef struct {
    const char *program; /* the name run under (a nccl-tests name picks the collective) */
    const char *backend_name;
    uint64_t sizes[AR_MAX_SIZES];
    int n_sizes;
    combo combos[AR_NTYPES * AR_NOPS];
    int n_combos;
    split_plan split;
    run_state st;
    nt_state nt;
} ar_state;

/* nccl-tests names its programs after the collective (all_gather_perf): run under such a name (a link),
 * allreduce_bw runs that collective unless --collective says otherwise. */
static void program_collective(const char *program, ar_opts *o)
{
    char name[64];
    size_t len = strlen(program);
    if (o->set_coll || len <= 5 || len >= sizeof name || strcmp(program + len - 5, "_perf") != 0)
        return;
    memcpy(name, program, len - 5);
    name[len - 5] = 0;
    ar_coll_id id;
    if (ar_coll_parse(name, &id) == 0)
        o->coll = id;
}

static ar_nt_config nt_config(const ar_opts *o, const char *program, ga_backend kind)
{
    ar_nt_config c = {.program = program,
                      .min_bytes = o->min_bytes,
                      .max_bytes = o->max_bytes,
                      .step_bytes = o->step_bytes,
                      .step_factor = o->step_factor,
                      .warmup = o->warmup,
                      .iters = o->iters,
                      .agg_iters = o->agg_iters,
                      .check = o->check,
                      .blocking = o->blocking,
                      .per_iter_skip = o->per_iter_skip,
                      .graph = o->setup.graph_launches,
                      .unalign = o->setup.unalign,
                      .per_iter = o->per_iter,
                      .parallel_init = o->parallel_init,
                      .cputime = o->cputime,
                      .timestamps = o->timestamps,
                      .show_slowest = o->show_slowest};
#if GA_HAVE_CUDA
    if (kind == GA_BACKEND_GPU) {
        c.nccl_headers = NCCL_VERSION_CODE;
        if (ncclGetVersion(&c.nccl_library) != ncclSuccess)
            c.nccl_library = 0;
    }
#endif
    (void)kind;
    return c;
}

/* Measured on an H200 with NCCL 2.28.3 (docs/measured-on-gpu.md); in NCCL's source to 2.30 at least. */
#define FP8_AVG_ONE_RANK                                                                                     \
    "NCCL's one-rank communicator has no fp8 average (ncclInvalidArgument: its one-rank kernel table, "      \
    "src/device/onerank.cu, compiles the fp8 cases out of host code)"

/* Which combinations to run: every type and op asked for that the backend supports. Returns how many, or -1
 * after printing why (usage error). */
static int plan_combos(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, int min_cc_major, combo *out,
                       unsigned *left_out)
{
    int n = 0;
    *left_out = 0;
    const ar_coll *cl = ar_coll_get(o->coll);
    for (int t = 0; t < AR_NTYPES; t++) {
        if (!(o->type_mask & (1u << t)))
            continue;
        const char *why = NULL;
        if (ar_dtype_get((ar_dtype)t)->fp8 && kind == GA_BACKEND_HOST)
            why = ar_host_unsupported((ar_dtype)t);
        else if (ar_dtype_get((ar_dtype)t)->fp8 && min_cc_major < 9)
            why = "fp8 types need GPUs of compute capability 9.0 or newer on every rank";
        if (why) {
            if (!o->all_types) {
                ga_error_once(ar_command_line.name, "--datatype %s: %s", ar_dtype_get((ar_dtype)t)->name,
                              why);
                return -1;
            }
            ga_debug("COMM", "skipping %s: %s", ar_dtype_get((ar_dtype)t)->name, why);
            continue;
        }
        /* nccl-tests' order of -o all, so that the lines come in its order */
        static const ar_op op_order[AR_NOPS] = {AR_SUM, AR_PROD, AR_MAX, AR_MIN, AR_AVG};
        for (int k = 0; k < AR_NOPS; k++) {
            ar_op op = op_order[k];
            if (!(o->op_mask & (1u << op)))
                continue;
            if (cl->reduces && op == AR_AVG && ar_dtype_get((ar_dtype)t)->fp8 && kind == GA_BACKEND_GPU &&
                ctx->world_size == 1) {
                if (!o->all_ops) {
                    ga_error_once(ar_command_line.name, "--datatype %s --op avg on one rank: %s",
                                  ar_dtype_get((ar_dtype)t)->name, FP8_AVG_ONE_RANK);
                    return -1;
                }
                ga_log("COMM", "not run: %s avg: %s", ar_dtype_get((ar_dtype)t)->name, FP8_AVG_ONE_RANK);
                *left_out |= 1u << t;
                continue;
            }
            out[n++] = (combo){(ar_dtype)t, op};
            if (!cl->reduces)
                break; /* data movement: the op does not apply */
        }
    }
    return n;
}

/* Rank 0: the report from what the run concluded (ar_report.h) and every rank's record; the verdict is the
 * findings'. */
static int report_and_verdict(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    ar_state *a = run->state;
    run_state *st = &a->st;
    const ar_summary_facts facts = {.o = run->opts,
                                    .backend = a->backend_name,
                                    .type = a->combos[0].type,
                                    .op = a->combos[0].op,
                                    .world_size = ctx->world_size,
                                    .node_count = ctx->node_count};
    ar_summary_fill(run->report->json, &facts, &st->out);
    ga_report_add_nodes(run->report->json, st->node_records, ctx->world_size, sizeof(ar_record),
                        ar_record_json, NULL);
    ga_findings_log(st->findings, "COMM");
    return GA_GO_ON;
}

/* Rank 0: one phase's time (and its share of the budget, 0 without one) in the log and the report. */
static void phase_done(run_state *st, const char *name, double t0, double budget_s)
{
    if (!st->out.phases)
        return;
    double took = ga_now() - t0;
    json_array_append_new(
        st->out.phases, json_pack("{s:s, s:f, s:f}", "pattern", name, "seconds", took, "budget_s", budget_s));
    if (budget_s > 0)
        ga_log("COMM", "%s: %.1f s (its share of the time: %.1f s)", name, took, budget_s);
    else
        ga_log("COMM", "%s: %.1f s", name, took);
}

/* The patterns in the order asked. Time as a budget: they share what --timeout leaves, less a reserve for the
 * report; each gets its share of what is left when it starts (ar_budget.h). Without --timeout, -T alone
 * bounds each wait. Before the world sweep, when pairs follow, a screen round looks for a pair far below the
 * others: isolation comes early when the fabric is slow. Collective. */
static void run_patterns(const ga_ctx *ctx, const ar_opts *o, ga_backend kind, const combo *combos,
                         int n_combos, const uint64_t *sizes, int n_sizes, const split_plan *split,
                         nt_state *nt, run_state *st, json_t *report)
{
    double run_end = ga_deadline_run_end();
    double reserve = run_end > 0 ? ar_budget_reserve(run_end - ga_now()) : 0;
    if (ctx->world_rank == 0)
        st->out.phases = json_array();
    ar_bench_slow_hook_calibrate(MPI_COMM_WORLD);
    bool pairs_later = false;
    for (int i = 0; i < o->n_patterns; i++) {
        double left = run_end > 0 ? run_end - reserve - ga_now() : 0;
        double budget = run_end > 0 && left > 0 ? ar_budget_phase(o->patterns, o->n_patterns, i, left) : 0;
        double t0 = ga_now();
        st->phase_deadline = run_end > 0 ? t0 + budget : 0;
        st->out.ran[o->patterns[i]] = true;
        for (int k = i + 1; k < o->n_patterns; k++)
            pairs_later = pairs_later || o->patterns[k] == AR_PATTERN_PAIRS;
        if (o->patterns[i] == AR_PATTERN_WORLD && pairs_later && split->n_groups == 1) {
            st->fabric_slow = ar_pairs_screen(ctx, o, kind, combos[0], sizes, n_sizes, st);
            phase_done(st, "screen", t0, 0);
        }
        if (o->patterns[i] == AR_PATTERN_PAIRS)
            ar_run_pairs(ctx, o, kind, combos[0], sizes, n_sizes, st, report);
        else if (o->patterns[i] == AR_PATTERN_RAILS)
            ar_run_rails(ctx, o, kind, combos[0], sizes, n_sizes, st, report);
        else if (o->patterns[i] == AR_PATTERN_NODE)
            ar_run_node(ctx, o, kind, combos[0], sizes, n_sizes, st, report);
        else
            ar_run_world(ctx, o, kind, combos, n_combos, sizes, n_sizes, split, nt, st);
        phase_done(st, ar_pattern_name(o->patterns[i]), t0, budget);
    }
}

/* Whether the patterns asked for can run on this job (the split, the pairs, the communicators' sizes for the
 * collective and its root, the world-only flags); false with err when not. */
static bool patterns_fit(const ga_ctx *ctx, const ar_opts *o, const split_plan *split, char *err,
                         size_t errlen)
{
    bool world_only = o->n_patterns == 1 && o->patterns[0] == AR_PATTERN_WORLD;
    if (!world_only && split->n_groups > 1) {
        snprintf(err, errlen,
                 "NCCL_TESTS_SPLIT_MASK applies to the world sweep alone, not to --pattern node or pairs");
        return false;
    }
    if (o->pairs && ctx->node_count < 2 && ctx->world_size < 2) {
        snprintf(err, errlen, "--pattern pairs needs at least 2 nodes, or 2 ranks on one node");
        return false;
    }
    for (int i = 0; i < o->n_patterns; i++)
        if (o->patterns[i] == AR_PATTERN_RAILS && ctx->node_count < 2) {
            snprintf(err, errlen,
                     "--pattern rails needs at least 2 nodes (GPU i of one node with GPU i of another)");
            return false;
        }
    /* every communicator a pattern runs on must suit the collective */
    for (int i = 0; i < o->n_patterns; i++) {
        int group = o->patterns[i] == AR_PATTERN_RAILS   ? 2
                    : o->patterns[i] == AR_PATTERN_PAIRS ? (ctx->node_count >= 2 ? 2 * ctx->local_size : 2)
                    : o->patterns[i] == AR_PATTERN_NODE  ? ctx->local_size
                                                         : split->size;
        if (ar_coll_get(o->coll)->rooted && o->root >= group) {
            snprintf(err, errlen, "--root %d: the communicator has %d ranks", o->root, group);
            return false;
        }
        if (ar_coll_unsupported(o->coll, group)) {
            snprintf(err, errlen, "--collective %s: %s (%d)", ar_coll_get(o->coll)->name,
                     ar_coll_unsupported(o->coll, group), group);
            return false;
        }
    }
    if (!world_only && (o->json_path[0] || o->per_iter || o->cycles != 1)) {
        snprintf(err, errlen, "-J, -I and -N apply to --pattern world alone, not to node or pairs");
        return false;
    }
    return true;
}

/* Collective: each rank's GPU (nccl-tests' NCCL_TESTS_DEVICE: every rank of a node on that device, one rank
 * per node); the lowest compute capability major of the job, 0 on the host path. */
static int select_gpus(const ga_ctx *ctx, ga_backend kind)
{
    int cc_major = 0;
#if GA_HAVE_CUDA
    if (kind == GA_BACKEND_GPU) {
        ga_gpu_info gpu;
        ga_deadline_arm("GPU selection");
        const char *dev = getenv("NCCL_TESTS_DEVICE");
        ga_gpu_select_device(ctx, dev && *dev ? atoi(dev) : -1, &gpu);
        GA_MPI_CHECK(MPI_Allreduce(&gpu.cc_major, &cc_major, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        ga_deadline_disarm();
    }
#else
    (void)ctx;
    (void)kind;
#endif
    return cc_major;
}

/* Collective: -J's file taken at the start, as nccl-tests does (rank 0); unlike nccl-tests, a file that
 * cannot be created stops the run before it measures (issue 26). Returns 0 or that exit code, agreed. */
static int reserve_json(const ga_ctx *ctx, const ar_opts *o, nt_state *nt, int argc0, char **argv0)
{
    if (!o->json_path[0])
        return 0;
    char jerr[256] = "";
    if (ctx->world_rank == 0 &&
        ar_nt_json_reserve(o->json_path, nt->json_path, sizeof nt->json_path, jerr, sizeof jerr) == 0) {
        printf("# Writing JSON output to %s\n", nt->json_path);
        nt->json = ar_nt_json_new(&nt->cfg, argc0, argv0, environ);
    }
    return GA_AGREE_FAILURE(GA_EXIT_USAGE, jerr[0] ? jerr : NULL);
}

/* nccl-tests' flags given that mean nothing here, one warning each (after ar_opts_finish: which mean
 * nothing depends on the backend). */
static void warn_ignored(const ar_opts *o)
{
    for (int i = 0; i < AR_N_IGNORED_MAX; i++)
        if (o->ignored & (1u << i)) {
            char line[256];
            ar_ignored_warning(o, i, line, sizeof line);
            ga_error_once(ar_command_line.name, "%s", line);
        }
}

/* What the run will do: on --verbose only, as by default stdout is nccl-tests' output and the report's lines
 * after it. */
static void log_plan(const ga_ctx *ctx, const ar_opts *o, const char *backend_name, const uint64_t *sizes,
                     int n_sizes, const combo *combos, int n_combos, bool world_only)
{
    if (!world_only && n_combos > 1)
        ga_log("COMM", "--pattern node and pairs run the first combination only (%s %s)",
               ar_dtype_get(combos[0].type)->name, ar_op_name(combos[0].op));
    ga_debug("COMM",
             "allreduce_bw: %s on %d rank%s, %d node%s (%s), backend %s; %d sizes %llu..%llu B, %d "
             "combination%s, -n %d -w %d -c %d, -T %g s",
             ar_coll_get(o->coll)->name, ctx->world_size, ctx->world_size == 1 ? "" : "s", ctx->node_count,
             ctx->node_count == 1 ? "" : "s", ctx->launcher.detail, backend_name, n_sizes,
             (unsigned long long)sizes[0], (unsigned long long)sizes[n_sizes - 1], n_combos,
             n_combos == 1 ? "" : "s", o->iters, o->warmup, o->check, o->timeout_s);
}

/* The sizes, the world's split and the combinations the command line and the job allow. Returns GA_GO_ON,
 * or a usage error's exit code (after one line). */
static int plan_run(ga_run *run, int cc_major)
{
    const ga_ctx *ctx = &run->ctx;
    ar_opts *o = run->opts;
    ar_state *a = run->state;
    char err[256];
    unsigned fp8_avg_left_out = 0; /* types whose avg -o all left out (FP8_AVG_ONE_RANK) */
    a->n_sizes =
        ar_opts_finish(o, run->backend == GA_BACKEND_GPU, run->common.quick, a->sizes, err, sizeof err);
    if (a->n_sizes >= 0)
        warn_ignored(o);
    ar_backend_defaults = o->setup;
    if (ar_split_world(ctx, &a->split, err, sizeof err) != 0)
        a->n_sizes = -1;
    if (a->n_sizes > 0 && !patterns_fit(ctx, o, &a->split, err, sizeof err))
        a->n_sizes = -1;
    if (a->n_sizes < 0)
        ga_error_once(ar_command_line.name, "%s", err);
    else
        a->n_combos = plan_combos(ctx, o, run->backend, cc_major, a->combos, &fp8_avg_left_out);
    if (a->n_sizes < 0 || a->n_combos <= 0) {
        ar_split_free(&a->split);
        return GA_EXIT_USAGE;
    }
    for (int t = 0; t < AR_NTYPES && ctx->world_rank == 0; t++)
        if (fp8_avg_left_out & (1u << t))
            ar_run_not_covered(&a->st, "%s avg not run: %s", ar_dtype_get((ar_dtype)t)->name,
                               FP8_AVG_ONE_RANK);
    bool world_only = o->n_patterns == 1 && o->patterns[0] == AR_PATTERN_WORLD;
    log_plan(ctx, o, a->backend_name, a->sizes, a->n_sizes, a->combos, a->n_combos, world_only);
    return GA_GO_ON;
}

/* Collective: the collective run under a nccl-tests name, the backend and the GPUs, the plan, -J's file. */
static int prepare(ga_run *run)
{
    const ga_ctx *ctx = &run->ctx;
    ar_opts *o = run->opts;
    ar_state *a = run->state;
    char **argv0 = run->argv0;
    a->program = strrchr(argv0[0], '/') ? strrchr(argv0[0], '/') + 1 : argv0[0];
    program_collective(a->program, o);

    ga_deadline_arm("choosing the backend");
    run->backend = ga_backend_resolve(ctx, o->backend);
    ga_deadline_disarm();
    int cc_major = select_gpus(ctx, run->backend);
    a->backend_name = run->backend == GA_BACKEND_GPU ? "nccl" : "mpi";
    int rc = plan_run(run, cc_major);
    if (rc != GA_GO_ON)
        return rc;

    const char *min_bw = getenv("NCCL_TESTS_MIN_BW");
    a->st.min_bw = min_bw && *min_bw ? atof(min_bw) : -1;
    a->nt.cfg = nt_config(o, a->program, run->backend);
    int jbad = reserve_json(ctx, o, &a->nt, run->argc0, argv0);
    if (jbad) {
        ar_split_free(&a->split);
        return jbad;
    }
    return GA_GO_ON;
}

/* Collective: the patterns, rank 0 adding their parts and findings to the report as they go, then the
 * transport the collectives took (issue 25). */
static ga_measured measure(ga_run *run)
{
    ar_state *a = run->state;
    json_t *report = run->report ? run->report->json : NULL;
    if (run->report) {
        a->st.out.combos = json_array();
        a->st.findings = &run->report->findings;
    }
    run_patterns(&run->ctx, run->opts, run->backend, a->combos, a->n_combos, a->sizes, a->n_sizes, &a->split,
                 &a->nt, &a->st, report);
    json_decref(a->nt.json);
    ar_transport_report(&run->ctx, run->opts, run->backend == GA_BACKEND_GPU, report, a->st.findings);
    return GA_MEASURED;
}

static void cleanup(ga_run *run)
{
    ar_state *a = run->state;
    free(a->st.node_records);
    ar_split_free(&a->split);
}

static void opts_init(void *opts)
{
    ar_opts_defaults(opts);
}

/* -T/--wait-timeout: every wait from the first collective on (the engine sets it) */
static double wait_bound(const ga_run *run)
{
    return ((const ar_opts *)run->opts)->timeout_s;
}

static const ga_program_def allreduce_bw_program = {
    .cli = &ar_command_line,
    .tag = "COMM",
    .opts_size = sizeof(ar_opts),
    .opts_init = opts_init,
    .state_size = sizeof(ar_state),
    .wait_bound = wait_bound,
    .prepare = prepare,
    .report_streams = true, /* the records are the run's: st.node_records */
    .measure = measure,
    .report = report_and_verdict,
    .cleanup = cleanup,
};

int main(int argc, char **argv)
{
    return ga_program_run(argc, argv, &allreduce_bw_program);
}
