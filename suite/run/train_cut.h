/* Training steps after a step named a slow fabric (issue 44, item 8). A training program fills the time it is
 * given (ga_train_budget.h): through a slow node or link every step is slow, so it spends its whole share
 * timing a fault an earlier step already named, and the run takes many times its fault-free length. Once a
 * step's report names the fabric, the training steps that follow get a --timeout of a few times their
 * fault-free estimate instead: they still train, check the replicas and measure, and say what the cut left
 * out. Pure: no file, no clock. */
#ifndef TRAIN_CUT_H
#define TRAIN_CUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The cut --timeout: SUITE_TRAIN_CUT_ESTIMATES fault-free estimates, at least SUITE_TRAIN_CUT_MIN_S (an
 * estimate is a model, and training on a slow fabric still needs enough steps to check the loss), never more
 * than the step's own. */
#define SUITE_TRAIN_CUT_MIN_S 120.0
#define SUITE_TRAIN_CUT_ESTIMATES 3.0

/* Whether report (a step's, as merge reads it) names a slow fabric: a failed finding of the codes that mean
 * the collectives between (or inside) nodes are slow. why gets "COMM_SLOW_NODE on node01" (the first such
 * finding, and how many more). */
bool suite_train_cut_cause(const json_t *report, char *why, size_t len);

/* The --timeout a training step gets once a cause is known; normal_s is the one it would get, estimate_s its
 * fault-free estimate (< 0: none). */
double suite_train_cut_timeout(double normal_s, double estimate_s);

#endif
