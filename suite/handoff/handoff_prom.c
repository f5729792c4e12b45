/* gpuaccept.prom and gpuaccept-nodes/<host>.prom: the verdict and the figures in Prometheus' text format,
 * for node-exporter's textfile collector. Every figure is a metric of its own, named after its program and
 * metric, in base units (bytes per second, FLOP/s, seconds, ratios), as Prometheus names metrics. Format:
 * docs/handoff.md. */
#include "handoff.h"
#include "merge.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ga_pci.h"
#include "ga_str.h"
#include "ga_text.h"
#include "suite_util.h"

/* ---- names and units ---- */

/* A unit as the programs write it, its factor to the base unit, the base unit's suffix, and the words a
 * metric name uses for the unit it is in ("tflops_bf16", "GBps_device_copy", "step_time_ms"), dropped from
 * the name so that the suffix says the unit once. */
static const struct {
    const char *unit;
    double scale;
    const char *suffix;
    const char *drop[3];
} units[] = {
    {"GB/s", 1e9, "bytes_per_second", {"gbps", "gb_s", NULL}},
    {"MB/s", 1e6, "bytes_per_second", {"mbps", "mb_s", NULL}},
    {"B", 1, "bytes", {"bytes", "b", NULL}},
    {"TFLOP/s", 1e12, "flops", {"tflops", NULL, NULL}},
    {"TOP/s", 1e12, "ops", {"tops", "tflops", NULL}},
    {"s", 1, "seconds", {"s", "sec", NULL}},
    {"ms", 1e-3, "seconds", {"ms", NULL, NULL}},
    {"us", 1e-6, "seconds", {"us", NULL, NULL}},
    {"fraction", 1, "ratio", {"fraction", NULL, NULL}},
    {"%", 0.01, "ratio", {"pct", "percent", NULL}},
    {"samples/s", 1, "samples_per_second", {"samples_per_s", NULL, NULL}},
    {"tokens/s", 1, "tokens_per_second", {"tokens_per_s", NULL, NULL}},
};

/* s lower-cased, with every run of characters a metric name may not hold made one '_', trimmed. */
static void snake(const char *s, char *out, size_t len)
{
    size_t n = 0;
    for (; s && *s && n + 1 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c))
            out[n++] = (char)tolower(c);
        else if (n && out[n - 1] != '_')
            out[n++] = '_';
    }
    while (n && out[n - 1] == '_')
        n--;
    out[n] = '\0';
}

/* Removes word (one or more '_'-joined tokens) from the '_'-joined name wherever it stands whole. */
static void drop_word(char *name, const char *word)
{
    size_t wl = strlen(word);
    char *p = name;
    while ((p = strstr(p, word)) != NULL) {
        bool starts = p == name || p[-1] == '_', ends = p[wl] == '\0' || p[wl] == '_';
        if (!starts || !ends) {
            p++;
            continue;
        }
        char *rest = p + wl + (p[wl] == '_');
        memmove(p, rest, strlen(rest) + 1);
    }
    size_t n = strlen(name);
    while (n && name[n - 1] == '_')
        name[--n] = '\0';
}

/* The series name of a program's metric and the factor to its base unit: gemm_flops tflops_bf16 [TFLOP/s]
 * is gpuaccept_gemm_flops_bf16_flops, mem_bw GBps_device_copy [GB/s] gpuaccept_mem_bw_device_copy_bytes_per_
 * second. A unit not in the table is kept as the suffix, factor 1. */
static double metric_name(const char *program, const char *metric, const char *unit, char *out, size_t len)
{
    char prog[128], name[160], suffix[64] = "";
    double scale = 1;
    snake(program, prog, sizeof prog);
    snake(metric, name, sizeof name);
    size_t u = 0, n_units = sizeof units / sizeof units[0];
    while (u < n_units && !ga_streq(units[u].unit, unit))
        u++;
    if (u < n_units) {
        for (int k = 0; k < 3 && units[u].drop[k]; k++)
            drop_word(name, units[u].drop[k]);
        snprintf(suffix, sizeof suffix, "%s", units[u].suffix);
        scale = units[u].scale;
    } else {
        snake(unit, suffix, sizeof suffix);
    }
    snprintf(out, len, "gpuaccept_%s%s%s%s%s", prog, *name ? "_" : "", name, *suffix ? "_" : "", suffix);
    return scale;
}

/* Text for the exposition format, label values and HELP alike (help: a HELP line, where '"' stands as
 * is): valid UTF-8 (a byte that is not, and any other control character, as the text "\xHH", its backslash
 * escaped), with backslash, newline and, in a label value, the double quote escaped as the format requires.
 * Any length: a line is as long as its labels (issue 45, item 2). */
static void prom_escaped(sbuf *b, const char *s, bool help)
{
    while (s && *s) {
        size_t run =
            0; /* printable ASCII with nothing to escape: in one piece, as a series has many labels */
        while (s[run] >= 0x20 && s[run] < 0x7f && s[run] != '\\' && s[run] != '"')
            run++;
        if (run) {
            sbuf_printf(b, "%.*s", (int)run, s);
            s += run;
            continue;
        }
        size_t k = ga_utf8_seq(s);
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == '\n' || (c == '"' && !help))
            sbuf_puts(b, c == '\n' ? "\\n" : c == '"' ? "\\\"" : "\\\\");
        else if (k == 0 || c < 0x20 || c == 0x7f)
            sbuf_printf(b, "\\\\x%02X", (unsigned)c);
        else
            sbuf_printf(b, "%.*s", (int)k, s);
        s += k ? k : 1;
    }
}

/* A label value, as the text format requires it. */
static void sbuf_promq(sbuf *b, const char *s)
{
    prom_escaped(b, s, false);
}

/* HELP text, as the text format requires it. */
static void help_text(sbuf *b, const char *s)
{
    prom_escaped(b, s, true);
}

/* ---- families ---- */

/* The series of one text file, by family: a family's lines must stand together under one HELP and TYPE,
 * and a series (name and labels) may appear once. */
typedef struct {
    json_t *order;  /* family names, first seen first */
    json_t *family; /* name -> {help, lines: [...], seen: {labels: true}} */
    bool failed;    /* a series could not be kept (out of memory): no file rather than one short of it */
} prom_set;

static void add_series(prom_set *p, const char *name, const char *help, const char *labels, double value)
{
    json_t *f = json_object_get(p->family, name);
    if (!f) {
        sbuf h; /* escaped here, once: the text is valid UTF-8, which jansson requires */
        sbuf_init(&h);
        help_text(&h, help);
        f = json_pack("{s:s, s:[], s:{}}", "help", sbuf_str(&h), "lines", "seen");
        p->failed |= h.failed || !f || json_object_set_new(p->family, name, f) != 0 ||
                     json_array_append_new(p->order, json_string(name)) != 0;
        sbuf_free(&h);
        if (!f)
            return;
    }
    if (json_object_get(json_object_get(f, "seen"), labels))
        return;
    json_object_set_new(json_object_get(f, "seen"), labels, json_true());
    sbuf line; /* no fixed buffer: a cut line leaves a label value open (issue 45, item 2) */
    sbuf_init(&line);
    sbuf_printf(&line, "%s%s%s%s %.17g", name, *labels ? "{" : "", labels, *labels ? "}" : "", value);
    if (line.failed || json_array_append_new(json_object_get(f, "lines"), json_string(sbuf_str(&line))) != 0)
        p->failed = true;
    sbuf_free(&line);
}

/* labels: "node=\"h\"" and the like, built in b; the text is copied by add_series. */
static void node_label(sbuf *b, const char *host)
{
    sbuf_puts(b, "node=\"");
    sbuf_promq(b, host);
    sbuf_puts(b, "\"");
}

static int verdict_value(const char *v)
{
    return ga_streq(v, "fail") ? 2 : ga_streq(v, "warn") ? 1 : 0;
}

/* host NULL: the whole run; else what concerns that node. */
static bool concerns(const json_t *entry, const char *host)
{
    return !host || ga_streq(sj_str(entry, "host", NULL), host);
}

/* Unix time of "YYYY-MM-DDTHH:MM:SSZ", or NAN. */
static double utc_seconds(const char *stamp)
{
    struct tm tm = {0};
    const char *end = stamp ? strptime(stamp, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
    return end && !*end ? (double)timegm(&tm) : NAN;
}

static void run_series(prom_set *p, const json_t *s, const char *host)
{
    const json_t *v = json_object_get(s, "verdict");
    sbuf l;
    sbuf_init(&l);
    sbuf_puts(&l, "run_id=\"");
    sbuf_promq(&l, sj_str(s, "run_id", ""));
    sbuf_puts(&l, "\",profile=\"");
    sbuf_promq(&l, sj_str(json_object_get(s, "profile"), "name", ""));
    sbuf_puts(&l, "\",version=\"");
    sbuf_promq(&l, sj_str(s, "gpuaccept_version", ""));
    sbuf_puts(&l, "\"");
    add_series(p, "gpuaccept_info", "The gpuaccept run the series of this file are of (always 1).",
               sbuf_str(&l), 1);
    sbuf_free(&l);
    double t = utc_seconds(sj_str(s, "created_utc", NULL));
    if (isfinite(t))
        add_series(p, "gpuaccept_run_timestamp_seconds", "When the run's verdict was reached, in Unix time.",
                   "", t);
    add_series(p, "gpuaccept_run_exit_code",
               "Exit code of the run (0 pass, 1 a check failed, 2-5 a step could not measure or the hand-off "
               "failed).",
               "", (double)sj_int(v, "exit_code", -1));
    if (!host)
        add_series(p, "gpuaccept_run_abnormal_nodes", "Nodes that failed acceptance in the run.", "",
                   (double)sj_int(v, "abnormal_node_count", 0));
    if (!host)
        add_series(p, "gpuaccept_run_abnormal_links",
                   "Links (the link or path between two nodes fine with their other partners) that failed "
                   "acceptance in the run.",
                   "", (double)json_array_size(sj_arr(s, "abnormal_links")));
}

/* Each abnormal link, by its two ends and code (in a node's file, the links it is an end of): the link's,
 * not either node's, so neither end's verdict or faults carry it (issue 44, item 6). */
static void link_series(prom_set *p, const json_t *s, const char *host)
{
    size_t i, j;
    json_t *l, *code;
    json_array_foreach(sj_arr(s, "abnormal_links"), i, l) {
        const json_t *hosts = json_object_get(l, "hosts");
        const char *a = json_string_value(json_array_get(hosts, 0)),
                   *b = json_string_value(json_array_get(hosts, 1));
        if (host && !ga_streq(a, host) && !ga_streq(b, host))
            continue;
        json_array_foreach(sj_arr(l, "fault_codes"), j, code) {
            sbuf lb;
            sbuf_init(&lb);
            sbuf_puts(&lb, "node_a=\"");
            sbuf_promq(&lb, a);
            sbuf_puts(&lb, "\",node_b=\"");
            sbuf_promq(&lb, b);
            sbuf_puts(&lb, "\",code=\"");
            sbuf_promq(&lb, json_string_value(code));
            sbuf_puts(&lb, "\"");
            p->failed |= lb.failed;
            add_series(
                p, "gpuaccept_abnormal_link",
                "An abnormal link (1): the link or path between node_a and node_b, whose nodes are fine "
                "with their other partners; left to the fabric team, neither node is failed for it.",
                sbuf_str(&lb), 1);
            sbuf_free(&lb);
        }
    }
}

/* A GPU row's labels: its index where known, its PCI bus id where the reports have it (the one name that
 * tells the GPUs of a node apart when each rank is bound to one GPU, issue 40, finding 4). */
static void gpu_labels(const json_t *g, const char *node, sbuf *b)
{
    sbuf_puts(b, node);
    if (sj_int(g, "gpu", -1) >= 0)
        sbuf_printf(b, ",gpu=\"%lld\"", sj_int(g, "gpu", -1));
    char pci[GA_PCI_BUS_ID_LEN]; /* the merge keeps it in normal form: nothing in it to escape */
    if (ga_pci_normalise(sj_str(g, "pci_bus_id", NULL), pci, sizeof pci) == 0)
        sbuf_printf(b, ",pci_bus_id=\"%s\"", pci);
}

static void verdict_series(prom_set *p, const json_t *s, const char *host)
{
    size_t i, j;
    json_t *node, *g;
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        if (!concerns(node, host))
            continue;
        sbuf l;
        sbuf_init(&l);
        node_label(&l, sj_str(node, "host", ""));
        add_series(p, "gpuaccept_node_verdict", "Verdict of a node: 0 pass, 1 warn, 2 fail.", sbuf_str(&l),
                   verdict_value(sj_str(node, "verdict", "")));
        json_array_foreach(sj_arr(node, "gpus"), j, g) {
            sbuf gl;
            sbuf_init(&gl);
            gpu_labels(g, sbuf_str(&l), &gl);
            p->failed |= gl.failed;
            add_series(p, "gpuaccept_gpu_verdict", "Verdict of a GPU: 0 pass, 1 warn, 2 fail.", sbuf_str(&gl),
                       verdict_value(sj_str(g, "verdict", "")));
            sbuf_free(&gl);
        }
        sbuf_free(&l);
    }
}

/* Findings (warnings and failures) counted by node and code. */
static void fault_series(prom_set *p, const json_t *s, const char *host)
{
    json_t *counts = json_object(), *order = json_array();
    size_t i;
    json_t *f;
    json_array_foreach(sj_arr(s, "findings"), i, f) {
        const char *sev = sj_str(f, "severity", "");
        if ((!ga_streq(sev, "fail") && !ga_streq(sev, "warn")) || !concerns(f, host) ||
            json_object_get(f, "link")) /* a link's: gpuaccept_abnormal_link */
            continue;
        sbuf key;
        sbuf_init(&key);
        node_label(&key, sj_str(f, "host", ""));
        sbuf_puts(&key, ",code=\"");
        sbuf_promq(&key, sj_str(f, "code", "?"));
        sbuf_puts(&key, "\"");
        json_t *c = json_object_get(counts, sbuf_str(&key));
        if (c) {
            json_integer_set(c, json_integer_value(c) + 1);
        } else {
            json_object_set_new(counts, sbuf_str(&key), json_integer(1));
            json_array_append_new(order, json_string(sbuf_str(&key)));
        }
        sbuf_free(&key);
    }
    json_t *k;
    json_array_foreach(order, i, k)
        add_series(p, "gpuaccept_faults",
                   "Findings (warnings and failures) of the run by node and fault code; node is empty for a "
                   "finding of the whole job.",
                   json_string_value(k),
                   (double)json_integer_value(json_object_get(counts, json_string_value(k))));
    json_decref(counts);
    json_decref(order);
}

/* Every figure: a node's with its node (and GPU or rank) label; in the whole run's file, the job's own
 * figures (busbw of the world sweep, samples/s) without one. */
static void figure_series(prom_set *p, const json_t *s, const char *host)
{
    size_t i;
    json_t *m;
    json_array_foreach(sj_arr(s, "metrics"), i, m) {
        const char *mhost = sj_str(m, "host", NULL);
        if (!sj_is_num(m, "value") || (host && !ga_streq(mhost, host)))
            continue;
        char name[320];
        const char *program = sj_str(m, "program", "?"), *metric = sj_str(m, "name", "?");
        const char *unit = sj_str(m, "unit", "");
        double scale = metric_name(program, metric, unit, name, sizeof name);
        sbuf help;
        sbuf_init(&help);
        sbuf_printf(&help, "%s %s, measured in %s, here in base units.", program, metric,
                    *unit ? unit : "no unit");
        sbuf l;
        sbuf_init(&l);
        if (mhost)
            node_label(&l, mhost);
        if (mhost && sj_int(m, "gpu", -1) >= 0)
            sbuf_printf(&l, ",gpu=\"%lld\"", sj_int(m, "gpu", -1));
        char pci[GA_PCI_BUS_ID_LEN]; /* in normal form, or not at all: nothing in it to escape */
        if (mhost && ga_pci_normalise(sj_str(m, "pci_bus_id", NULL), pci, sizeof pci) == 0)
            sbuf_printf(&l, ",pci_bus_id=\"%s\"", pci);
        if (mhost && sj_int(m, "rank", -1) >= 0)
            sbuf_printf(&l, ",rank=\"%lld\"", sj_int(m, "rank", -1));
        p->failed |= help.failed || l.failed;
        add_series(p, name, sbuf_str(&help), sbuf_str(&l), sj_num(m, "value", 0) * scale);
        sbuf_free(&l);
        sbuf_free(&help);
    }
}

static char *prom_text(const json_t *s, const char *host)
{
    prom_set p = {json_array(), json_object(), false};
    run_series(&p, s, host);
    verdict_series(&p, s, host);
    fault_series(&p, s, host);
    link_series(&p, s, host);
    figure_series(&p, s, host);
    sbuf b;
    sbuf_init(&b);
    size_t i, j;
    json_t *name, *line;
    json_array_foreach(p.order, i, name) {
        const char *n = json_string_value(name);
        json_t *f = json_object_get(p.family, n);
        sbuf_printf(&b, "# HELP %s %s", n, sj_str(f, "help", "")); /* escaped by add_series */
        sbuf_printf(&b, "\n# TYPE %s gauge\n", n);
        json_array_foreach(sj_arr(f, "lines"), j, line)
            sbuf_printf(&b, "%s\n", json_string_value(line));
    }
    json_decref(p.order);
    json_decref(p.family);
    char *out = b.failed || p.failed ? NULL : strdup(sbuf_str(&b));
    sbuf_free(&b);
    return out;
}

char *suite_handoff_prom(const json_t *s)
{
    return prom_text(s, NULL);
}

char *suite_handoff_prom_node(const json_t *s, const char *host)
{
    return prom_text(s, host);
}

/* A host as a file name: what a name may not hold ('/', a leading '.') becomes '_'. */
static void host_file_name(const char *host, char *out, size_t len)
{
    snprintf(out, len, "%s", *host ? host : "_");
    for (char *c = out; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '-' || *c == '_' || (*c == '.' && c != out)))
            *c = '_';
}

/* The summary as one node's file reads it: the same head, with only that node's nodes, findings and metrics
 * (shallow copies, made in one pass over each list): a file per node then reads its own entries, not every
 * entry of the run (1,024 nodes x 8 GPUs: issue 44, item 7). {host: view}, new reference. */
static json_t *node_views(const json_t *s)
{
    static const char *const lists[] = {"nodes", "findings", "metrics"};
    json_t *views = json_object(), *e;
    size_t i;
    json_array_foreach(sj_arr(s, "nodes"), i, e) {
        const char *host = sj_str(e, "host", "");
        if (json_object_get(views, host))
            continue;
        json_t *v = json_copy((json_t *)s); /* shallow: the values are shared, not copied */
        for (size_t k = 0; v && k < 3; k++)
            json_object_set_new(v, lists[k], json_array());
        if (v)
            json_object_set_new(views, host, v);
    }
    for (size_t k = 0; k < 3; k++)
        json_array_foreach(sj_arr(s, lists[k]), i, e) {
            json_t *v = json_object_get(views, sj_str(e, "host", ""));
            if (v && sj_str(e, "host", NULL))
                json_array_append(json_object_get(v, lists[k]), e);
        }
    return views;
}

/* gpuaccept-nodes/<host>.prom for each node, and none left from an earlier run of other nodes. */
int suite_handoff_prom_nodes_write(const json_t *s, const char *dir, char *err, size_t errlen)
{
    char sub[4096], path[4400], file[200];
    snprintf(sub, sizeof sub, "%s/%s", dir, SUITE_PROM_NODE_DIR);
    if (mkdir(sub, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", sub, strerror(errno));
        return -1;
    }
    DIR *d = opendir(sub);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".prom") == 0) {
            snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
    json_t *views = node_views(s);
    size_t i;
    json_t *node;
    int rc = 0;
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *host = sj_str(node, "host", "");
        const json_t *view = json_object_get(views, host);
        char *text = view ? suite_handoff_prom_node(view, host) : NULL;
        host_file_name(host, file, sizeof file);
        snprintf(path, sizeof path, "%s/%s.prom", sub, file);
        rc = text ? suite_write_text_atomic(path, text, err, errlen) : -1;
        if (!text)
            snprintf(err, errlen, "out of memory writing %s", path);
        free(text);
        if (rc != 0)
            break;
    }
    json_decref(views);
    return rc;
}
