#include "handoff.h"
#include "merge.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "escape.h"
#include "ga_str.h"
#include "suite_util.h"

/* ---- hostlists, the Slurm way ---- */

typedef struct {
    const char *host;
    size_t plen;        /* length of the prefix; the whole name when it has no trailing number */
    const char *digits; /* the trailing number as written, or NULL */
    unsigned long long value;
} hl_item;

static int cmp_items(const void *a, const void *b)
{
    const hl_item *x = a, *y = b;
    size_t m = x->plen < y->plen ? x->plen : y->plen;
    int c = strncmp(x->host, y->host, m);
    if (c)
        return c;
    if (x->plen != y->plen)
        return x->plen < y->plen ? -1 : 1;
    if (!x->digits || !y->digits)
        return (x->digits != NULL) - (y->digits != NULL);
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return strcmp(x->digits, y->digits);
}

/* A number written with a leading zero keeps its width; Slurm joins "9" and "10" in one range, "09" and
 * "10" too (same width), but never "1" and "01". */
static bool padded(const char *d)
{
    return d[0] == '0' && d[1];
}

static bool joins(const hl_item *a, const hl_item *b)
{
    size_t wa = strlen(a->digits), wb = strlen(b->digits);
    return b->value == a->value + 1 && (wa == wb || (!padded(a->digits) && !padded(b->digits)));
}

/* The text of b as a new string (NULL when b failed); frees b. */
static char *finish(sbuf *b)
{
    char *s = b->failed ? NULL : strdup(sbuf_str(b));
    sbuf_free(b);
    return s;
}

char *suite_hostlist_compress(const char *const *hosts, size_t n)
{
    hl_item *it = calloc(n ? n : 1, sizeof *it);
    if (!it)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *h = hosts[i];
        size_t len = strlen(h), p = len;
        while (p > 0 && isdigit((unsigned char)h[p - 1]))
            p--;
        /* A number of more than 18 digits would not fit: such a name stays whole. */
        bool num = p < len && len - p <= 18;
        hl_item x = {h, num ? p : len, num ? h + p : NULL, num ? strtoull(h + p, NULL, 10) : 0};
        bool dup = false;
        for (size_t j = 0; j < m && !dup; j++) /* duplicates are rare and lists short: a scan will do */
            dup = strcmp(it[j].host, h) == 0;
        if (!dup)
            it[m++] = x;
    }
    qsort(it, m, sizeof *it, cmp_items);
    sbuf b;
    sbuf_init(&b);
    for (size_t i = 0; i < m;) {
        if (i)
            sbuf_puts(&b, ",");
        size_t g = i + 1; /* the group: the same prefix, each with a number */
        while (it[i].digits && g < m && it[g].digits && it[g].plen == it[i].plen &&
               strncmp(it[g].host, it[i].host, it[i].plen) == 0)
            g++;
        if (g - i == 1) {
            sbuf_puts(&b, it[i].host);
            i = g;
            continue;
        }
        sbuf_printf(&b, "%.*s[", (int)it[i].plen, it[i].host);
        for (size_t r = i; r < g;) {
            size_t e = r;
            while (e + 1 < g && joins(&it[e], &it[e + 1]))
                e++;
            sbuf_printf(&b, "%s%s", r > i ? "," : "", it[r].digits);
            if (e > r)
                sbuf_printf(&b, "-%s", it[e].digits);
            r = e + 1;
        }
        sbuf_puts(&b, "]");
        i = g;
    }
    free(it);
    return finish(&b);
}

/* ---- helpers ---- */

/* s in single quotes for a POSIX shell. */
static void sbuf_shq(sbuf *b, const char *s)
{
    sbuf_puts(b, "'");
    while (*s) {
        size_t run = strcspn(s, "'");
        if (run)
            sbuf_printf(b, "%.*s", (int)run, s);
        s += run;
        if (*s) {
            sbuf_puts(b, "'\\''");
            s++;
        }
    }
    sbuf_puts(b, "'");
}

/* A Prometheus label value: backslash, double quote and newline escaped. */
static void sbuf_promq(sbuf *b, const char *s)
{
    while (s && *s) {
        size_t run = strcspn(s, "\\\"\n"); /* written as is, in one piece: a series has many labels */
        if (run)
            sbuf_printf(b, "%.*s", (int)run, s);
        s += run;
        if (*s)
            sbuf_puts(b, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\");
        s += *s != '\0';
    }
}

static int verdict_value(const char *v)
{
    return ga_streq(v, "fail") ? 2 : ga_streq(v, "warn") ? 1 : 0;
}

/* The fault codes of a node, joined with commas. */
static void join_codes(sbuf *b, const json_t *node)
{
    size_t i;
    json_t *c;
    json_array_foreach(sj_arr(node, "fault_codes"), i, c)
        sbuf_printf(b, "%s%s", i ? "," : "", json_string_value(c));
}

/* ---- Slurm: drain.sh ---- */

char *suite_handoff_drain(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    sbuf_puts(&b,
              "#!/bin/sh\n# gpuaccept: drains the nodes that failed acceptance, one line per distinct set of "
              "fault codes.\n# Written by gpuaccept from summary.json; `gpuaccept run --drain` runs it.\n"
              "set -e\n");
    const json_t *nodes = sj_arr(s, "nodes");
    size_t n = json_array_size(nodes), drained = 0;
    bool *done = calloc(n ? n : 1, sizeof *done);
    const char **hosts = calloc(n ? n : 1, sizeof *hosts);
    if (!done || !hosts) {
        free(done);
        free(hosts);
        sbuf_free(&b);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *node = json_array_get(nodes, i);
        if (done[i] || !ga_streq(sj_str(node, "verdict", ""), "fail"))
            continue;
        sbuf reason;
        sbuf_init(&reason);
        join_codes(&reason, node);
        size_t k = 0;
        for (size_t j = i; j < n; j++) {
            const json_t *o = json_array_get(nodes, j);
            if (done[j] || !ga_streq(sj_str(o, "verdict", ""), "fail"))
                continue;
            sbuf other;
            sbuf_init(&other);
            join_codes(&other, o);
            if (strcmp(sbuf_str(&other), sbuf_str(&reason)) == 0) {
                done[j] = true;
                hosts[k++] = sj_str(o, "host", "");
            }
            sbuf_free(&other);
        }
        char *hl = suite_hostlist_compress(hosts, k);
        char why[1024];
        snprintf(why, sizeof why, "gpuaccept: %s", sbuf_str(&reason));
        sbuf_puts(&b, "scontrol update NodeName=");
        sbuf_shq(&b, hl ? hl : "");
        sbuf_puts(&b, " State=DRAIN Reason=");
        sbuf_shq(&b, why);
        sbuf_puts(&b, "\n");
        drained += k;
        free(hl);
        sbuf_free(&reason);
    }
    if (!drained)
        sbuf_puts(&b, "# no node failed: nothing to drain\n");
    free(done);
    free(hosts);
    return finish(&b);
}

/* ---- Kubernetes ---- */

char *suite_handoff_k8s_script(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    sbuf_puts(&b, "#!/bin/sh\n# gpuaccept: labels every node with its verdict (" SUITE_K8S_KEY
                  "=pass|warn|fail) and taints failed nodes NoSchedule;\n# a node that no longer fails loses "
                  "the taint. Written by gpuaccept from summary.json; `gpuaccept run --apply-k8s` runs it.\n"
                  "set -e\nKUBECTL=${KUBECTL:-kubectl}\n");
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node)
    {
        const char *host = sj_str(node, "host", ""), *v = sj_str(node, "verdict", "fail");
        /* The name after "--": whatever it is, kubectl never reads it as an option (node_name.h). */
        sbuf_puts(&b, "\"$KUBECTL\" label node --overwrite -- ");
        sbuf_shq(&b, host);
        sbuf_printf(&b, " " SUITE_K8S_KEY "=%s\n", v);
        if (ga_streq(v, "fail")) {
            sbuf_puts(&b, "\"$KUBECTL\" taint node --overwrite -- ");
            sbuf_shq(&b, host);
            sbuf_puts(&b, " " SUITE_K8S_KEY "=fail:NoSchedule\n");
        } else {
            /* Removing a taint the node does not carry is an error to kubectl: not to us. */
            sbuf_puts(&b, "\"$KUBECTL\" taint node -- ");
            sbuf_shq(&b, host);
            sbuf_puts(&b, " " SUITE_K8S_KEY ":NoSchedule- 2>/dev/null || true\n");
        }
    }
    return finish(&b);
}

json_t *suite_handoff_k8s_patches(const json_t *s)
{
    json_t *list = json_array();
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node)
    {
        const char *v = sj_str(node, "verdict", "fail");
        /* RFC 6902: "~1" is the "/" of the label key. "add" replaces a label that exists. */
        json_t *patch = json_pack("[{s:s, s:s, s:s}]", "op", "add", "path",
                                  "/metadata/labels/gpuaccept.io~1verdict", "value", v);
        if (ga_streq(v, "fail"))
            json_array_append_new(patch, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "op", "add", "path",
                                                   "/spec/taints/-", "value", "key", SUITE_K8S_KEY, "value",
                                                   "fail", "effect", "NoSchedule"));
        json_array_append_new(list, json_pack("{s:s, s:s, s:o}", "node", sj_str(node, "host", ""), "verdict",
                                              v, "patch", patch));
    }
    return list;
}

/* ---- Prometheus textfile ---- */

static void prom_head(sbuf *b, const char *name, const char *help)
{
    sbuf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

char *suite_handoff_prom(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    const json_t *v = json_object_get(s, "verdict");
    prom_head(&b, "gpuaccept_run_exit_code",
              "Exit code of the last gpuaccept run (0 pass, 1 a check failed, 2-5 a "
              "step could not measure).");
    sbuf_printf(&b, "gpuaccept_run_exit_code %lld\n", sj_int(v, "exit_code", -1));
    prom_head(&b, "gpuaccept_run_abnormal_nodes", "Nodes that failed acceptance in the last run.");
    sbuf_printf(&b, "gpuaccept_run_abnormal_nodes %lld\n", sj_int(v, "abnormal_node_count", 0));

    size_t i, j;
    json_t *node, *g, *f, *m;
    prom_head(&b, "gpuaccept_node_verdict", "Verdict of a node: 0 pass, 1 warn, 2 fail.");
    json_array_foreach(sj_arr(s, "nodes"), i, node)
    {
        sbuf_puts(&b, "gpuaccept_node_verdict{node=\"");
        sbuf_promq(&b, sj_str(node, "host", ""));
        sbuf_printf(&b, "\"} %d\n", verdict_value(sj_str(node, "verdict", "")));
    }
    prom_head(&b, "gpuaccept_gpu_verdict", "Verdict of a GPU: 0 pass, 1 warn, 2 fail.");
    json_array_foreach(sj_arr(s, "nodes"), i, node)
        json_array_foreach(sj_arr(node, "gpus"), j, g)
        {
            sbuf_puts(&b, "gpuaccept_gpu_verdict{node=\"");
            sbuf_promq(&b, sj_str(node, "host", ""));
            sbuf_printf(&b, "\",gpu=\"%lld\"} %d\n", sj_int(g, "gpu", -1),
                        verdict_value(sj_str(g, "verdict", "")));
        }

    /* Findings (warnings and failures) counted by node and code. */
    json_t *counts = json_object(), *order = json_array();
    json_array_foreach(sj_arr(s, "findings"), i, f)
    {
        const char *sev = sj_str(f, "severity", "");
        if (!ga_streq(sev, "fail") && !ga_streq(sev, "warn"))
            continue;
        sbuf key;
        sbuf_init(&key);
        sbuf_puts(&key, "node=\"");
        sbuf_promq(&key, sj_str(f, "host", ""));
        sbuf_puts(&key, "\",code=\"");
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
    prom_head(&b, "gpuaccept_faults",
              "Findings (warnings and failures) of the last run by node and fault code; "
              "node is empty for a finding of the whole job.");
    json_t *k;
    json_array_foreach(order, i, k)
        sbuf_printf(&b, "gpuaccept_faults{%s} %lld\n", json_string_value(k),
                    (long long)json_integer_value(json_object_get(counts, json_string_value(k))));
    json_decref(counts);
    json_decref(order);

    /* Every measured figure that names where it was measured: TFLOP/s, GB/s, busbw, ... A series repeated
     * with the same labels is written once (a textfile may not hold a series twice). */
    prom_head(&b, "gpuaccept_measurement",
              "A figure measured by a gpuaccept program on a node (and GPU or rank), "
              "in the unit its label names.");
    json_t *seen = json_object();
    json_array_foreach(sj_arr(s, "metrics"), i, m)
    {
        if (!sj_is_num(m, "value") || !sj_str(m, "host", NULL))
            continue;
        sbuf l;
        sbuf_init(&l);
        sbuf_puts(&l, "program=\"");
        sbuf_promq(&l, sj_str(m, "program", "?"));
        sbuf_puts(&l, "\",metric=\"");
        sbuf_promq(&l, sj_str(m, "name", "?"));
        sbuf_puts(&l, "\",unit=\"");
        sbuf_promq(&l, sj_str(m, "unit", ""));
        sbuf_puts(&l, "\",node=\"");
        sbuf_promq(&l, sj_str(m, "host", ""));
        sbuf_puts(&l, "\"");
        if (sj_int(m, "gpu", -1) >= 0)
            sbuf_printf(&l, ",gpu=\"%lld\"", sj_int(m, "gpu", -1));
        if (sj_int(m, "rank", -1) >= 0)
            sbuf_printf(&l, ",rank=\"%lld\"", sj_int(m, "rank", -1));
        if (!json_object_get(seen, sbuf_str(&l))) {
            json_object_set_new(seen, sbuf_str(&l), json_true());
            sbuf_printf(&b, "gpuaccept_measurement{%s} %.17g\n", sbuf_str(&l), sj_num(m, "value", 0));
        }
        sbuf_free(&l);
    }
    json_decref(seen);
    return finish(&b);
}

/* ---- JUnit XML ---- */

char *suite_handoff_junit(const json_t *s)
{
    /* The findings of each host, once, so a test case does not scan them all. */
    json_t *by_host = suite_findings_by_host(sj_arr(s, "findings"));
    size_t i, j;
    json_t *st, *node;
    sbuf b;
    sbuf_init(&b);
    const json_t *v = json_object_get(s, "verdict");
    sbuf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    sbuf_printf(&b, "<testsuites name=\"gpuaccept\" failures=\"%lld\">\n",
                sj_int(v, "abnormal_node_count", 0));
    json_array_foreach(sj_arr(s, "steps"), i, st)
    {
        const char *program = sj_str(st, "program", "?");
        sbuf cases;
        sbuf_init(&cases);
        int tests = 0, failures = 0, skipped = 0;
        json_array_foreach(sj_arr(s, "nodes"), j, node)
        {
            const char *host = sj_str(node, "host", "");
            const char *check = sj_str(json_object_get(node, "checks"), program, "not_run");
            tests++;
            sbuf_puts(&cases, "    <testcase classname=\"gpuaccept.");
            sbuf_html(&cases, program);
            sbuf_puts(&cases, "\" name=\"");
            sbuf_html(&cases, host);
            sbuf_puts(&cases, "\">");
            if (ga_streq(check, "pass") || ga_streq(check, "warn")) {
                /* A warning passes; it is told in the output. */
            } else if (ga_streq(check, "fail") || ga_streq(check, "crashed") || ga_streq(check, "timeout") ||
                       ga_streq(check, "env_error") || ga_streq(check, "internal_error") ||
                       ga_streq(check, "usage_error") || ga_streq(check, "interrupted")) {
                failures++;
                sbuf_puts(&cases, "<failure type=\"");
                sbuf_html(&cases, check);
                sbuf_puts(&cases, "\" message=\"");
                size_t k, shown = 0;
                json_t *e;
                sbuf text;
                sbuf_init(&text);
                json_array_foreach(json_object_get(by_host, host), k, e)
                {
                    if (!ga_streq(sj_str(e, "program", ""), program) ||
                        !ga_streq(sj_str(e, "severity", ""), "fail"))
                        continue;
                    if (!shown++)
                        sbuf_html(&cases, sj_str(e, "code", "?"));
                    sbuf_printf(&text, "%s: %s\n", sj_str(e, "code", "?"), sj_str(e, "message", ""));
                }
                if (!shown)
                    sbuf_html(&cases, check);
                sbuf_puts(&cases, "\">");
                sbuf_html(&cases, sbuf_str(&text));
                sbuf_puts(&cases, "</failure>");
                sbuf_free(&text);
            } else {
                skipped++;
                sbuf_puts(&cases, "<skipped message=\"");
                sbuf_html(&cases, check);
                sbuf_puts(&cases, "\"/>");
            }
            if (ga_streq(check, "warn")) {
                sbuf_puts(&cases, "<system-out>");
                size_t k;
                json_t *e;
                json_array_foreach(json_object_get(by_host, host), k, e)
                    if (ga_streq(sj_str(e, "program", ""), program)) {
                        sbuf_html(&cases, sj_str(e, "code", "?"));
                        sbuf_puts(&cases, ": ");
                        sbuf_html(&cases, sj_str(e, "message", ""));
                        sbuf_puts(&cases, "\n");
                    }
                sbuf_puts(&cases, "</system-out>");
            }
            sbuf_puts(&cases, "</testcase>\n");
        }
        sbuf_puts(&b, "  <testsuite name=\"");
        sbuf_html(&b, program);
        sbuf_printf(&b, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n", tests, failures,
                    skipped);
        sbuf_puts(&b, sbuf_str(&cases));
        sbuf_puts(&b, "  </testsuite>\n");
        b.failed |= cases.failed;
        sbuf_free(&cases);
    }
    sbuf_puts(&b, "</testsuites>\n");
    json_decref(by_host);
    return finish(&b);
}

/* ---- files and actions ---- */

int suite_handoff_write(const json_t *s, const char *dir, char *err, size_t errlen)
{
    json_t *patches = suite_handoff_k8s_patches(s);
    char *texts[4] = {suite_handoff_drain(s), suite_handoff_k8s_script(s), suite_handoff_prom(s),
                      suite_handoff_junit(s)};
    static const char *names[4] = {"drain.sh", "gpuaccept-k8s.sh", "gpuaccept.prom", "gpuaccept-junit.xml"};
    int rc = 0;
    char path[4096];
    for (int i = 0; i < 4 && rc == 0; i++) {
        if (!texts[i]) {
            snprintf(err, errlen, "out of memory writing %s", names[i]);
            rc = -1;
            break;
        }
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = suite_write_text_atomic(path, texts[i], err, errlen);
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, SUITE_HANDOFF_K8S_JSON);
        rc = patches ? suite_write_json_atomic(path, patches, err, errlen) : -1;
    }
    for (int i = 0; i < 4; i++)
        free(texts[i]);
    json_decref(patches);
    return rc;
}

int suite_handoff_exec(const char *dir, const char *script)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, script);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execlp("sh", "sh", path, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
