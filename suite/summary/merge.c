#include "merge.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "ga_cli.h"
#include "ga_exit.h"
#include "ga_pci.h"
#include "ga_report.h"
#include "ga_str.h"
#include "ga_time.h"
#include "ga_version.h"
#include "kernel_log.h"
#include "links.h"
#include "node_name.h"
#include "step_status.h"
#include "suite_util.h"

static const json_t *find_report(const json_t *reports, const char *program)
{
    size_t i;
    json_t *r;
    json_array_foreach(reports, i, r)
        if (ga_streq(sj_str(r, "program", NULL), program))
            return r;
    return NULL;
}

static const json_t *find_run_step(const json_t *run, const char *program)
{
    size_t i;
    json_t *s;
    json_array_foreach(sj_arr(run, "steps"), i, s)
        if (ga_streq(sj_str(s, "program", NULL), program))
            return s;
    return NULL;
}

/* Status from a report's own verdict, when no run record says how the step ended: the rules of a step that
 * ran and left this report. */
static const char *status_from_report(const json_t *report)
{
    suite_step_end end = {.exit_code = (int)sj_int(json_object_get(report, "verdict"), "exit_code", -1)};
    return suite_step_status(&end, true, true);
}

/* The programs to list: the suite's in run order, then any other report's, in the order given. */
static json_t *program_list(const json_t *reports, const json_t *run)
{
    json_t *list = json_array();
    for (size_t i = 0; i < suite_n_programs; i++)
        json_array_append_new(list, json_string(suite_programs[i].name));
    const json_t *sources[2] = {sj_arr(run, "steps"), reports};
    for (int s = 0; s < 2; s++) {
        size_t i;
        json_t *r;
        json_array_foreach(sources[s], i, r) {
            const char *p = sj_str(r, "program", NULL);
            if (!p || suite_program_index(p) >= 0)
                continue;
            bool seen = false;
            size_t j;
            json_t *q;
            json_array_foreach(list, j, q)
                seen |= ga_streq(json_string_value(q), p);
            if (!seen)
                json_array_append_new(list, json_string(p));
        }
    }
    return list;
}

static json_t *null_or_int(long long v)
{
    return v < 0 ? json_null() : json_integer(v);
}

static json_t *make_step(const char *program, const json_t *report, const json_t *run_step, json_t *findings)
{
    const char *status = run_step ? sj_str(run_step, "status", "not_run")
                         : report ? status_from_report(report)
                                  : "not_run";
    /* The run record says the step ended with its report, and there is none of this run: not a pass. */
    if (!report && (ga_streq(status, "pass") || ga_streq(status, "fail")))
        status = "bad_report";
    json_t *step = json_object();
    json_object_set_new(step, "program", json_string(program));
    json_object_set_new(step, "status", json_string(status));
    long long exit_code = run_step ? sj_int(run_step, "exit_code", -1)
                                   : sj_int(json_object_get(report, "verdict"), "exit_code", -1);
    json_object_set_new(step, "exit_code", null_or_int(exit_code));
    json_object_set_new(step, "exit_name",
                        exit_code >= 0 ? json_string(ga_exit_code_name((int)exit_code)) : json_null());
    if (run_step && sj_int(run_step, "signal", 0) > 0)
        json_object_set_new(step, "signal", json_integer(sj_int(run_step, "signal", 0)));
    double dur = run_step ? sj_num(run_step, "duration_s", -1) : sj_num(report, "duration_s", -1);
    json_object_set_new(step, "duration_s", dur >= 0 ? json_real(dur) : json_null());
    char name[300];
    snprintf(name, sizeof name, "%s.json", program);
    json_object_set_new(step, "report", report ? json_string(name) : json_null());
    const char *result = run_step ? sj_str(run_step, "result_line", NULL) : NULL;
    json_object_set_new(step, "result_line", result && *result ? json_string(result) : json_null());
    json_object_set_new(step, "world_size",
                        report ? null_or_int(sj_int(report, "world_size", -1)) : json_null());
    json_object_set_new(step, "node_count",
                        report ? null_or_int(sj_int(report, "node_count", -1)) : json_null());
    /* What the program's figures depend on (problem size, backend): what compare and baselines check. */
    if (report && json_is_object(json_object_get(report, "conditions")))
        json_object_set(step, "conditions", json_object_get(report, "conditions"));
    if (run_step && json_object_get(run_step, "command"))
        json_object_set(step, "command", json_object_get(run_step, "command"));
    if (run_step && json_object_get(run_step, "node"))
        json_object_set(step, "node", json_object_get(run_step, "node"));

    /* A step that could not measure is itself a failure of the run. */
    bool report_failed = false;
    size_t i;
    json_t *f;
    json_array_foreach(sj_arr(report, "findings"), i, f)
        report_failed |= ga_streq(sj_str(f, "severity", ""), "fail");
    const suite_step_fault *fault = suite_step_fault_of(status);
    if (fault && !(ga_streq(status, "fail") && report_failed)) {
        char msg[512];
        int n = snprintf(msg, sizeof msg, "%s %s", program, fault->what);
        if (exit_code > 0 && !ga_streq(status, "missing"))
            n += snprintf(msg + n, sizeof msg - (size_t)n, " (exit %lld)", exit_code);
        if (sj_int(run_step, "signal", 0) > 0)
            n += snprintf(msg + n, sizeof msg - (size_t)n, " (signal %lld)", sj_int(run_step, "signal", 0));
        if (dur >= 0 && ga_streq(status, "timeout"))
            n += snprintf(msg + n, sizeof msg - (size_t)n, " after %.0f s", dur);
        if (!report && !ga_streq(status, "missing") && !ga_streq(status, "not_run"))
            snprintf(msg + n, sizeof msg - (size_t)n, "; no report");
        json_t *finding =
            json_pack("{s:s, s:s, s:s, s:n, s:n, s:n, s:n, s:s}", "program", program, "severity", "fail",
                      "code", fault->code, "host", "node_index", "rank", "gpu", "message", msg);
        suite_step_fault_name_node(finding, run_step); /* the node that took the step down, if named */
        json_array_append_new(findings, finding);
    }
    return step;
}

/* The host of each rank of a report's nodes ({"rank": host}), for findings and metrics that name a rank but
 * not its host: one pass over the nodes, not one per entry (issue 44, item 7). New reference. */
static json_t *hosts_by_rank(const json_t *report)
{
    json_t *map = json_object(), *node, *r;
    size_t i, j;
    json_array_foreach(sj_arr(report, "nodes"), i, node)
        json_array_foreach(sj_arr(node, "ranks"), j, r) {
            char key[32];
            snprintf(key, sizeof key, "%lld", sj_int(r, "rank", -2));
            const char *host = sj_str(node, "host", NULL);
            if (host && !json_object_get(map, key)) /* the first node listing a rank, as before */
                json_object_set_new(map, key, json_string(host));
        }
    return map;
}

/* Copies a report's finding or metric, with its program first and its host filled in from its rank. */
static json_t *tag_entry(const json_t *entry, const char *program, const json_t *rank_hosts)
{
    json_t *out = json_object();
    json_object_set_new(out, "program", json_string(program));
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)entry, key, v)
        json_object_set(out, key, v);
    if (!json_is_string(json_object_get(out, "host")) && sj_int(out, "rank", -1) >= 0) {
        char rank[32];
        snprintf(rank, sizeof rank, "%lld", sj_int(out, "rank", -1));
        json_t *host = json_object_get(rank_hosts, rank);
        if (host)
            json_object_set(out, "host", host);
    }
    return out;
}

static json_t *get_node(json_t *nodes, json_t *index, const char *host, long long node_index)
{
    json_t *node = json_object_get(index, host);
    if (node)
        return node;
    node = json_object();
    json_object_set_new(node, "host", json_string(host));
    json_object_set_new(node, "node_index", null_or_int(node_index));
    json_object_set_new(node, "verdict", json_string("pass"));
    json_object_set_new(node, "fault_codes", json_array());
    json_object_set_new(node, "checks", json_object());
    json_object_set_new(node, "in_reports", json_array());
    json_object_set_new(node, "ranks", json_integer(0));
    json_object_set_new(node, "gpus", json_array());
    json_array_append_new(nodes, node);
    json_object_set(index, host, node);
    return node;
}

/* A GPU as a report names it: its PCI bus id in normal form ("" in a report older than the field) and its
 * index among the node's GPUs (-1 unknown). Rows are keyed by (node, bus id): with one GPU bound per rank
 * every GPU is CUDA device 0 (issue 40, finding 4); by index for older reports. */
typedef struct {
    char pci[GA_PCI_BUS_ID_LEN];
    long long index;
} gpu_ref;

static gpu_ref gpu_ref_of(const char *pci, long long index)
{
    gpu_ref k = {"", index < 0 ? -1 : index};
    if (ga_pci_normalise(pci, k.pci, sizeof k.pci) != 0)
        k.pci[0] = '\0';
    return k;
}

static json_t *get_gpu(json_t *node, const gpu_ref *k)
{
    size_t i;
    json_t *g;
    json_array_foreach(sj_arr(node, "gpus"), i, g) {
        const char *pci = sj_str(g, "pci_bus_id", NULL);
        bool same =
            k->pci[0] && pci ? strcmp(pci, k->pci) == 0 : k->index >= 0 && sj_int(g, "gpu", -1) == k->index;
        if (!same)
            continue;
        if (k->index >= 0 && sj_int(g, "gpu", -1) < 0)
            json_object_set_new(g, "gpu", json_integer(k->index));
        if (k->pci[0] && !pci)
            json_object_set_new(g, "pci_bus_id", json_string(k->pci));
        return g;
    }
    g = json_pack("{s:o, s:n, s:n, s:n, s:o, s:s, s:[]}", "gpu",
                  k->index >= 0 ? json_integer(k->index) : json_null(), "rank", "model", "uuid", "pci_bus_id",
                  k->pci[0] ? json_string(k->pci) : json_null(), "verdict", "pass", "fault_codes");
    json_array_append_new(json_object_get(node, "gpus"), g);
    return g;
}

/* The GPU a rank used: its index among the node's GPUs is "node_index" where the report has the field (null
 * when the rank could not know it), else "index" (older reports, where the two were taken as one). */
static gpu_ref device_ref(const json_t *dev)
{
    long long index =
        json_object_get(dev, "node_index") ? sj_int(dev, "node_index", -1) : sj_int(dev, "index", -1);
    return gpu_ref_of(sj_str(dev, "pci_bus_id", NULL), index);
}

/* node_health's NVML index of each GPU, by bus id, kept on the node ("_nvml") until the rows are settled:
 * NVML numbers all of a node's GPUs, and names the rows other programs made by bus id alone. */
static void note_nvml_gpus(json_t *node, const json_t *rank)
{
    size_t i;
    json_t *g;
    if (!json_is_object(
            json_object_get(rank, "nvml"))) /* node_health's ranks: {"nvml": {...}, "gpus": [...]} */
        return;
    json_array_foreach(sj_arr(rank, "gpus"), i, g) {
        gpu_ref k = gpu_ref_of(sj_str(g, "pci_bus_id", NULL), sj_int(g, "index", -1));
        if (!k.pci[0] || k.index < 0)
            continue;
        json_t *map = json_object_get(node, "_nvml");
        if (!map)
            json_object_set_new(node, "_nvml", map = json_object());
        json_object_set_new(map, k.pci, json_integer(k.index));
    }
}

static void set_if_null(json_t *obj, const char *key, json_t *value)
{
    json_t *cur = json_object_get(obj, key);
    if ((!cur || json_is_null(cur)) && value && !json_is_null(value))
        json_object_set(obj, key, value);
}

static void merge_nodes(const json_t *report, const char *program, json_t *nodes, json_t *index)
{
    size_t i, j;
    json_t *n, *r;
    json_array_foreach(sj_arr(report, "nodes"), i, n) {
        const char *host = sj_str(n, "host", NULL);
        if (!host)
            continue;
        json_t *node = get_node(nodes, index, host, sj_int(n, "node_index", -1));
        json_array_append_new(json_object_get(node, "in_reports"), json_string(program));
        if (json_is_string(json_object_get(n, "slurm_node")))
            set_if_null(node, "slurm_node", json_object_get(n, "slurm_node"));
        if (json_is_string(json_object_get(n, "pod")))
            set_if_null(node, "pod", json_object_get(n, "pod"));
        long long ranks = json_array_size(sj_arr(n, "ranks"));
        if (ranks > sj_int(node, "ranks", 0))
            json_object_set_new(node, "ranks", json_integer(ranks));
        json_array_foreach(sj_arr(n, "ranks"), j, r) {
            note_nvml_gpus(node, r);
            json_t *dev = json_object_get(r, "device");
            if (!json_is_object(dev) || !sj_is_num(dev, "index"))
                continue;
            gpu_ref k = device_ref(dev);
            json_t *gpu = get_gpu(node, &k);
            set_if_null(gpu, "rank", json_object_get(r, "rank"));
            set_if_null(gpu, "model", json_object_get(dev, "name"));
            set_if_null(gpu, "uuid", json_object_get(dev, "uuid"));
        }
    }
}

/* The GPU model most ranks report, or NULL (of equal counts, the first seen): counted in one pass, then
 * chosen in a second, not counted again for each GPU. */
static const char *majority_model(const json_t *nodes)
{
    const char *best = NULL;
    json_int_t best_n = 0;
    json_t *counts = json_object(), *n, *g;
    size_t i, j;
    for (int pass = 0; pass < 2; pass++)
        json_array_foreach(nodes, i, n)
            json_array_foreach(sj_arr(n, "gpus"), j, g) {
                const char *m = sj_str(g, "model", NULL);
                if (m && pass == 0)
                    json_object_set_new(counts, m, json_integer(sj_int(counts, m, 0) + 1));
                else if (m && sj_int(counts, m, 0) > best_n) {
                    best = m;
                    best_n = sj_int(counts, m, 0);
                }
            }
    json_decref(counts);
    return best;
}

static int cmp_nodes(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    long long ix = sj_int(x, "node_index", 1LL << 40), iy = sj_int(y, "node_index", 1LL << 40);
    if (ix != iy)
        return ix < iy ? -1 : 1;
    return strcmp(sj_str(x, "host", ""), sj_str(y, "host", ""));
}

/* By index, those without one last, then by bus id. */
static int cmp_gpus(const void *a, const void *b)
{
    const json_t *p = *(json_t *const *)a, *q = *(json_t *const *)b;
    long long x = sj_int(p, "gpu", 1LL << 40), y = sj_int(q, "gpu", 1LL << 40);
    if (x != y)
        return (x > y) - (x < y);
    return strcmp(sj_str(p, "pci_bus_id", ""), sj_str(q, "pci_bus_id", ""));
}

/* Sorts a JSON array of objects in place with cmp. */
static void sort_array(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    if (n < 2)
        return;
    json_t **items = malloc(n * sizeof *items);
    if (!items)
        return;
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(arr, i));
    qsort(items, n, sizeof *items, cmp);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, items[i]);
    free(items);
}

/* What each program's plan cut (its report's "not_covered": sizes, rounds, checks it had no time for, or
 * whose answer was known) joins what the profile does not cover, "program: line". */
static void merge_not_covered(json_t *s, const json_t *reports)
{
    size_t i, j;
    json_t *r, *line;
    json_array_foreach(reports, i, r)
        json_array_foreach(sj_arr(r, "not_covered"), j, line) {
            if (!json_is_string(line))
                continue;
            json_t *profile = json_object_get(s, "profile");
            if (!json_is_object(profile)) {
                profile = json_pack("{s:s, s:s, s:[]}", "name", "?", "source", "the reports", "not_covered");
                json_object_set_new(s, "profile", profile);
            }
            json_t *nc = json_object_get(profile, "not_covered");
            if (!json_is_array(nc)) {
                nc = json_array();
                json_object_set_new(profile, "not_covered", nc);
            }
            char buf[700];
            snprintf(buf, sizeof buf, "%s: %s", sj_str(r, "program", "?"), json_string_value(line));
            json_array_append_new(nc, json_string(buf));
        }
}

/* The findings of the nodes a run record's preflight excluded (program "preflight", severity fail, the host
 * and why), appended to findings; returns the excluded nodes as [{host, code, why}] (new reference). */
static json_t *preflight_findings(const json_t *run, json_t *findings)
{
    json_t *excluded = json_array();
    const json_t *pf = json_object_get(run, "preflight");
    size_t i;
    json_t *nd;
    json_array_foreach(json_object_get(pf, "nodes"), i, nd) {
        const char *host = json_string_value(json_object_get(nd, "host"));
        const char *code = json_string_value(json_object_get(nd, "code"));
        const char *why = json_string_value(json_object_get(nd, "why"));
        if (!host || !code)
            continue;
        char msg[600];
        snprintf(msg, sizeof msg, "excluded from the run: %s", why ? why : code);
        json_array_append_new(findings, json_pack("{s:s, s:s, s:s, s:s, s:n, s:n, s:n, s:s}", "program",
                                                  "preflight", "severity", "fail", "code", code, "host", host,
                                                  "node_index", "rank", "gpu", "message", msg));
        json_array_append_new(
            excluded, json_pack("{s:s, s:s, s:s}", "host", host, "code", code, "why", why ? why : ""));
    }
    return excluded;
}

/* One name per machine (issue 41, item 8): the reports name a machine by its host name (the Kubernetes node's
 * name in a pod, ga_machine_name), while the launchers name it as they reached it: mpirun by its hostfile
 * name (an IP, an IPoIB name), srun by its Slurm NodeName, the MPIJob's hostfile by pod. The other names
 * each map to the host name: a report node's slurm_node and pod, and the name the preflight's node-check
 * answered from each hostfile entry ("machine"). A name that is itself some report's host is never an
 * alias. Returns {alias: host} (new reference). */
static json_t *machine_aliases(const json_t *reports, const json_t *run)
{
    json_t *hosts = json_object(), *map = json_object();
    size_t i, j;
    json_t *r, *n;
    json_array_foreach(reports, i, r)
        json_array_foreach(sj_arr(r, "nodes"), j, n)
            if (sj_str(n, "host", NULL))
                json_object_set_new(hosts, sj_str(n, "host", NULL), json_true());
    json_array_foreach(reports, i, r)
        json_array_foreach(sj_arr(r, "nodes"), j, n) {
            const char *host = sj_str(n, "host", NULL),
                       *other[2] = {sj_str(n, "slurm_node", NULL), sj_str(n, "pod", NULL)};
            for (int k = 0; k < 2 && host; k++)
                if (other[k] && suite_node_name_ok(other[k]) && !json_object_get(hosts, other[k]))
                    json_object_set_new(map, other[k], json_string(host));
        }
    /* A name that two hostfile entries answered with is no one's alias: one machine listed twice, or
     * several stand-in nodes on one machine (a test), cannot be told apart by it. */
    const json_t *pf = json_object_get(json_object_get(run, "preflight"), "nodes");
    json_t *answers = json_object();
    json_array_foreach(pf, i, n) {
        const char *machine = sj_str(n, "machine", NULL);
        if (machine)
            json_object_set_new(answers, machine, json_integer(sj_int(answers, machine, 0) + 1));
    }
    json_array_foreach(pf, i, n) {
        const char *name = sj_str(n, "host", NULL), *machine = sj_str(n, "machine", NULL);
        if (name && machine && suite_node_name_ok(machine) && strcmp(name, machine) != 0 &&
            !json_object_get(hosts, name) && sj_int(answers, machine, 0) == 1)
            json_object_set_new(map, name, json_string(machine));
    }
    json_decref(answers);
    json_decref(hosts);
    return map;
}

/* Each entry's "host" by the machine's one name; the names it replaced are kept on the summary's node
 * ("aliases", by settle_nodes' index), so that the hostfile's name is still found. */
static void canonical_hosts(json_t *entries, const json_t *aliases)
{
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e)
        for (int k = 0; k < 2; k++) { /* a link's other end too (issue 46, item 4) */
            const char *key = k ? "peer_host" : "host", *host = sj_str(e, key, NULL);
            json_t *to = host ? json_object_get(aliases, host) : NULL;
            if (to)
                json_object_set(e, key, to);
        }
}

static int cmp_strings(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* The aliases of each summary node, sorted: what else launchers and hostfiles called it. The map is turned
 * round first ({host: [aliases]}), one pass over it, not one per node. */
static void note_aliases(json_t *nodes, const json_t *aliases)
{
    json_t *by_host = json_object(), *n, *to;
    const char *alias;
    json_object_foreach((json_t *)aliases, alias, to) {
        const char *host = json_string_value(to);
        json_t *list = host ? json_object_get(by_host, host) : NULL;
        if (host && !list)
            json_object_set_new(by_host, host, list = json_array());
        if (list)
            json_array_append_new(list, json_string(alias));
    }
    size_t i;
    json_array_foreach(nodes, i, n) {
        json_t *list = json_object_get(by_host, sj_str(n, "host", ""));
        if (!json_array_size(list))
            continue;
        sort_array(list, cmp_strings);
        json_object_set(n, "aliases", list);
    }
    json_decref(by_host);
}

/* The summary's head: schema, version, run, launcher, options and profile, and the totals filled later. */
static json_t *summary_head(const json_t *reports, const json_t *run, const char *report_dir)
{
    char now[32];
    ga_utc_timestamp(now, sizeof now);
    json_t *s = json_object();
    json_object_set_new(s, "schema", json_string(SUITE_SUMMARY_SCHEMA));
    json_object_set_new(s, "schema_version", json_integer(SUITE_SUMMARY_SCHEMA_VERSION));
    json_object_set_new(s, "gpuaccept_version", json_string(ga_version()));
    /* The run the reports are of (the loader accepts one run only): what monitoring tells runs apart by. */
    const char *run_id = sj_str(run, "run_id", NULL);
    for (size_t k = 0; !run_id && k < json_array_size(reports); k++)
        run_id = sj_str(json_array_get(reports, k), "run_id", NULL);
    json_object_set_new(s, "run_id", run_id ? json_string(run_id) : json_null());
    json_object_set_new(s, "created_utc", json_string(now));
    json_object_set_new(s, "report_dir", report_dir ? json_string(report_dir) : json_null());
    json_t *launcher = json_object_get(run, "launcher");
    /* Without a run record, the launcher the first report names. */
    for (size_t k = 0; !launcher && k < json_array_size(reports); k++)
        launcher = json_object_get(json_array_get(reports, k), "launcher");
    json_object_set_new(s, "launcher", launcher ? json_deep_copy(launcher) : json_null());
    json_object_set_new(s, "options",
                        json_object_get(run, "options") ? json_deep_copy(json_object_get(run, "options"))
                                                        : json_null());
    /* Which profile ran and what it did not cover: a pass means only what was checked. */
    json_t *profile = json_object_get(run, "profile");
    json_object_set_new(s, "profile", json_is_object(profile) ? json_deep_copy(profile) : json_null());
    json_object_set_new(s, "verdict", json_object());
    json_object_set_new(s, "gpu_model", json_null());
    json_object_set_new(s, "node_count", json_integer(0));
    json_object_set_new(s, "gpu_count", json_integer(0));
    json_object_set_new(s, "abnormal_nodes", json_array());
    json_object_set_new(s, "abnormal_links", json_array());
    return s;
}

/* What the programs' reports add to the summary, program after program. */
typedef struct {
    json_t *steps, *findings, *metrics, *nodes, *figures, *headlines, *charts;
} merged_parts;

static void append_tagged(json_t *to, const json_t *from, const char *program, const json_t *rank_hosts)
{
    size_t j;
    json_t *e;
    json_array_foreach(from, j, e)
        json_array_append_new(to, tag_entry(e, program, rank_hosts));
}

static void merge_programs(const json_t *reports, const json_t *run, merged_parts *m)
{
    json_t *index = json_object();
    json_t *programs = program_list(reports, run);
    size_t i;
    json_t *p;
    json_array_foreach(programs, i, p) {
        const char *program = json_string_value(p);
        const json_t *report = find_report(reports, program);
        const json_t *run_step = find_run_step(run, program);
        json_array_append_new(m->steps, make_step(program, report, run_step, m->findings));
        json_object_set_new(m->figures, program,
                            report && json_object_get(report, "summary")
                                ? json_deep_copy(json_object_get(report, "summary"))
                                : json_null());
        if (!report)
            continue;
        merge_nodes(report, program, m->nodes, index);
        json_t *rank_hosts = hosts_by_rank(report);
        append_tagged(m->findings, sj_arr(report, "findings"), program, rank_hosts);
        append_tagged(m->metrics, sj_arr(report, "metrics"), program, rank_hosts);
        append_tagged(m->headlines, sj_arr(report, "headlines"), program, rank_hosts);
        append_tagged(m->charts, sj_arr(report, "charts"), program, rank_hosts);
        json_decref(rank_hosts);
    }
    json_decref(programs);
    json_decref(index);
}

/* The rows' missing indexes from node_health's NVML numbering, matched by bus id. */
static void index_from_nvml(json_t *node)
{
    json_t *map = json_object_get(node, "_nvml"), *g;
    size_t i;
    json_array_foreach(sj_arr(node, "gpus"), i, g) {
        const char *pci = sj_str(g, "pci_bus_id", NULL);
        if (pci && sj_int(g, "gpu", -1) < 0 && sj_is_num(map, pci))
            json_object_set_new(g, "gpu", json_integer(sj_int(map, pci, -1)));
    }
    json_object_del(node, "_nvml");
}

/* Each finding or metric that names its GPU by bus id shows its row's index among the node's GPUs, null
 * where unknown (its own "gpu" was the CUDA ordinal, except node_health's, NVML's). */
static void index_by_row(json_t *entries, const json_t *idx)
{
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e) {
        const char *host = sj_str(e, "host", NULL);
        json_t *node = host ? json_object_get(idx, host) : NULL;
        gpu_ref k = gpu_ref_of(sj_str(e, "pci_bus_id", NULL), -1);
        if (!node || !k.pci[0])
            continue;
        json_t *row = get_gpu(node, &k);
        json_object_set_new(e, "pci_bus_id", json_string(k.pci));
        json_object_set(e, "gpu", json_object_get(row, "gpu"));
    }
}

/* A finding on a GPU no report listed (a GPU that vanished mid-run) still gets its row; the findings and
 * metrics then name their GPU's index as its row does; then the nodes and their GPUs in order. Returns how
 * many GPUs. */
static size_t settle_nodes(json_t *nodes, json_t *findings, json_t *metrics)
{
    json_t *idx = json_object(), *n, *f;
    size_t i;
    json_array_foreach(nodes, i, n)
        json_object_set(idx, sj_str(n, "host", ""), n);
    json_array_foreach(findings, i, f) {
        const char *host = sj_str(f, "host", NULL), *pci = sj_str(f, "pci_bus_id", NULL);
        if (!host)
            continue;
        json_t *node = get_node(nodes, idx, host, sj_int(f, "node_index", -1));
        if (sj_int(f, "gpu", -1) < 0 && !pci)
            continue;
        bool nvml = ga_streq(sj_str(f, "program", NULL), "node_health");
        gpu_ref k = gpu_ref_of(pci, !pci || nvml ? sj_int(f, "gpu", -1) : -1);
        get_gpu(node, &k);
    }
    json_array_foreach(nodes, i, n)
        index_from_nvml(n);
    index_by_row(findings, idx);
    index_by_row(metrics, idx);
    json_decref(idx);
    sort_array(nodes, cmp_nodes);
    size_t gpu_count = 0;
    json_array_foreach(nodes, i, n) {
        sort_array(json_object_get(n, "gpus"), cmp_gpus);
        gpu_count += json_array_size(sj_arr(n, "gpus"));
    }
    return gpu_count;
}

json_t *suite_merge(const json_t *reports, const json_t *run, const char *report_dir)
{
    json_t *s = summary_head(reports, run, report_dir);
    merged_parts m = {json_array(),  json_array(), json_array(), json_array(),
                      json_object(), json_array(), json_array()};
    merge_programs(reports, run, &m);
    merge_not_covered(s, reports);
    suite_kernel_log_not_covered(s, reports); /* nodes whose Xids were not checked (issue 41, item 2) */
    /* A run stopped by SIGINT or SIGTERM: its verdict says so (suite_summary_finalize), never a timeout. */
    const char *stopped = sj_str(run, "interrupted", NULL);
    json_object_set_new(s, "interrupted", stopped ? json_string(stopped) : json_null());
    /* Nodes the preflight kept out of the steps are failures of their own, with why. */
    json_t *excluded = preflight_findings(run, m.findings), *aliases = machine_aliases(reports, run);
    canonical_hosts(m.findings, aliases);
    canonical_hosts(m.metrics, aliases);
    canonical_hosts(excluded, aliases);
    json_object_set_new(s, "excluded_nodes", excluded);
    size_t gpu_count = settle_nodes(m.nodes, m.findings, m.metrics);
    note_aliases(m.nodes, aliases);
    const char *model = majority_model(m.nodes);
    json_object_set_new(s, "gpu_model", model ? json_string(model) : json_null());
    json_object_set_new(s, "node_count", json_integer((json_int_t)json_array_size(m.nodes)));
    json_object_set_new(s, "gpu_count", json_integer((json_int_t)gpu_count));
    json_object_set_new(s, "baseline", json_null());
    json_object_set_new(s, "steps", m.steps);
    json_object_set_new(s, "nodes", m.nodes);
    json_object_set_new(s, "findings", m.findings);
    json_object_set_new(s, "metrics", m.metrics);
    json_object_set_new(s, "figures", m.figures);
    json_object_set_new(s, "headlines", m.headlines);
    json_object_set_new(s, "charts", m.charts);
    suite_links_mark(s, aliases); /* a slow link names both ends, not a node (issue 44, item 6) */
    json_decref(aliases);
    suite_fabric_merge(s, reports); /* the transport per node; "InfiniBand not exercised" (issue 25) */
    suite_summary_finalize(s);
    return s;
}
