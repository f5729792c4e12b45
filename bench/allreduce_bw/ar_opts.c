#include "ar_opts.h"

#include <stdio.h>
#include <string.h>

#include "ar_record.h"
#include "ar_sweep.h"
#include "ga_ib_list.h"
#include "ga_parse.h"

enum {
    OPT_COLLECTIVE = 256,
    OPT_BACKEND,
    OPT_MIN_BUSBW,
    OPT_PATTERN,
    OPT_ROUNDS,
    OPT_TOLERANCE,
    OPT_SHOW_SLOWEST,
    OPT_REMEASURE,
    OPT_MIN_NODE_BUSBW,
    OPT_EXPECT_NET,
    OPT_ALLOW_SOCKETS,
    OPT_IB_HCAS
};

/* Flags nccl-tests has that cannot apply to the backend that runs: accepted so that nccl-tests command lines
 * run, and ignored, with a warning, when given anything but their default. The GPU path honours -y -G -R -x
 * -M (ar_opts_finish clears those bits there); -D/-V select nccl-tests' own device-API kernels (written
 * against NCCL's device headers for each collective), which gpuaccept does not carry. */
const ar_ignored_flag ar_ignored_flags[AR_N_IGNORED_MAX] = {
    {'y', "the host path (--backend mpi) has no CUDA stream"},
    {'G', "the host path (--backend mpi) has no CUDA graphs"},
    {'R', "the host path (--backend mpi) registers no buffers with NCCL"},
    {'x', "the host path (--backend mpi) has no NCCL CTA policy"},
    {'D', "nccl-tests' device-API kernels are not part of gpuaccept (NCCL's host API is used)"},
    {'V', "nccl-tests' device-API kernels are not part of gpuaccept (NCCL's host API is used)"},
    {'M', "the host path (--backend mpi) uses no GPU memory"},
};

const ga_option ar_options[] = {
    {"minbytes", 'b', true, "SIZE", "smallest size, K/M/G suffixes (default 8; GPU and host alike)",
     GA_OPT_SIZE, "bytes"},
    {"maxbytes", 'e', true, "SIZE", "largest size (default 1G on GPU, 16M on the host path, 1M with --quick)",
     GA_OPT_SIZE, "bytes"},
    {"stepfactor", 'f', true, "N", "multiply the size by N each step (default 2)", GA_OPT_INT},
    {"stepbytes", 'i', true, "SIZE", "add SIZE each step (used when --stepfactor is 1)", GA_OPT_SIZE,
     "bytes"},
    {"iters", 'n', true, "N", "timed iterations per size and placement (default 20, 5 with --quick)",
     GA_OPT_INT},
    {"warmup_iters", 'w', true, "N", "warm-up iterations per size and placement (default 5, 1 with --quick)",
     GA_OPT_INT},
    {"check", 'c', true, "N", "checked runs per size and placement, 0 to skip the check (default 1)",
     GA_OPT_INT, .at = GA_AT(ar_opts, check), .min = 0, .max = 100},
    {"datatype", 'd', true, "TYPE",
     "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2, or all (default float)",
     GA_OPT_LIST},
    {"op", 'o', true, "OP", "sum prod min max avg, or all (default sum)", GA_OPT_LIST},
    {"root", 'r', true, "RANK", "root of broadcast and reduce (default 0)", GA_OPT_INT,
     .at = GA_AT(ar_opts, root), .min = 0, .max = 1 << 24},
    {"average", 'a', true, "0-3", "time reported: 0 rank 0, 1 mean, 2 min, 3 max across ranks (default 1)",
     GA_OPT_ENUM, .choices = "0|1|2|3"},
    {"wait-timeout", 'T', true, "SEC", "bound of communicator init and of every wait, 0: none (default 300)",
     GA_OPT_REAL, "s", .at = GA_AT(ar_opts, timeout_s), .min = 0, .max = 7 * 24 * 3600},
    {"collective", OPT_COLLECTIVE, true, "NAME",
     "allreduce (default), allgather, reduce_scatter, broadcast, reduce, alltoall, sendrecv", GA_OPT_ENUM},
    {"backend", OPT_BACKEND, true, "auto|gpu|host",
     "where to run (default auto: NCCL where GPUs are visible); gpu is NCCL, host is MPI on host memory "
     "(nccl "
     "and mpi, their first names, still work)",
     GA_OPT_ENUM, .choices = "auto|gpu|host"},
    {"min-busbw", OPT_MIN_BUSBW, true, "GB/s", "fail when the busbw at the largest size is below this",
     GA_OPT_REAL, "GB/s", .at = GA_AT(ar_opts, min_busbw), .min = 0, .max = 1e6},
    {"pattern", OPT_PATTERN, true, "LIST",
     "comma list run in turn: world (default), node (every node's own sweep at once), pairs (isolate a slow "
     "node or link), rails (GPU i of pairs of nodes: a slow rail, its GPU and NIC)",
     GA_OPT_LIST},
    {"rounds", OPT_ROUNDS, true, "N",
     "pairs: rounds of different pairings (default 3), or all: every pair once (members - 1 rounds)",
     GA_OPT_INT},
    {"tolerance", OPT_TOLERANCE, true, "PCT",
     "pairs, node: flag a pair or node more than PCT percent below the median (default 10)", GA_OPT_PCT, "%",
     .at = GA_AT(ar_opts, tolerance), .min = 0, .max = 99, .flags = GA_OPT_FRACTION},
    {"remeasure", OPT_REMEASURE, true, "N",
     "pairs, node, world under --min-busbw: measure a figure below its bound again up to N times, keep the "
     "best (default 2)",
     GA_OPT_INT, .at = GA_AT(ar_opts, remeasure), .min = 0, .max = 100},
    {"min-node-busbw", OPT_MIN_NODE_BUSBW, true, "GB/s",
     "node: fail a node whose intra-node busbw at the largest size is below this", GA_OPT_REAL, "GB/s",
     .at = GA_AT(ar_opts, min_node_busbw), .min = 0, .max = 1e6},
    {"nthreads", 't', true, "1", "nccl-tests' threads per process: 1 (one GPU per rank)", GA_OPT_INT},
    {"ngpus", 'g', true, "1", "nccl-tests' GPUs per thread: 1 (one GPU per rank)", GA_OPT_INT},
    {"agg_iters", 'm', true, "N", "operations per timed iteration; the time is per operation (default 1)",
     GA_OPT_INT, .at = GA_AT(ar_opts, agg_iters), .min = 1, .max = 1000000},
    {"run_cycles", 'N', true, "N", "run the sweep N times, printing each, 0 forever (default 1)", GA_OPT_INT,
     .at = GA_AT(ar_opts, cycles), .min = 0, .max = 1000000},
    {"parallel_init", 'p', true, "0/1", "accepted (one GPU per rank: nothing to initialise in parallel)",
     GA_OPT_INT},
    {"blocking", 'z', true, "0-3",
     "1 wait and barrier after each operation, 2 wait only, 3 wait and barrier after each iteration, the "
     "barrier not timed (default 0)",
     GA_OPT_ENUM, .choices = "0|1|2|3"},
    {"per_iter_timing", 'I', true, "0/1", "time every iteration: i_min i_max i_p99 i_cv% columns, -J rows",
     GA_OPT_INT},
    {"per_iter_skip", 'K', true, "N", "leave the first N iterations out of the -I summary (default 0)",
     GA_OPT_INT, .at = GA_AT(ar_opts, per_iter_skip), .min = 0, .max = 1000000},
    {"report_cputime", 'C', true, "0/1", "label the time column cputime (the host clock, as measured)",
     GA_OPT_INT},
    {"report_timestamps", 'S', true, "0/1", "a timestamp column after in-place", GA_OPT_INT},
    {"output_file", 'J', true, "FILE", "also write nccl-tests' JSON (version 3) to FILE", GA_OPT_PATH},
    {"stream_null", 'y', true, "0/1", "1: NCCL on the default stream (GPU path)", GA_OPT_INT},
    {"cudagraph", 'G', true, "N",
     "capture the timed iterations in a CUDA graph and launch it N times (GPU path; not with -I or -z)",
     GA_OPT_INT},
    {"local_register", 'R', true, "0-2",
     "register the buffers with NCCL: 1 ncclCommRegister, 2 symmetric windows (GPU path)", GA_OPT_ENUM,
     .choices = "0|1|2"},
    {"cta_policy", 'x', true, "0-2", "NCCL's CTA policy: 0 default, 1 efficiency, 2 zero (GPU path)",
     GA_OPT_ENUM, .choices = "0|1|2"},
    {"device_implementation", 'D', true, "N", "accepted, ignored with a warning (nccl-tests' device kernels)",
     GA_OPT_INT},
    {"device_cta_count", 'V', true, "N", "accepted, ignored with a warning (nccl-tests' device kernels)",
     GA_OPT_INT},
    {"memory", 'M', true, "0/1", "1: print the GPU memory use after the results (GPU path)", GA_OPT_INT},
    {"unalign", 'u', true, "N", "start the buffers N elements past their allocation (default 0)", GA_OPT_INT,
     .at = GA_AT(ar_opts, setup.unalign), .min = 0, .max = 1 << 20},
    {"show-slowest", OPT_SHOW_SLOWEST, false, NULL,
     "add the slowest rank and its time after nccl-tests' columns", GA_OPT_FLAG,
     .at = GA_AT(ar_opts, show_slowest)},
    {"expect-net", OPT_EXPECT_NET, true, "NET",
     "between nodes: any (default: recorded only), ib (InfiniBand, RoCE or an RDMA plugin: sockets fail), "
     "ib-gdr (ib, with GPUDirect RDMA)",
     GA_OPT_ENUM, .choices = "any|ib|ib-gdr"},
    {"allow-sockets", OPT_ALLOW_SOCKETS, false, NULL,
     "sockets between nodes are intended (NCCL_IB_DISABLE, NCCL_NET=Socket): not a failure, and said so",
     GA_OPT_FLAG, .at = GA_AT(ar_opts, allow_sockets)},
    {"ib-hcas", OPT_IB_HCAS, true, "LIST",
     "the compute ports, in NCCL_IB_HCA's syntax (=mlx5_0:1,mlx5_3:1; ^ excludes): a device NCCL used "
     "between nodes that the list does not keep fails (COMM_NET_NOT_COMPUTE)",
     GA_OPT_LIST},
};
_Static_assert(sizeof ar_options / sizeof ar_options[0] == AR_N_OPTIONS, "AR_N_OPTIONS");

void ar_opts_defaults(ar_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_bytes = 8;
    o->step_factor = 2;
    o->step_bytes = 1 << 20;
    o->check = 1;
    o->type_mask = 1u << AR_FLOAT;
    o->op_mask = 1u << AR_SUM;
    o->coll = AR_ALLREDUCE;
    o->average = 1;
    o->timeout_s = 300;
    o->backend = GA_BACKEND_AUTO;
    o->tolerance = 0.1;
    o->remeasure = 2;
    o->n_patterns = 1;
    o->patterns[0] = AR_PATTERN_WORLD;
    o->agg_iters = 1;
    o->cycles = 1;
    o->setup.cta_policy = -1;
}

const char *ar_pattern_name(ar_pattern_id p)
{
    static const char *const names[AR_PATTERNS] = {"world", "node", "pairs", "rails"};
    return p >= 0 && p < AR_PATTERNS ? names[p] : "?";
}

json_t *ar_conditions_json(const ar_opts *o, const char *backend, const char *dtype, const char *op)
{
    json_t *patterns = json_array();
    for (int i = 0; i < o->n_patterns; i++)
        json_array_append_new(patterns, json_string(ar_pattern_name(o->patterns[i])));
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:i, s:i, s:o}", "backend", backend,
                     "collective", ar_coll_get(o->coll)->name, "datatype", dtype, "op", op, "min_bytes",
                     (json_int_t)o->min_bytes, "max_bytes", (json_int_t)o->max_bytes, "step_bytes",
                     (json_int_t)o->step_bytes, "step_factor", (json_int_t)o->step_factor, "iters", o->iters,
                     "agg_iters", o->agg_iters, "patterns", patterns);
}

/* --pattern LIST: names separated by commas, each once. */
static int parse_patterns(const char *arg, ar_opts *o, char *err, size_t errlen)
{
    int n = 0;
    const char *s = arg;
    for (;;) {
        size_t len = strcspn(s, ",");
        int found = -1;
        for (int p = 0; p < AR_PATTERNS; p++)
            if (strlen(ar_pattern_name((ar_pattern_id)p)) == len &&
                strncmp(s, ar_pattern_name((ar_pattern_id)p), len) == 0)
                found = p;
        if (found < 0) {
            snprintf(err, errlen,
                     "unknown pattern '%.*s' (world, node, pairs, rails, or a comma list of them)", (int)len,
                     s);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (o->patterns[i] == (ar_pattern_id)found) {
                snprintf(err, errlen, "pattern '%s' given twice", ar_pattern_name((ar_pattern_id)found));
                return -1;
            }
        o->patterns[n++] = (ar_pattern_id)found;
        if (!s[len])
            break;
        s += len + 1;
    }
    o->n_patterns = n;
    o->pairs = false;
    for (int i = 0; i < n; i++)
        o->pairs = o->pairs || o->patterns[i] == AR_PATTERN_PAIRS;
    return 0;
}

void ar_ignored_warning(const ar_opts *o, int i, char *buf, size_t len)
{
    snprintf(buf, len, "warning: -%c %s ignored: %s", ar_ignored_flags[i].key, o->ignored_value[i],
             ar_ignored_flags[i].what);
}

/* nccl-tests' 0/1 switches. */
static int parse_bool(const char *arg, bool *out, char *err, size_t errlen)
{
    long v;
    if (ga_parse_long(arg, 0, 1, &v, err, errlen))
        return -1;
    *out = v != 0;
    return 0;
}

static int parse_int(const char *arg, long min, long max, int *out, char *err, size_t errlen)
{
    long v;
    if (ga_parse_long(arg, min, max, &v, err, errlen))
        return -1;
    *out = (int)v;
    return 0;
}

/* A group's answer for an option that is not its own. */
#define NOT_MINE 1

/* nccl-tests' sweep and timing options with side effects or their own parse (-b -e -i -f -n -w -a); -c -r -T
 * -m -N -K -u are stored by the typed parse from their table rows. */
static int on_sweep_option(ar_opts *o, int key, const char *arg, char *err, size_t errlen)
{
    long v;
    switch (key) {
    case 'b':
        o->set_min = true;
        return ga_parse_size(arg, &o->min_bytes, err, errlen);
    case 'e':
        o->set_max = true;
        return ga_parse_size(arg, &o->max_bytes, err, errlen);
    case 'i':
        o->set_step = true;
        return ga_parse_size(arg, &o->step_bytes, err, errlen);
    case 'f':
        if (ga_parse_long(arg, 1, 1024, &v, err, errlen))
            return -1;
        o->set_factor = true;
        o->step_factor = (uint64_t)v;
        return 0;
    case 'n':
        o->set_iters = true;
        return parse_int(arg, 1, 1000000, &o->iters, err, errlen);
    case 'w':
        o->set_warmup = true;
        return parse_int(arg, 0, 1000000, &o->warmup, err, errlen);
    case 'a':
        return parse_int(arg, 0, 3, &o->average, err, errlen);
    default:
        return NOT_MINE;
    }
}

/* What is reduced: -d, -o and --collective. */
static int on_what_option(ar_opts *o, int key, const char *arg, char *err, size_t errlen)
{
    switch (key) {
    case 'd': {
        ar_dtype t;
        o->all_types = strcmp(arg, "all") == 0;
        if (o->all_types) {
            o->type_mask = (1u << AR_NTYPES) - 1;
            return 0;
        }
        if (ar_dtype_parse(arg, &t) != 0) {
            snprintf(err, errlen, "unknown datatype '%s'", arg);
            return -1;
        }
        o->type_mask = 1u << t;
        return 0;
    }
    case 'o': {
        ar_op op;
        o->all_ops = strcmp(arg, "all") == 0;
        if (o->all_ops) {
            o->op_mask = (1u << AR_NOPS) - 1;
            return 0;
        }
        if (ar_op_parse(arg, &op) != 0) {
            snprintf(err, errlen, "unknown op '%s' (sum, prod, min, max, avg, all)", arg);
            return -1;
        }
        o->op_mask = 1u << op;
        return 0;
    }
    case OPT_COLLECTIVE:
        o->set_coll = true;
        if (ar_coll_parse(arg, &o->coll) != 0) {
            snprintf(err, errlen, "unknown collective '%s'", arg);
            return -1;
        }
        return 0;
    default:
        return NOT_MINE;
    }
}

/* --ib-hcas LIST: NCCL_IB_HCA's syntax (common/core/ga_ib_list.h), checked as node_health checks its own. */
static int parse_ib_hcas(const char *arg, ar_opts *o, char *err, size_t errlen)
{
    char why[160];
    if (strlen(arg) >= sizeof o->ib_hcas) {
        snprintf(err, errlen, "--ib-hcas: a list of fewer than %zu bytes", sizeof o->ib_hcas);
        return -1;
    }
    if (ga_ib_list_check(arg, why, sizeof why) != 0) {
        snprintf(err, errlen, "--ib-hcas '%s': %s", arg, why);
        return -1;
    }
    snprintf(o->ib_hcas, sizeof o->ib_hcas, "%s", arg);
    return 0;
}

/* gpuaccept's own options: patterns, the judgement and the transport expected. */
static int on_gpuaccept_option(ar_opts *o, int key, const char *arg, char *err, size_t errlen)
{
    switch (key) {
    case OPT_BACKEND:
        return ga_parse_backend(arg, &o->backend, err, errlen);
    case OPT_PATTERN:
        return parse_patterns(arg, o, err, errlen);
    case OPT_ROUNDS:
        if (strcmp(arg, "all") == 0) {
            o->rounds = AR_ROUNDS_ALL;
            return 0;
        }
        return parse_int(arg, 1, 1024, &o->rounds, err, errlen);
    case OPT_EXPECT_NET:
        return ga_parse_expect_net(arg, &o->expect_net, err, errlen);
    case OPT_IB_HCAS:
        return parse_ib_hcas(arg, o, err, errlen);
    default:
        return NOT_MINE;
    }
}

/* nccl-tests' other flags: -t/-g (one GPU per rank), the timing modes, -J, and those accepted and recorded
 * without effect (ar_ignored_flags). */
static int on_compat_option(ar_opts *o, int key, const char *arg, char *err, size_t errlen)
{
    long v;
    switch (key) {
    case 't':
    case 'g':
        if (ga_parse_long(arg, 0, 1 << 20, &v, err, errlen))
            return -1;
        if (v != 1) {
            snprintf(err, errlen,
                     "-%c %ld: gpuaccept runs one GPU per rank (start one rank per GPU with mpirun/srun); "
                     "only -%c 1 is accepted",
                     key, v, key);
            return -1;
        }
        return 0;
    case 'p':
        return parse_bool(arg, &o->parallel_init, err, errlen);
    case 'z':
        return parse_int(arg, 0, 3, &o->blocking, err, errlen);
    case 'I':
        return parse_bool(arg, &o->per_iter, err, errlen);
    case 'C':
        return parse_bool(arg, &o->cputime, err, errlen);
    case 'S':
        return parse_bool(arg, &o->timestamps, err, errlen);
    case 'J':
        if (!*arg || strlen(arg) >= sizeof o->json_path) {
            snprintf(err, errlen, "-J: a file name of 1 to %zu characters", sizeof o->json_path - 1);
            return -1;
        }
        snprintf(o->json_path, sizeof o->json_path, "%s", arg);
        return 0;
    case 'y':
    case 'G':
    case 'R':
    case 'x':
    case 'D':
    case 'V':
    case 'M':
        if (key == 'y' || key == 'M') {
            if (parse_bool(arg, key == 'y' ? &o->setup.stream_null : &o->setup.memory_report, err, errlen))
                return -1;
            v = key == 'y' ? o->setup.stream_null : o->setup.memory_report;
        } else if (key == 'G') {
            if (parse_int(arg, 0, 1000000, &o->setup.graph_launches, err, errlen))
                return -1;
            v = o->setup.graph_launches;
        } else if (key == 'R') {
            if (parse_int(arg, 0, 2, &o->setup.reg_mode, err, errlen))
                return -1;
            v = o->setup.reg_mode;
        } else if (key == 'x') {
            /* NCCL_CTA_POLICY_DEFAULT, _EFFICIENCY, _ZERO; -1 (nccl-tests' default) leaves it unset */
            if (parse_int(arg, -1, 2, &o->setup.cta_policy, err, errlen))
                return -1;
            v = o->setup.cta_policy;
        } else if (ga_parse_long(arg, -1, 1 << 20, &v, err, errlen)) {
            return -1;
        }
        for (int i = 0; i < AR_N_IGNORED_MAX; i++)
            if (ar_ignored_flags[i].key == key) {
                /* the default (0; -V has no effect without -D) changes nothing: no warning */
                bool is_default = v == 0 || (key == 'x' && v == -1);
                o->ignored = is_default ? o->ignored & ~(1u << i) : o->ignored | (1u << i);
                snprintf(o->ignored_value[i], sizeof o->ignored_value[i], "%ld", v);
            }
        return 0;

    default:
        return NOT_MINE;
    }
}

int ar_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    int (*const groups[])(ar_opts *, int, const char *, char *,
                          size_t) = {on_sweep_option, on_what_option, on_gpuaccept_option, on_compat_option};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        int rc = groups[g](opts, key, arg, err, errlen);
        if (rc != NOT_MINE)
            return rc;
    }
    snprintf(err, errlen, "unhandled option");
    return -1;
}

int ar_opts_finish(ar_opts *o, bool gpu, bool quick, uint64_t *sizes, char *err, size_t errlen)
{
    if (!o->set_max)
        o->max_bytes = quick ? 1u << 20 : gpu ? 1u << 30 : 16u << 20;
    if (!o->set_min && o->min_bytes > o->max_bytes)
        o->min_bytes = o->max_bytes;
    if (!o->set_iters)
        o->iters = quick ? 5 : 20;
    if (!o->set_warmup)
        o->warmup = quick ? 1 : 5;
    if (o->set_step && !o->set_factor)
        o->step_factor = 1; /* nccl-tests: -i alone means additive steps */
    /* The GPU path honours these; only -D and -V stay ignored there (-u applies on both paths). */
    for (int i = 0; gpu && i < AR_N_IGNORED_MAX; i++)
        if (strchr("yGRxM", ar_ignored_flags[i].key))
            o->ignored &= ~(1u << i);
    if (gpu && o->setup.graph_launches > 0 && (o->per_iter || o->blocking)) {
        snprintf(err, errlen,
                 "-G %d: CUDA graph launches cannot be combined with -I or -z (nccl-tests "
                 "disables those with -G)",
                 o->setup.graph_launches);
        return -1;
    }
    if (gpu && o->setup.graph_launches > 0 && o->setup.stream_null) {
        snprintf(err, errlen, "-G %d with -y 1: CUDA cannot capture the legacy default stream into a graph",
                 o->setup.graph_launches);
        return -1;
    }
    if (!gpu) { /* the host path ignores these, with the warning */
        o->setup.graph_launches = o->setup.reg_mode = 0;
        o->setup.cta_policy = -1;
        o->setup.stream_null = o->setup.memory_report = false;
    }
    if (o->per_iter_skip > 0 && (!o->per_iter || o->per_iter_skip >= o->iters)) {
        snprintf(err, errlen, "-K %d needs -I 1 and fewer skipped than the %d iterations (-n)",
                 o->per_iter_skip, o->iters);
        return -1;
    }
    return ar_sweep_sizes(o->min_bytes, o->max_bytes, o->step_factor, o->step_bytes, sizes, AR_MAX_SIZES, err,
                          errlen);
}
