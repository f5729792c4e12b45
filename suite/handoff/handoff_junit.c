/* gpuaccept-junit.xml: the verdict as a CI server reads it. The cases are decided first (one per check and
 * node, one per step for what no node carries), then written by libxml2's xmlTextWriter, which escapes
 * markup; what it does not guard against (bytes XML 1.0 forbids, broken UTF-8) is made visible text first
 * by suite_xml_text. Format: docs/handoff.md. */
#include "handoff.h"
#include "merge.h"

#include <libxml/xmlwriter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_str.h"
#include "links.h"
#include "render_common.h"
#include "suite_util.h"
#include "step_status.h"

/* ---- text XML 1.0 can hold ---- */

/* The length of the UTF-8 sequence at s encoding a character XML 1.0 allows (#x9 | #xA | #xD |
 * [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]), or 0. */
static size_t xml_char_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c >= 0x20 || c == 0x9 || c == 0xA || c == 0xD ? 1 : 0;
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || c > 0xF4)
        return 0;
    unsigned long cp = c & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0; /* also stops at the terminating NUL */
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const unsigned long least[5] = {0, 0, 0x80, 0x800, 0x10000}; /* no overlong forms */
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF)
        return 0;
    return n;
}

char *suite_xml_text(const char *s)
{
    sbuf b;
    sbuf_init(&b);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t n = 0, k;
        while (p[n] && (k = xml_char_len(p + n)) > 0) /* a run of allowed text, appended at once */
            n += k;
        if (n) {
            sbuf_printf(&b, "%.*s", (int)n, (const char *)p);
            p += n;
        } else { /* ESC of a coloured dmesg, a stray byte: shown, never passed on */
            sbuf_printf(&b, "\\x%02X", *p);
            p++;
        }
    }
    char *out = b.failed ? NULL : strdup(sbuf_str(&b));
    sbuf_free(&b);
    return out;
}

/* ---- the cases ---- */

enum { CASE_PASS, CASE_FAILURE, CASE_ERROR, CASE_SKIPPED };

typedef struct {
    const char *name; /* a host, JOB_CASE, or an abnormal link's "a <-> b" (name_owned) */
    char *name_owned;
    int kind;
    double time_s;
    sbuf type, message, text, out;
} jcase;

typedef struct {
    char name[200];
    double time_s;
    jcase *cases;
    size_t n, cap;
    int counts[4];
} jsuite;

/* A name no host can have (RFC 1123 allows no parentheses): the case of what the step found for the whole
 * job, or could not do at all. */
#define JOB_CASE "(job)"

static bool is_error_status(const char *s)
{
    static const char *const errs[] = {"crashed",        "timeout",     "env_error", "usage_error",
                                       "internal_error", "interrupted", "missing",   "bad_report"};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (ga_streq(s, errs[i]))
            return true;
    return false;
}

static const char *skip_reason(const char *status)
{
    if (ga_streq(status, "skipped"))
        return "not selected for this run (--only, --skip or the profile)";
    if (ga_streq(status, "absent"))
        return "the step's report does not include this node";
    return "not run: the run stopped before this step, or no node was left to run it";
}

static jcase *add_case(jsuite *su, const char *name, double time_s)
{
    if (su->n == su->cap) {
        size_t cap = su->cap ? su->cap * 2 : 16;
        jcase *c = realloc(su->cases, cap * sizeof *c);
        if (!c)
            return NULL;
        su->cases = c;
        su->cap = cap;
    }
    jcase *c = &su->cases[su->n++];
    *c = (jcase){.name = name, .kind = CASE_PASS, .time_s = time_s};
    sbuf_init(&c->type);
    sbuf_init(&c->message);
    sbuf_init(&c->text);
    sbuf_init(&c->out);
    return c;
}

/* The findings of program on one host (or those of the whole job: the list program_findings made) decide
 * the case: a failed check is a <failure>, a step that could not measure (STEP_*: exit 2-5) an <error>; a
 * warning passes, told in <system-out>. Otherwise status says: pass, <skipped> with why, or an <error> for a
 * step that did not measure (step_why: its finding's message). */
static void decide_case(jcase *c, const json_t *findings, bool on_host, const char *status,
                        const char *step_why)
{
    size_t i, fails = 0;
    json_t *f;
    bool check_failed = false;
    json_array_foreach(findings, i, f) {
        const char *sev = sj_str(f, "severity", ""), *code = sj_str(f, "code", "?");
        char text[1200];
        suite_finding_text(f, text, sizeof text);
        if (ga_streq(sev, "fail")) {
            check_failed |= suite_fault_exit_class(code) == 1;
            if (!fails++) {
                sbuf_puts(&c->type, code);
                sbuf_printf(&c->message, "%s: %s", code, text);
            }
            sbuf_printf(&c->text, "%s: %s\n", code, text);
        } else if (ga_streq(sev, "warn")) {
            sbuf_printf(&c->out, "%s (warning): %s\n", code, text);
        }
    }
    if (fails) {
        c->kind = check_failed ? CASE_FAILURE : CASE_ERROR;
        if (fails > 1)
            sbuf_printf(&c->message, " (and %zu more)", fails - 1);
    } else if (is_error_status(status)) {
        c->kind = CASE_ERROR;
        sbuf_puts(&c->type, status);
        sbuf_printf(&c->message, "%s%s", on_host ? "not measured on this node: " : "",
                    step_why ? step_why : status);
        sbuf_printf(&c->text, "%s\n", sbuf_str(&c->message));
    } else if (ga_streq(status, "skipped") || ga_streq(status, "not_run") || ga_streq(status, "absent")) {
        c->kind = CASE_SKIPPED;
        sbuf_puts(&c->message, skip_reason(status));
    }
}

/* The findings of program, split in one pass (not one per node: 1,024 nodes, issue 44, item 7): by host
 * ({host: [...]}, returned), of no host (*job), and of an abnormal link (*links, {"a <-> b": [...]}: the
 * link's case, not either end's; issue 44, item 6). New references. */
static json_t *program_findings(const json_t *findings, const char *program, json_t **job, json_t **links)
{
    json_t *by_host = json_object(), *f;
    size_t i;
    *job = json_array();
    *links = json_object();
    json_array_foreach(findings, i, f) {
        if (!ga_streq(sj_str(f, "program", NULL), program))
            continue;
        const char *host = sj_str(f, "host", NULL), *a, *b;
        char name[520];
        json_t *to = host ? by_host : NULL;
        if (suite_link_ends(f, &a, &b)) {
            snprintf(name, sizeof name, "%s <-> %s", a, b);
            host = name;
            to = *links;
        }
        json_t *list = host ? json_object_get(to, host) : *job;
        if (!list)
            json_object_set_new(to, host, list = json_array());
        json_array_append(list, f);
    }
    return by_host;
}

/* A case per abnormal link of the suite, named "a <-> b" (no host name holds blanks). */
static void link_cases(jsuite *su, json_t *links, double time_s)
{
    const char *name;
    json_t *list;
    json_object_foreach(links, name, list) {
        jcase *c = add_case(su, name, time_s);
        if (c) {
            c->name_owned = strdup(name);
            c->name = c->name_owned ? c->name_owned : JOB_CASE;
            decide_case(c, list, false, "pass", NULL);
        }
    }
}

/* The message of a step's own finding (STEP_TIMEOUT, ...), wherever it was placed. */
static const char *step_finding_message(const json_t *findings, const char *program)
{
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f)
        if (ga_streq(sj_str(f, "program", NULL), program) && strncmp(sj_str(f, "code", ""), "STEP_", 5) == 0)
            return sj_str(f, "message", NULL);
    return NULL;
}

/* A step: a case per node with its check, and the job's case. */
static void step_suite(jsuite *su, const json_t *s, const json_t *step)
{
    const json_t *findings = sj_arr(s, "findings");
    const char *program = su->name, *status = sj_str(step, "status", "not_run");
    const char *why = step_finding_message(findings, program);
    json_t *job, *links, *by_host = program_findings(findings, program, &job, &links);
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *check = sj_str(json_object_get(node, "checks"), program, "not_run");
        const char *host = sj_str(node, "host", "?");
        jcase *c = add_case(su, host, su->time_s);
        if (c)
            decide_case(c, json_object_get(by_host, host), true, check, why);
    }
    link_cases(su, links, su->time_s);
    jcase *c = add_case(su, JOB_CASE, su->time_s);
    if (c)
        decide_case(c, job, false, ga_streq(status, "fail") ? "pass" : status, why);
    json_decref(by_host);
    json_decref(job);
    json_decref(links);
}

/* What the suite found beyond the steps (a baseline regression, a node preflight excluded, a hand-off that
 * failed): a case per node it has a verdict on (every node, for an applied baseline), and one for the job
 * when a finding has no node. */
static void extra_suite(jsuite *su, const json_t *s)
{
    bool all_nodes = ga_streq(su->name, "baseline") && json_is_object(json_object_get(s, "baseline"));
    json_t *job, *links, *by_host = program_findings(sj_arr(s, "findings"), su->name, &job, &links);
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *check = sj_str(json_object_get(node, "checks"), su->name, NULL);
        if (!check && !all_nodes)
            continue;
        const char *host = sj_str(node, "host", "?");
        jcase *c = add_case(su, host, 0);
        if (c)
            decide_case(c, json_object_get(by_host, host), true, check ? check : "pass", NULL);
    }
    link_cases(su, links, 0);
    jcase *c = json_array_size(job) ? add_case(su, JOB_CASE, 0) : NULL;
    if (c)
        decide_case(c, job, false, "pass", NULL);
    json_decref(by_host);
    json_decref(job);
    json_decref(links);
}

/* The suites: one per step, in run order, then one per other source of findings. */
static jsuite *build_suites(const json_t *s, size_t *n_out)
{
    json_t *names = json_array();
    size_t i;
    json_t *st, *f;
    json_array_foreach(sj_arr(s, "steps"), i, st)
        json_array_append_new(names, json_string(sj_str(st, "program", "?")));
    size_t n_steps = json_array_size(names);
    if (json_is_object(json_object_get(s, "baseline")))
        json_array_append_new(names, json_string("baseline"));
    json_array_foreach(sj_arr(s, "findings"), i, f) {
        const char *p = sj_str(f, "program", "?");
        bool seen = false;
        size_t j;
        json_t *q;
        json_array_foreach(names, j, q)
            seen |= ga_streq(json_string_value(q), p);
        if (!seen)
            json_array_append_new(names, json_string(p));
    }
    size_t n = json_array_size(names);
    jsuite *suites = calloc(n ? n : 1, sizeof *suites);
    json_t *q;
    json_array_foreach(names, i, q) {
        if (!suites)
            break;
        jsuite *su = &suites[i];
        snprintf(su->name, sizeof su->name, "%s", json_string_value(q));
        if (i < n_steps) {
            const json_t *step = json_array_get(sj_arr(s, "steps"), i);
            su->time_s = sj_num(step, "duration_s", 0);
            step_suite(su, s, step);
        } else {
            extra_suite(su, s);
        }
        for (size_t k = 0; k < su->n; k++)
            su->counts[su->cases[k].kind]++;
    }
    *n_out = suites ? n : 0;
    json_decref(names);
    return suites;
}

static void free_suites(jsuite *suites, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < suites[i].n; k++) {
            sbuf_free(&suites[i].cases[k].type);
            sbuf_free(&suites[i].cases[k].message);
            sbuf_free(&suites[i].cases[k].text);
            sbuf_free(&suites[i].cases[k].out);
            free(suites[i].cases[k].name_owned);
        }
        free(suites[i].cases);
    }
    free(suites);
}

/* ---- writing ---- */

typedef struct {
    xmlTextWriterPtr w;
    bool failed;
} jw;

static void w_start(jw *x, const char *el)
{
    x->failed |= xmlTextWriterStartElement(x->w, BAD_CAST el) < 0;
}

static void w_end(jw *x)
{
    x->failed |= xmlTextWriterEndElement(x->w) < 0;
}

static void w_attr(jw *x, const char *name, const char *value)
{
    char *safe = suite_xml_text(value);
    x->failed |= !safe || xmlTextWriterWriteAttribute(x->w, BAD_CAST name, BAD_CAST safe) < 0;
    free(safe);
}

static void w_attrf(jw *x, const char *name, const char *fmt, double v)
{
    char num[64];
    snprintf(num, sizeof num, fmt, v);
    w_attr(x, name, num);
}

static void w_text(jw *x, const char *text)
{
    char *safe = suite_xml_text(text);
    x->failed |= !safe || xmlTextWriterWriteString(x->w, BAD_CAST safe) < 0;
    free(safe);
}

static void w_counts(jw *x, const int counts[4], double time_s)
{
    w_attrf(x, "tests", "%.0f", counts[0] + counts[1] + counts[2] + counts[3]);
    w_attrf(x, "failures", "%.0f", counts[CASE_FAILURE]);
    w_attrf(x, "errors", "%.0f", counts[CASE_ERROR]);
    w_attrf(x, "skipped", "%.0f", counts[CASE_SKIPPED]);
    w_attrf(x, "time", "%.3f", time_s);
}

static void write_case(jw *x, const char *program, const jcase *c)
{
    static const char *const outcome[4] = {NULL, "failure", "error", "skipped"};
    char cls[300];
    snprintf(cls, sizeof cls, "gpuaccept.%s", program);
    w_start(x, "testcase");
    w_attr(x, "classname", cls);
    w_attr(x, "name", c->name);
    w_attrf(x, "time", "%.3f", c->time_s);
    if (outcome[c->kind]) {
        w_start(x, outcome[c->kind]);
        w_attr(x, "message", sbuf_str(&c->message));
        if (c->kind != CASE_SKIPPED) {
            w_attr(x, "type", sbuf_str(&c->type));
            w_text(x, sbuf_str(&c->text));
        }
        w_end(x);
    }
    if (c->out.len) {
        w_start(x, "system-out");
        w_text(x, sbuf_str(&c->out));
        w_end(x);
    }
    w_end(x);
}

static void write_suites(jw *x, const jsuite *suites, size_t n)
{
    int total[4] = {0};
    double time_s = 0;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++)
            total[k] += suites[i].counts[k];
        time_s += suites[i].time_s;
    }
    x->failed |= xmlTextWriterStartDocument(x->w, NULL, "UTF-8", NULL) < 0;
    w_start(x, "testsuites");
    w_attr(x, "name", "gpuaccept");
    w_counts(x, total, time_s);
    for (size_t i = 0; i < n; i++) {
        w_start(x, "testsuite");
        w_attr(x, "name", suites[i].name);
        w_counts(x, suites[i].counts, suites[i].time_s);
        for (size_t k = 0; k < suites[i].n; k++)
            write_case(x, suites[i].name, &suites[i].cases[k]);
        w_end(x);
    }
    w_end(x);
    x->failed |= xmlTextWriterEndDocument(x->w) < 0;
}

char *suite_handoff_junit(const json_t *s)
{
    size_t n = 0;
    jsuite *suites = build_suites(s, &n);
    xmlBufferPtr buf = xmlBufferCreate();
    xmlTextWriterPtr w = buf ? xmlNewTextWriterMemory(buf, 0) : NULL;
    char *out = NULL;
    if (suites && w) {
        jw x = {w, false};
        xmlTextWriterSetIndent(w, 1);
        xmlTextWriterSetIndentString(w, BAD_CAST "  ");
        write_suites(&x, suites, n);
        xmlFreeTextWriter(w); /* flushes into buf */
        w = NULL;
        if (!x.failed)
            out = strdup((const char *)xmlBufferContent(buf));
    }
    if (w)
        xmlFreeTextWriter(w);
    if (buf)
        xmlBufferFree(buf);
    if (suites)
        free_suites(suites, n);
    return out;
}
