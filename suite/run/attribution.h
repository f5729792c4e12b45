/* Which node took a step down: read from what the step printed. The programs' one fatal path (and the
 * watchdog, which goes through it) prints "[FATAL] HOST rank R (file:line): ...", mpirun prints "mpirun
 * noticed that process rank R with PID P on node HOST exited on signal ...", srun prints "srun: error: HOST:
 * task R: ...". A program whose own exit code is the failing one among ranks that disagree prints "[EXIT]
 * HOST rank R code N (NAME)" at its normal end. Pure: lines in, a named node (or none) out, so the rules are
 * unit-tested. */
#ifndef ATTRIBUTION_H
#define ATTRIBUTION_H

#include <jansson.h>
#include <stdbool.h>

typedef struct {
    bool found;
    char host[128];
    int rank;           /* -1: not named */
    char source[16];    /* "fatal", "exit", "mpirun", "srun" */
    char evidence[256]; /* the line it was read from */
} suite_attribution;

/* The first line of each kind seen: the fatal path names the rank that gave up first; the exit notice the
 * rank that ended with the failing code; the launcher names the rank whose death it noticed. */
typedef struct {
    suite_attribution fatal, exit, launcher;
    /* "[FATAL] job (...)": a timeout every rank reached at the same wait: no node to blame (found, no host)
     */
    suite_attribution job;
} suite_attr_scan;

/* Feeds one output line (no newline). */
void suite_attr_scan_line(suite_attr_scan *scan, const char *line);

/* The node to blame for a step that ended with status: the fatal path's when there is one, else the exit
 * notice's, else the launcher's. Evidence only: after a timeout the launcher's lines tell of the kill itself
 * (the suite's or the watchdog's), so only the watchdog's own line names a node; a job-level line names none
 * (out->source "job"). Returns whether a node is named. */
bool suite_attr_pick(const suite_attr_scan *scan, const char *status, suite_attribution *out);

/* True for the step statuses that need a node named: the step died or hung (an interrupted step did neither).
 */
bool suite_attr_wanted(const char *status);

/* The "node" object of suite_run.json's step: {host, rank, source, evidence}, each null when no node could
 * be named; source "job" and its evidence when the step's own line says no node was behind. New reference. */
json_t *suite_attr_to_json(const suite_attribution *a);

#endif
