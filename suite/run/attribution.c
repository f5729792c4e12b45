#include "attribution.h"
#include "node_name.h"

#include <stdio.h>
#include <string.h>

#include "ga_str.h"
#include "ga_text.h"

static void set(suite_attribution *a, const char *host, size_t host_len, int rank, const char *source,
                const char *line)
{
    /* A name from a program's output goes on to drain.sh and kubectl: only a node name is taken. */
    if (a->found || host_len == 0 || host_len >= sizeof a->host || !suite_node_name_ok_n(host, host_len))
        return;
    a->found = true;
    memcpy(a->host, host, host_len);
    a->host[host_len] = '\0';
    a->rank = rank;
    snprintf(a->source, sizeof a->source, "%s", source);
    snprintf(a->evidence, sizeof a->evidence, "%s", line);
}

/* A host name as the launchers print it: no spaces, no ':' (srun ends it with one). */
static size_t host_len(const char *p)
{
    return strcspn(p, " \t:,()[]");
}

/* "[FATAL] HOST rank R (file:line): ...", or "[FATAL] job (file:line): ..." for a job-level timeout */
static void scan_fatal(suite_attr_scan *s, const char *line)
{
    const char *p = strstr(line, "[FATAL] ");
    if (!p)
        return;
    p += 8;
    if (strncmp(p, "job (", 5) == 0) {
        if (!s->job.found) {
            s->job.found = true;
            s->job.rank = -1;
            snprintf(s->job.source, sizeof s->job.source, "job");
            snprintf(s->job.evidence, sizeof s->job.evidence, "%s", line);
        }
        return;
    }
    size_t n = host_len(p);
    int rank;
    if (n && p[n] == ' ' && sscanf(p + n, " rank %d", &rank) == 1 && !(n == 1 && *p == '?'))
        set(&s->fatal, p, n, rank, "fatal", line);
}

/* "[EXIT] HOST rank R code N (NAME)": a program's normal end with its own failing code. */
static void scan_exit(suite_attr_scan *s, const char *line)
{
    const char *p = strstr(line, "[EXIT] ");
    if (!p)
        return;
    p += 7;
    size_t n = host_len(p);
    int rank, code;
    if (n && p[n] == ' ' && sscanf(p + n, " rank %d code %d", &rank, &code) == 2 && !(n == 1 && *p == '?'))
        set(&s->exit, p, n, rank, "exit", line);
}

/* "mpirun noticed that process rank R with PID P on node HOST exited on signal N (...)" */
static void scan_mpirun(suite_attr_scan *s, const char *line)
{
    const char *p = strstr(line, "noticed that process rank ");
    int rank;
    if (!p || sscanf(p, "noticed that process rank %d", &rank) != 1)
        return;
    const char *on = strstr(p, " on node ");
    if (on)
        set(&s->launcher, on + 9, host_len(on + 9), rank, "mpirun", line);
}

/* "srun: error: HOST: task R: Exited with exit code 3", "srun: error: HOST: tasks 0-1: Killed" */
static void scan_srun(suite_attr_scan *s, const char *line)
{
    const char *p = strstr(line, "srun: error: ");
    if (!p)
        return;
    p += 13;
    size_t n = host_len(p);
    int rank;
    if (n && p[n] == ':' &&
        (sscanf(p + n, ": task %d:", &rank) == 1 || sscanf(p + n, ": tasks %d", &rank) == 1))
        set(&s->launcher, p, n, rank, "srun", line);
}

void suite_attr_scan_line(suite_attr_scan *scan, const char *line)
{
    scan_fatal(scan, line);
    scan_exit(scan, line);
    scan_mpirun(scan, line);
    scan_srun(scan, line);
}

bool suite_attr_pick(const suite_attr_scan *scan, const char *status, suite_attribution *out)
{
    bool timed_out = status && strcmp(status, "timeout") == 0;
    if (scan->fatal.found)
        *out = scan->fatal;
    else if (scan->job.found) {
        *out = scan->job;
        return false;
    } else if (timed_out)
        memset(out, 0, sizeof *out); /* the launcher saw the kill, not its cause */
    else
        *out = scan->exit.found ? scan->exit : scan->launcher;
    return out->found;
}

bool suite_attr_wanted(const char *status)
{
    static const char *const died[] = {"crashed", "timeout", "internal_error", "env_error"};
    for (size_t i = 0; i < sizeof died / sizeof died[0]; i++)
        if (status && strcmp(status, died[i]) == 0)
            return true;
    return false;
}

json_t *suite_attr_to_json(const suite_attribution *a)
{
    if (a->found && !a->host[0])
        return json_pack("{s:n, s:n, s:s, s:o}", "host", "rank", "source", a->source, "evidence",
                         ga_json_text(a->evidence)); /* a line of the program's output */
    if (!a->found)
        return json_pack("{s:n, s:n, s:n, s:n}", "host", "rank", "source", "evidence");
    return json_pack("{s:o, s:o, s:s, s:o}", "host", ga_json_text(a->host), "rank",
                     a->rank >= 0 ? json_integer(a->rank) : json_null(), "source", a->source, "evidence",
                     ga_json_text(a->evidence));
}
