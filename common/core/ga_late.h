/* Which ranks the others waited on, at a timeout: the rule that names a rank "behind the others". Pure: the
 * watchdog (common/runtime/ga_deadline.c) asks every rank for its wait count and how long it has been in its
 * current wait, and this decides.
 *
 * A rank whose wait count is lower than the highest is behind; it is named late only when the ranks at the
 * highest count have waited for at least ga_late_threshold(bound) (the median of their times in that wait):
 * max(GA_LATE_MIN_S, GA_LATE_SHARE of the bound), but never more than GA_LATE_MAX_SHARE of the bound, so that
 * a wait bound that expired (its ranks waited the whole bound) always counts. One wait behind at the instant
 * a whole-run bound fell, the others 0.2 s into the next wait, is scheduling, not evidence: seen on a loaded
 * host with --step-timeout 8 ("rank 1 at wait 34 of 35"), and not in a quieter run of the same case. */
#ifndef GA_LATE_H
#define GA_LATE_H

#include <stdbool.h>

#define GA_LATE_MIN_S 2.0
#define GA_LATE_SHARE 0.10
#define GA_LATE_MAX_SHARE 0.5

typedef struct {
    bool answered;   /* the rank answered the probe (a silent rank is judged by the caller) */
    long long seq;   /* its wait count */
    double waited_s; /* how long it has been in its current wait; 0 when in none (working) */
} ga_late_peer;

typedef struct {
    long long most;  /* the highest wait count */
    int behind;      /* answered ranks with a lower count */
    int late;        /* of those, the ones named: late[r] */
    double waited_s; /* the median time the ranks at the highest count have waited */
    double threshold_s;
} ga_late_verdict;

/* The least time the others must have waited on a rank for it to be named, for a bound of bound_s seconds
 * (<= 0: unknown, GA_LATE_MIN_S). */
double ga_late_threshold(double bound_s);

/* Judges p[0..n-1] against bound_s; late[r] is set for every rank named. 0, or -1 when memory runs out. */
int ga_late_judge(const ga_late_peer *p, int n, double bound_s, bool *late, ga_late_verdict *out);

#endif
