#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_parse.h"
#include "ga_str.h"
#include "programs.h"
#include "suite_util.h"

const char *suite_profile_builtin(const char *name)
{
    for (size_t i = 0; i < suite_n_builtin_profiles; i++)
        if (strcmp(suite_builtin_profiles[i].name, name) == 0)
            return suite_builtin_profiles[i].text;
    return NULL;
}

const char *suite_profile_builtin_names(void)
{
    static char names[256];
    if (!names[0])
        for (size_t i = 0, used = 0; i < suite_n_builtin_profiles && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? " " : "",
                                     suite_builtin_profiles[i].name);
    return names;
}

/* A placeholder is a whole argument "{kind}" or "{kind:param}". Returns its kind's index, -1 for a plain
 * argument, -2 for an unknown placeholder. */
static const char *const kinds[] = {"expect_gpus",  "burn_s",     "gpu",         "sku_min",  "sku_eff",
                                    "sku_node_min", "fabric_min", "fabric_net",  "patterns", "compute_hcas",
                                    "multi_gpu",    "p2p_min",    "sku_severity"};
enum {
    PH_EXPECT_GPUS,
    PH_BURN_S,
    PH_GPU,
    PH_SKU_MIN,
    PH_SKU_EFF,
    PH_SKU_NODE_MIN,
    PH_FABRIC_MIN,
    PH_FABRIC_NET,
    PH_PATTERNS,
    PH_COMPUTE_HCAS,
    PH_MULTI_GPU,   /* its word where the nodes have more than one GPU (mem_bw's --p2p) */
    PH_P2P_MIN,     /* sku_min there, else dropped in silence (multi_gpu's note says why) */
    PH_SKU_SEVERITY /* "warn" or "fail": the figure's "regression", what falling below its floor is */
};
static const bool kind_takes_param[] = {false, false, true,  true, true, true, true,
                                        false, true,  false, true, true, true};

static int placeholder(const char *arg, char *param, size_t len)
{
    size_t n = strlen(arg);
    if (n < 2 || arg[0] != '{' || arg[n - 1] != '}')
        return -1;
    const char *colon = memchr(arg, ':', n);
    size_t klen = (colon ? (size_t)(colon - arg) : n - 1) - 1;
    param[0] = '\0';
    if (colon)
        snprintf(param, len, "%.*s", (int)(n - 2 - klen - 1), colon + 1);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strlen(kinds[k]) == klen && strncmp(arg + 1, kinds[k], klen) == 0)
            return kind_takes_param[k] == (colon != NULL && param[0]) ? (int)k : -2;
    return -2;
}

const char *suite_owned_option(const char *word)
{
    static const char *const owned[] = {"report-dir", "run-id", "timeout"};
    if (strncmp(word, "--", 2) != 0)
        return NULL;
    size_t n = strcspn(word + 2, "=");
    for (size_t i = 0; n && i < sizeof owned / sizeof *owned; i++)
        if (n <= strlen(owned[i]) && strncmp(word + 2, owned[i], n) == 0)
            return owned[i]; /* the option itself, or a prefix getopt_long would take for it */
    return NULL;
}

int suite_split_program_args(const char *text, json_t *words, char *err, size_t errlen)
{
    size_t start = json_array_size(words);
    if (suite_split_words(text, words, err, errlen) != 0)
        return -1;
    for (size_t i = start; i < json_array_size(words); i++) {
        const char *w = json_string_value(json_array_get(words, i)), *own = suite_owned_option(w);
        if (own) {
            snprintf(err, errlen, "'%s' would set --%s, which gpuaccept run gives every step itself", w, own);
            return -1;
        }
    }
    return 0;
}

/* The profile's "steps": one entry per program, each an array of argument strings that set no option
 * gpuaccept run owns and use only known placeholders. 0, or -1 with err. */
static int validate_steps(const json_t *p, char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    size_t i;
    json_t *steps = json_object_get(p, "steps");
    if (!json_is_object(steps) || json_object_size(steps) == 0) {
        snprintf(err, errlen, "\"steps\" must be an object with one entry per program to run");
        return -1;
    }
    json_object_foreach(steps, key, v) {
        if (suite_program_index(key) < 0) {
            char names[256];
            suite_program_names(" ", names, sizeof names);
            snprintf(err, errlen, "unknown program \"%s\" in \"steps\" (programs: %s)", key, names);
            return -1;
        }
        if (!json_is_array(v)) {
            snprintf(err, errlen, "steps.%s must be an array of arguments", key);
            return -1;
        }
        json_t *a;
        json_array_foreach(v, i, a) {
            char param[128];
            if (!json_is_string(a) || json_string_length(a) >= 512) {
                snprintf(err, errlen, "steps.%s[%zu] must be a string of fewer than 512 bytes", key, i);
                return -1;
            }
            if (suite_owned_option(json_string_value(a))) {
                snprintf(err, errlen,
                         "steps.%s[%zu]: %s would set --%s, which gpuaccept run gives every step itself", key,
                         i, json_string_value(a), suite_owned_option(json_string_value(a)));
                return -1;
            }
            if (placeholder(json_string_value(a), param, sizeof param) == -2) {
                snprintf(err, errlen,
                         "steps.%s[%zu]: unknown placeholder %s (known: {expect_gpus} {burn_s} {gpu:WORD} "
                         "{sku_min:PROGRAM/METRIC} {sku_eff:PROGRAM/METRIC} {sku_node_min:PROGRAM/METRIC} "
                         "{fabric_min:PROGRAM/METRIC} {fabric_net} {patterns:LIST} {compute_hcas})",
                         key, i, json_string_value(a));
                return -1;
            }
        }
    }
    return 0;
}

int suite_profile_validate(const json_t *p, char *err, size_t errlen)
{
    static const char *const keys[] = {"schema",         "schema_version", "name",       "description",
                                       "step_timeout_s", "steps",          "not_covered"};
    if (!json_is_object(p) || !ga_streq(sj_str(p, "schema", NULL), SUITE_PROFILE_SCHEMA)) {
        snprintf(err, errlen, "not a profile: \"schema\" is not \"%s\"", SUITE_PROFILE_SCHEMA);
        return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)p, key, v) {
        bool known = false;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            known |= strcmp(key, keys[i]) == 0;
        if (!known) {
            snprintf(err, errlen,
                     "unknown key \"%s\" (keys: schema schema_version name description "
                     "step_timeout_s steps not_covered)",
                     key);
            return -1;
        }
    }
    json_t *ver = json_object_get(p, "schema_version");
    if (!json_is_integer(ver) || json_integer_value(ver) != SUITE_PROFILE_SCHEMA_VERSION) {
        snprintf(err, errlen, "\"schema_version\" must be the integer %d", SUITE_PROFILE_SCHEMA_VERSION);
        return -1;
    }
    const char *name = sj_str(p, "name", NULL);
    if (!name || !*name || strlen(name) > 64) {
        snprintf(err, errlen, "\"name\" must be a string of 1 to 64 characters");
        return -1;
    }
    json_t *t = json_object_get(p, "step_timeout_s");
    if (t && !(json_is_number(t) && json_number_value(t) >= 1 && json_number_value(t) <= 7 * 24 * 3600)) {
        snprintf(err, errlen, "\"step_timeout_s\" must be a number of seconds from 1 to 604800");
        return -1;
    }
    json_t *nc = json_object_get(p, "not_covered");
    size_t i;
    json_array_foreach(nc, i, v)
        if (!json_is_string(v))
            nc = NULL;
    if (json_object_get(p, "not_covered") && !nc) {
        snprintf(err, errlen, "\"not_covered\" must be an array of strings");
        return -1;
    }
    if (validate_steps(p, err, errlen) != 0)
        return -1;
    return 0;
}

int suite_profile_load(const char *spec, json_t **out, char *source, size_t srclen, char *err, size_t errlen)
{
    const char *text = suite_profile_builtin(spec);
    json_t *p;
    char why[512];
    *out = NULL;
    if (text) {
        json_error_t je;
        p = json_loads(text, 0, &je);
        snprintf(source, srclen, "built-in");
        if (!p) {
            snprintf(err, errlen, "built-in profile %s: %s", spec, je.text);
            return -1;
        }
    } else if (!(p = suite_load_json(spec, why, sizeof why))) {
        snprintf(err, errlen, "'%s' is neither a built-in profile (%s) nor a readable JSON file: %s", spec,
                 suite_profile_builtin_names(), why);
        return -1;
    } else {
        snprintf(source, srclen, "%s", spec);
    }
    if (suite_profile_validate(p, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", spec, why);
        json_decref(p);
        return -1;
    }
    *out = p;
    return 0;
}

bool suite_profile_runs(const json_t *p, const char *program)
{
    return json_object_get(json_object_get(p, "steps"), program) != NULL;
}

double suite_profile_step_timeout(const json_t *p)
{
    return sj_num(p, "step_timeout_s", 0);
}

static void note(json_t *not_covered, const char *fmt, const char *a, const char *b)
{
    char line[512];
    snprintf(line, sizeof line, fmt, a, b);
    size_t i;
    json_t *v;
    json_array_foreach(not_covered, i, v)
        if (ga_streq(json_string_value(v), line))
            return;
    json_array_append_new(not_covered, json_string(line));
}

/* The baseline metric PROGRAM/NAME, NULL when the baseline has none. */
static const json_t *baseline_metric(const json_t *baseline, const char *param)
{
    const char *slash = strchr(param, '/');
    if (!slash)
        return NULL;
    size_t i;
    json_t *m;
    json_array_foreach(sj_arr(baseline, "metrics"), i, m) {
        const char *prog = sj_str(m, "program", "");
        if (strlen(prog) == (size_t)(slash - param) && strncmp(prog, param, strlen(prog)) == 0 &&
            ga_streq(sj_str(m, "name", ""), slash + 1) &&
            json_is_true(json_object_get(m, "higher_is_better")))
            return m;
    }
    return NULL;
}

/* --baseline-tolerance, else the baseline's, else 10 (percent). */
static double profile_tolerance(const suite_profile_env *env)
{
    return env->tolerance_pct >= 0 ? env->tolerance_pct : sj_num(env->baseline, "tolerance_pct", 10);
}

/* A figure's own tolerance (tolerance_pct beside it in the baseline), else profile_tolerance. */
static double metric_tolerance(const suite_profile_env *env, const json_t *m)
{
    return sj_is_num(m, "tolerance_pct") ? sj_num(m, "tolerance_pct", 10) : profile_tolerance(env);
}

/* The SKU figure a placeholder asks for, in value; 0, or -1 with why it cannot be had. A baseline figure
 * measured on a job of another shape (8 GPUs of one node) is no threshold for this one. */
static int sku_value(const suite_profile_env *env, int kind, const char *param, double *value, char *why,
                     size_t len)
{
    const json_t *m = env->baseline ? baseline_metric(env->baseline, param) : NULL;
    if (!m) {
        snprintf(why, len, "the baseline has no figure %s", param);
        return -1;
    }
    if (sj_is_num(m, "node_count") && env->node_count > 0 && sj_int(m, "node_count", 0) != env->node_count) {
        snprintf(why, len, "the baseline figure %s holds for %lld node(s), this run has %d", param,
                 sj_int(m, "node_count", 0), env->node_count);
        return -1;
    }
    if (sj_is_num(m, "world_size") && env->world_size > 0 && sj_int(m, "world_size", 0) != env->world_size) {
        snprintf(why, len, "the baseline figure %s holds for %lld ranks, this run has %d", param,
                 sj_int(m, "world_size", 0), env->world_size);
        return -1;
    }
    /* the figure's own tolerance first, as when the baseline is applied (baseline.c) */
    double floor = sj_num(m, "value", NAN) * (1 - metric_tolerance(env, m) / 100);
    if (kind == PH_SKU_MIN) {
        *value = floor;
        return 0;
    }
    double peak = sj_num(m, "peak", NAN);
    if (!(peak > 0)) {
        snprintf(why, len, "the baseline figure %s gives no peak to take a percentage of", param);
        return -1;
    }
    *value = 100 * floor / peak;
    return 0;
}

/* Ranks on each node: the GPUs per node, else the ranks of a run on one node; 0 unknown. */
static int ranks_per_node(const suite_profile_env *env)
{
    if (env->fabric && env->fabric->ranks_per_node > 0)
        return env->fabric->ranks_per_node;
    if (env->expect_gpus > 0)
        return env->expect_gpus;
    return env->node_count == 1 ? env->world_size : 0;
}

/* The SKU figure of one node's ranks (--min-node-busbw: the per-node sweep is that single-node job), less
 * the tolerance. 0, or -1 with why. */
static int node_value(const suite_profile_env *env, const char *param, double *value, char *why, size_t len)
{
    const json_t *m = baseline_metric(env->baseline, param);
    int per_node = ranks_per_node(env);
    if (!m) {
        snprintf(why, len, "the baseline has no figure %s", param);
        return -1;
    }
    if (sj_is_num(m, "node_count") && sj_int(m, "node_count", 0) != 1) {
        snprintf(why, len, "the baseline figure %s is not one node's", param);
        return -1;
    }
    if (sj_is_num(m, "world_size") && sj_int(m, "world_size", 0) != per_node) {
        if (per_node > 0)
            snprintf(why, len, "the baseline figure %s holds for %lld ranks on a node, this run has %d",
                     param, sj_int(m, "world_size", 0), per_node);
        else
            snprintf(why, len,
                     "the baseline figure %s holds for %lld ranks on a node, and the ranks per node "
                     "are unknown",
                     param, sj_int(m, "world_size", 0));
        return -1;
    }
    *value = sj_num(m, "value", NAN) * (1 - metric_tolerance(env, m) / 100);
    return 0;
}

/* The latency term of a ring allreduce across nodes (issue 40, finding 3). The 0.96 of the line rate is a
 * bandwidth figure, what a large allreduce between two nodes reaches (nccl-412: at 8G). A world of n ranks
 * on k nodes also pays 2(n-1) ring steps of latency per operation, which a bandwidth figure does not hold:
 * NCCL's own model (src/graph/tuning.cc, ncclTopoTuneModel: the ring allreduce's latency is baseLat +
 * (nsteps - nInterSteps) x intraLat + nInterSteps x interLat, nsteps = 2(nRanks-1), nInterSteps =
 * 2(nNodes-1); ncclTopoGetAlgoTime: time = latency + bytes / bandwidth, the ring/Simple allreduce latency
 * across nodes times 1.9, "Plateau effect of ring"). The figures are the model's ring/Simple ones, each
 * taken at its most pessimistic: base 8.4 us; an intra-node step 6 us (NVLink's 3.4 us, raised to 3 x the
 * 2 us network post overhead NCCL charges Simple on AMD hosts); a network step 14 us (hwLat NET ring
 * Simple, before the fabric's own latencyInter). So that the floor cannot fail a healthy cluster, the busbw
 * a ring of n ranks reaches at size S with bandwidth busbw B is taken as the floor:
 *   t = lat + S x 2(n-1)/n / B,   busbw(n, S) = S x 2(n-1)/n / t = B x T / (T + lat), T = S x 2(n-1)/n / B.
 * NCCL picks the ring only where its model says the ring is fastest (a tree, NVLS or CollNet otherwise), so
 * a healthy fabric reaches at least this. At 2 nodes and 8 GiB it is within 1 % of B; at 64 nodes of 8 GPUs
 * and 1 GiB it is about a third of it. What a real cluster measures (docs/measured-on-gpu.md, "To settle on
 * a real cluster") replaces the model. */
#define RING_BASE_LAT_S 8.4e-6
#define RING_INTRA_STEP_S 6.0e-6
#define RING_INTER_STEP_S 14.0e-6
#define RING_PLATEAU 1.9

double suite_ring_allreduce_floor(double busbw_gbps, double bytes, int ranks, int nodes)
{
    if (ranks < 2 || nodes < 2 || !(bytes > 0) || !(busbw_gbps > 0))
        return busbw_gbps;
    double steps = 2.0 * (ranks - 1), inter = 2.0 * (nodes - 1);
    double lat =
        RING_PLATEAU * (RING_BASE_LAT_S + (steps - inter) * RING_INTRA_STEP_S + inter * RING_INTER_STEP_S);
    double t_bw = bytes * steps / ranks / (busbw_gbps * 1e9);
    return busbw_gbps * t_bw / (t_bw + lat);
}

/* The largest size the step's allreduce_bw sweeps: its -e/--maxbytes, else allreduce_bw's default (1G on a
 * GPU, 16M on the host path, 1M with --quick: ar_opts.c). */
static double step_max_bytes(const json_t *args, const suite_profile_env *env)
{
    size_t i;
    json_t *a;
    bool quick = false;
    double given = 0; /* the last one given: getopt's (a --args word comes after the profile's) */
    json_array_foreach(args, i, a) {
        const char *w = json_string_value(a);
        quick |= w && strcmp(w, "--quick") == 0;
        if (!w || (strcmp(w, "-e") != 0 && strcmp(w, "--maxbytes") != 0))
            continue;
        const char *v = json_string_value(json_array_get(args, i + 1));
        char param[128], err[128];
        uint64_t bytes;
        if (v && placeholder(v, param, sizeof param) == PH_GPU)
            v = env->gpu ? param : NULL;
        if (v && ga_parse_size(v, &bytes, err, sizeof err) == 0)
            given = (double)bytes;
    }
    if (given > 0)
        return given;
    return quick ? 1 << 20 : env->gpu ? 1 << 30 : 16 << 20;
}

/* --min-busbw across nodes: the lowest node's active HCA rate (node_health), in GB/s, times the baseline's
 * fabric efficiency, no higher than the SKU's single-node figure (the ring crosses each node's NVLink too),
 * less the tolerance, then what the ring's latency leaves of it for this world at its largest size
 * (suite_ring_allreduce_floor), rounded down to 0.1 GB/s. 0, or -1 with why. */
static int fabric_floor(const suite_profile_env *env, const char *param, double max_bytes, double *value,
                        char *why, size_t len)
{
    const suite_fabric_facts *f = env->fabric;
    const json_t *fab = json_object_get(env->baseline, "fabric");
    double eff = sj_num(fab, "busbw_per_line_rate", NAN);
    if (!f->have) {
        snprintf(why, len, "%s (the floor across nodes is derived from its HCA rates)", f->why);
        return -1;
    }
    if (!(f->min_rate_gbps > 0)) {
        snprintf(why, len, "%s has no active InfiniBand/RoCE port (node_health)", f->min_host);
        return -1;
    }
    if (!(eff > 0)) {
        snprintf(why, len, "the baseline gives no fabric efficiency (\"fabric\": busbw_per_line_rate)");
        return -1;
    }
    double line = f->min_rate_gbps / 8 * eff, cap;
    char cap_why[160];
    if (node_value(env, param, &cap, cap_why, sizeof cap_why) == 0)
        cap /= 1 - profile_tolerance(env) / 100; /* the figure itself, not its floor */
    else
        cap = line;
    int nodes = f->nodes > 0 ? f->nodes : env->node_count;
    int ranks = env->world_size > 0 ? env->world_size : f->ranks_per_node * nodes;
    double bw = (line < cap ? line : cap) * (1 - profile_tolerance(env) / 100);
    *value = floor(suite_ring_allreduce_floor(bw, max_bytes, ranks, nodes) * 10) / 10;
    return 0;
}

static bool late_kind(int kind)
{
    return kind == PH_FABRIC_MIN || kind == PH_FABRIC_NET || kind == PH_COMPUTE_HCAS;
}

/* Late placeholders: filled when the step starts, from node_health's report, where the run has several (or
 * an unknown number of) nodes. true: out is the placeholder itself, kept for then. */
static bool deferred(const suite_profile_env *env, int kind, const char *arg, char *out, size_t len)
{
    if (!late_kind(kind) || env->fabric || env->node_count == 1)
        return false;
    snprintf(out, len, "%s", arg);
    return true;
}

static void shortest_number(double v, const char *suffix, char *out, size_t len);

/* The per-node collectives' floor left out: said only then, not by the profile whatever the command holds
 * (issue 41, observation 7: the standard profile said "no --min-node-busbw" beside --min-node-busbw 333). */
static void relative_only_per_node(int kind, const char *program, json_t *not_covered)
{
    if (kind == PH_SKU_NODE_MIN)
        note(not_covered,
             "relative only: %s's per-node collectives and pairs name a node or link against the "
             "others, with no floor of their own (no --min-node-busbw)%s",
             program, "");
}

/* The floors and the network of the fabric (fill's last three kinds). */
static bool fill_fabric(const suite_profile_env *env, int kind, const char *param, const char *program,
                        const char *option, bool one_node, double max_bytes, char *out, size_t len,
                        json_t *not_covered)
{
    char why[256];
    double v;
    if (kind != PH_FABRIC_NET) {
        if (!env->baseline) {
            note(not_covered, "no SKU thresholds: %s%s",
                 env->no_baseline_why ? env->no_baseline_why : "no baseline", "");
            relative_only_per_node(kind, program, not_covered);
            return false;
        }
        if ((kind == PH_SKU_NODE_MIN ? node_value(env, param, &v, why, sizeof why)
                                     : fabric_floor(env, param, max_bytes, &v, why, sizeof why)) != 0) {
            char what[160];
            snprintf(what, sizeof what, "%s for %s%s", option ? option : param, program,
                     kind == PH_FABRIC_MIN ? " across nodes" : "");
            note(not_covered, "no %s: %s", what, why);
            relative_only_per_node(kind, program, not_covered);
            return false;
        }
        shortest_number(v, "", out, len); /* exact, as the other thresholds */
        return true;
    }
    if (one_node)
        return false; /* nothing goes between nodes; the summary says InfiniBand was not exercised */
    if (!env->fabric->have || env->fabric->nodes_with_hca == 0) {
        note(not_covered, "no --expect-net for %s: %s", program,
             !env->fabric->have ? env->fabric->why
                                : "no node has an active InfiniBand/RoCE port or expects HCAs (node_health)");
        return false;
    }
    snprintf(out, len, "%s", env->fabric->gdr_required ? "ib-gdr" : "ib");
    return true;
}

/* {compute_hcas}: the compute ports node_health chose, for allreduce_bw's --ib-hcas, where every node's have
 * the same names (issue 40, finding 10: the devices NCCL used between nodes compared with them). */
static bool fill_compute_hcas(const suite_profile_env *env, const char *program, bool one_node, char *out,
                              size_t len, json_t *not_covered)
{
    if (one_node)
        return false; /* nothing goes between nodes */
    if (!env->fabric->compute_hcas[0]) {
        note(not_covered, "NCCL's devices not compared with the compute ports for %s: %s", program,
             env->fabric->compute_hcas_why[0] ? env->fabric->compute_hcas_why : env->fabric->why);
        return false;
    }
    snprintf(out, len, "%s", env->fabric->compute_hcas);
    return true;
}

/* v with the fewest decimals that parse back to v exactly (no exponent: a command line a person reads),
 * then suffix. */
static void shortest_number(double v, const char *suffix, char *out, size_t len)
{
    for (int decimals = 0; decimals <= 20; decimals++) {
        snprintf(out, len, "%.*f%s", decimals, v, suffix);
        if (strtod(out, NULL) == v)
            return;
    }
    snprintf(out, len, "%.17g%s", v, suffix);
}

/* allreduce_bw's --pattern list without what this job cannot run: pairs needs two ranks (a one-GPU machine
 * ran the standard profile into a usage error, issue 30), rails two nodes of several GPUs (node count
 * unknown: left out). False, said, when nothing is left. */
static bool fill_patterns(const suite_profile_env *env, const char *program, const char *list, char *out,
                          size_t len, json_t *not_covered)
{
    char copy[128], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list);
    out[0] = '\0';
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (ga_streq(w, "pairs") && env->world_size == 1) {
            note(not_covered, "no pairs isolation for %s: one rank%s", program, ", nothing to pair it with");
            continue;
        }
        /* rails: GPU i of two nodes, so two nodes of more than one GPU each (one GPU a node: pairs is it) */
        if (ga_streq(w, "rails") && !(env->node_count >= 2 && env->world_size >= 2 * env->node_count)) {
            if (env->node_count >= 2 && env->world_size > 0)
                note(not_covered, "no rails for %s: one rank a node%s", program, ", the pairs are its rails");
            continue;
        }
        snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "," : "", w);
    }
    return out[0] != '\0';
}

/* Nodes of more than one GPU (ranks): what a copy matrix between a node's GPUs needs. */
static bool multi_gpu_nodes(const suite_profile_env *env)
{
    return ranks_per_node(env) > 1 || (env->node_count >= 1 && env->world_size > env->node_count);
}

/* {multi_gpu:WORD}: WORD where the nodes have several GPUs; else left out, said. */
static bool fill_multi_gpu(const suite_profile_env *env, const char *program, const char *word, char *out,
                           size_t len, json_t *not_covered)
{
    if (multi_gpu_nodes(env)) {
        snprintf(out, len, "%s", word);
        return true;
    }
    bool one = ranks_per_node(env) == 1 || (env->node_count >= 1 && env->world_size == env->node_count);
    char what[160];
    snprintf(what, sizeof what, "(%s) for %s", word, program);
    note(not_covered, "no GPU-pair copy matrix %s: %s", what,
         one ? "one GPU a node" : "GPUs per node unknown");
    return false;
}

/* {sku_min:...} / {sku_eff:...}: the SKU figure less its tolerance (a percentage of its peak for sku_eff);
 * else left out, said. */
static bool fill_sku(const suite_profile_env *env, int kind, const char *program, const char *param,
                     const char *option, char *out, size_t len, json_t *not_covered)
{
    char why[256];
    double v;
    if (!env->baseline)
        note(not_covered, "no SKU thresholds: %s%s",
             env->no_baseline_why ? env->no_baseline_why : "no baseline", "");
    if (env->baseline && sku_value(env, kind, param, &v, why, sizeof why) == 0) {
        /* the shortest text that reads back as v: 0.6376 stays 0.6376 (it was "0.6"); a percentage keeps its
         * sign, so that the program never reads a value below 1 as a fraction */
        shortest_number(v, kind == PH_SKU_EFF ? "%" : "", out, len);
        return true;
    }
    if (env->baseline) {
        char what[160];
        snprintf(what, sizeof what, "%s for %s", option ? option : param, program);
        note(not_covered, "no %s: %s", what, why);
    }
    if (kind == PH_SKU_EFF)
        note(not_covered, "relative only: %s%s", program,
             ", each GPU against its peers with no floor (no SKU threshold)");
    return false;
}

/* One argument of the profile, filled; false when it cannot be, with the line for the summary. */
static bool fill(const suite_profile_env *env, const char *program, const char *arg, const char *option,
                 double max_bytes, char *out, size_t len, json_t *not_covered)
{
    char param[128], why[256];
    int kind = placeholder(arg, param, sizeof param);
    if (deferred(env, kind, arg, out, len))
        return true;
    bool one_node = env->fabric ? env->fabric->nodes == 1 : env->node_count == 1;
    if (kind == PH_FABRIC_MIN && one_node)
        kind = PH_SKU_MIN; /* the single-node figure, for a job of its shape */
    if (kind == PH_P2P_MIN && !multi_gpu_nodes(env))
        return false; /* no pairs to hold to it */
    if (kind == PH_P2P_MIN)
        kind = PH_SKU_MIN;
    switch (kind) {
    case -1:
        snprintf(out, len, "%s", arg);
        return true;
    case PH_EXPECT_GPUS:
        if (env->expect_gpus > 0) {
            snprintf(out, len, "%d", env->expect_gpus);
            return true;
        }
        note(not_covered, "no --expect-gpus: %s%s",
             env->expect_gpus_why ? env->expect_gpus_why : "GPUs per node unknown", "");
        return false;
    case PH_BURN_S:
        snprintf(out, len, "%.0f", env->burn_s > 0 ? env->burn_s : SUITE_PROFILE_DEFAULT_BURN_S);
        return true;
    case PH_GPU:
        if (env->gpu) {
            snprintf(out, len, "%s", param);
            return true;
        }
        snprintf(why, sizeof why, "%s %s", option ? option : "", param);
        note(not_covered, "no %s for %s: no GPU (host path)", why, program);
        return false;
    case PH_SKU_MIN:
    case PH_SKU_EFF:
        return fill_sku(env, kind, program, param, option, out, len, not_covered);
    case PH_SKU_NODE_MIN:
    case PH_FABRIC_MIN:
    case PH_FABRIC_NET:
        return fill_fabric(env, kind, param, program, option, one_node, max_bytes, out, len, not_covered);
    case PH_PATTERNS:
        return fill_patterns(env, program, param, out, len, not_covered);
    case PH_COMPUTE_HCAS:
        return fill_compute_hcas(env, program, one_node, out, len, not_covered);
    case PH_MULTI_GPU:
        return fill_multi_gpu(env, program, param, out, len, not_covered);
    case PH_SKU_SEVERITY: { /* silent when dropped: the floor's own placeholder says why there is none */
        const json_t *m = env->baseline ? baseline_metric(env->baseline, param) : NULL;
        if (m)
            snprintf(out, len, "%s", sj_str(m, "regression", "fail"));
        return m != NULL;
    }
    default:
        return false; /* validated away */
    }
}

int suite_profile_args(const json_t *p, const char *program, const suite_profile_env *env, json_t *args,
                       json_t *not_covered)
{
    json_t *list = json_object_get(json_object_get(p, "steps"), program);
    if (!list)
        return -1;
    size_t start = json_array_size(args), i;
    double max_bytes = step_max_bytes(list, env);
    json_t *a;
    json_array_foreach(list, i, a) {
        char word[512];
        size_t n = json_array_size(args);
        const char *prev = n > start ? json_string_value(json_array_get(args, n - 1)) : NULL;
        const char *option = prev && prev[0] == '-' ? prev : NULL;
        if (fill(env, program, json_string_value(a), option, max_bytes, word, sizeof word, not_covered))
            json_array_append_new(args, json_string(word));
        else if (option)
            json_array_remove(args, n - 1); /* an option without its value would take the next word */
    }
    return 0;
}

bool suite_profile_args_deferred(const json_t *args)
{
    size_t i;
    json_t *a;
    char param[128];
    json_array_foreach(args, i, a) {
        if (late_kind(placeholder(json_string_value(a), param, sizeof param)))
            return true;
    }
    return false;
}

json_t *suite_profile_fill_deferred(const json_t *args, const suite_profile_env *env, const char *program,
                                    json_t *not_covered)
{
    json_t *out = json_array(), *a;
    size_t i;
    double max_bytes = step_max_bytes(args, env);
    json_array_foreach(args, i, a) {
        char word[512];
        size_t n = json_array_size(out);
        const char *prev = n ? json_string_value(json_array_get(out, n - 1)) : NULL;
        const char *option = prev && prev[0] == '-' ? prev : NULL;
        if (fill(env, program, json_string_value(a), option, max_bytes, word, sizeof word, not_covered))
            json_array_append_new(out, json_string(word));
        else if (option)
            json_array_remove(out, n - 1);
    }
    return out;
}

int suite_split_words(const char *s, json_t *words, char *err, size_t errlen)
{
    char word[4096];
    size_t n = 0;
    bool in_word = false;
    for (const char *c = s;; c++) {
        if (n >= sizeof word - 1) {
            snprintf(err, errlen, "a word longer than %zu bytes", sizeof word - 1);
            return -1;
        }
        if (*c == '\0' || *c == ' ' || *c == '\t' || *c == '\n') {
            if (in_word) {
                word[n] = '\0';
                json_array_append_new(words, json_string(word));
            }
            n = 0;
            in_word = false;
            if (*c == '\0')
                return 0;
            continue;
        }
        in_word = true;
        if (*c == '\'') {
            const char *end = strchr(c + 1, '\'');
            if (!end) {
                snprintf(err, errlen, "unterminated ' in \"%s\"", s);
                return -1;
            }
            for (c++; c < end && n < sizeof word - 1; c++)
                word[n++] = *c;
        } else if (*c == '"') {
            for (c++; *c != '"'; c++) {
                if (*c == '\0') {
                    snprintf(err, errlen, "unterminated \" in \"%s\"", s);
                    return -1;
                }
                if (*c == '\\' && c[1] && strchr("\"\\$`", c[1]))
                    c++;
                if (n < sizeof word - 1)
                    word[n++] = *c;
            }
        } else if (*c == '\\') {
            if (!c[1]) {
                snprintf(err, errlen, "a trailing \\ in \"%s\"", s);
                return -1;
            }
            word[n++] = *++c;
        } else {
            word[n++] = *c;
        }
    }
}
