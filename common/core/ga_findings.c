#include "ga_findings.h"
#include "ga_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_log.h"
#include "ga_str.h"

void ga_findings_init(ga_findings *f)
{
    memset(f, 0, sizeof *f);
}

void ga_findings_free(ga_findings *f)
{
    free(f->items);
    memset(f, 0, sizeof *f);
}

void ga_findings_add(ga_findings *f, ga_severity sev, const char *code, ga_where where, const char *fmt, ...)
{
    if (f->count == f->capacity) {
        size_t cap = f->capacity ? 2 * f->capacity : 16;
        ga_finding *items = realloc(f->items, cap * sizeof *items);
        f->last_added = items != NULL;
        if (!items)
            return; /* out of memory: the finding is lost, the exit code still follows the others */
        f->items = items;
        f->capacity = cap;
    }
    f->last_added = true;
    ga_finding *it = &f->items[f->count++];
    memset(it, 0, sizeof *it);
    it->severity = sev;
    snprintf(it->code, sizeof it->code, "%s", code);
    snprintf(it->host, sizeof it->host, "%s", where.host ? where.host : "");
    it->node_index = where.node_index;
    it->world_rank = where.world_rank;
    it->gpu = where.gpu;
    if (ga_pci_normalise(where.pci_bus_id, it->pci_bus_id, sizeof it->pci_bus_id) != 0)
        it->pci_bus_id[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->message, sizeof it->message, fmt, ap);
    va_end(ap);
}

void ga_findings_set_part(ga_findings *f, const char *fmt, ...)
{
    if (!f->last_added || f->count == 0)
        return;
    ga_finding *it = &f->items[f->count - 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->part, sizeof it->part, fmt, ap);
    va_end(ap);
}

void ga_findings_set_peer(ga_findings *f, const char *peer_host)
{
    if (f->last_added && f->count > 0)
        snprintf(f->items[f->count - 1].peer_host, sizeof f->items[0].peer_host, "%s",
                 peer_host ? peer_host : "");
}

size_t ga_findings_count(const ga_findings *f, ga_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < f->count; i++)
        n += f->items[i].severity == sev;
    return n;
}

bool ga_findings_has_code(const ga_findings *f, const char *code)
{
    for (size_t i = 0; i < f->count; i++)
        if (strcmp(f->items[i].code, code) == 0)
            return true;
    return false;
}

int ga_findings_exit_code(const ga_findings *f)
{
    return ga_findings_count(f, GA_SEV_FAIL) ? GA_EXIT_CHECK_FAILED : GA_EXIT_PASS;
}

const char *ga_severity_name(ga_severity sev)
{
    return sev == GA_SEV_FAIL ? "fail" : sev == GA_SEV_WARN ? "warn" : "info";
}

void ga_findings_log(const ga_findings *f, const char *tag)
{
    for (size_t i = 0; i < f->count; i++) {
        const ga_finding *it = &f->items[i];
        if (it->severity == GA_SEV_INFO && !ga_log_verbose())
            continue;
        ga_log(tag, "%s %s%s%s%s%s%s: %s", ga_severity_name(it->severity), it->code,
               it->host[0] ? " on " : "", it->host, it->part[0] ? " (" : "", it->part, it->part[0] ? ")" : "",
               it->message);
    }
}

static json_t *int_or_null(int v)
{
    return v < 0 ? json_null() : json_integer(v);
}

json_t *ga_findings_to_json(const ga_findings *f)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < f->count; i++) {
        const ga_finding *it = &f->items[i];
        json_t *o = json_object();
        json_object_set_new(o, "severity", json_string(ga_severity_name(it->severity)));
        json_object_set_new(o, "code", ga_json_text(it->code));
        json_object_set_new(o, "host", it->host[0] ? ga_json_text(it->host) : json_null());
        json_object_set_new(o, "node_index", int_or_null(it->node_index));
        json_object_set_new(o, "rank", int_or_null(it->world_rank));
        json_object_set_new(o, "gpu", int_or_null(it->gpu));
        json_object_set_new(o, "pci_bus_id", it->pci_bus_id[0] ? json_string(it->pci_bus_id) : json_null());
        if (it->part[0]) /* device and setting names as the node reported them */
            json_object_set_new(o, "part", ga_json_text(it->part));
        if (it->peer_host[0])
            json_object_set_new(o, "peer_host", ga_json_text(it->peer_host));
        json_object_set_new(o, "message", ga_json_text(it->message)); /* network names, log lines */
        json_array_append_new(arr, o);
    }
    return arr;
}

/* One reason of the FAILURE line into r: "why", or the i-th failure's code, place and message. */
static void result_reason(const ga_finding *it, char *r, size_t len)
{
    snprintf(r, len, "%s%s%s: %s", it->code, it->host[0] ? " on " : "", it->host, it->message);
}

void ga_result_line(const ga_findings *f, int exit_code, const char *why, char *buf, size_t len)
{
    if (exit_code == GA_EXIT_PASS) {
        snprintf(buf, len, "[RESULT] SUCCESS");
        return;
    }
    /* Reasons go whole while they fit in GA_RESULT_REASONS_MAX bytes; one that does not is cut between words
     * with "..." (the front-end keeps 511 bytes of the line, suite/run/step_runner.c, and people read it);
     * the rest are counted, never dropped silently (issue 41, observation 10). */
    enum { SHOWN = 5, MIN_CUT = 80 };
    size_t fails = ga_findings_count(f, GA_SEV_FAIL), total = fails + (why && *why ? 1 : 0), shown = 0;
    size_t used = 0, next_fail = 0;
    int n = snprintf(buf, len, "[RESULT] FAILURE:");
    size_t at = n > 0 && (size_t)n < len ? (size_t)n : 0;
    for (size_t k = 0; k < total && shown < SHOWN; k++) {
        char r[GA_RESULT_REASONS_MAX + 64], cut[GA_RESULT_REASONS_MAX + 8];
        if (k == 0 && why && *why) {
            snprintf(r, sizeof r, "%s", why);
        } else {
            while (f->items[next_fail].severity != GA_SEV_FAIL)
                next_fail++;
            result_reason(&f->items[next_fail++], r, sizeof r);
        }
        size_t room = GA_RESULT_REASONS_MAX > used ? GA_RESULT_REASONS_MAX - used : 0;
        if (strlen(r) > room && (shown > 0 && room < MIN_CUT))
            break;
        ga_str_clip(cut, sizeof cut, r, room);
        n = snprintf(buf + at, len - at, "%s%s", shown ? "; " : " ", cut);
        at += n > 0 && (size_t)n < len - at ? (size_t)n : 0;
        used += strlen(cut) + 2;
        shown++;
    }
    if (total > shown)
        snprintf(buf + at, len - at, "; and %zu more reason%s (see the report)", total - shown,
                 total - shown == 1 ? "" : "s");
    else if (total == 0)
        snprintf(buf + at, len - at, " %s", ga_exit_code_name(exit_code));
}

void ga_result_print(const ga_findings *f, int exit_code, const char *why)
{
    char line[GA_RESULT_REASONS_MAX + 128];
    ga_result_line(f, exit_code, why, line, sizeof line);
    printf("%s\n", line);
    fflush(stdout);
}
