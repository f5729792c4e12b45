/* Time as a budget: how allreduce_bw shares the time its --timeout leaves between its patterns, how many
 * operations a size gets once its first one is timed, and when a figure is so far below its reference that
 * more operations cannot change the verdict. Pure: no MPI, no clock; the runners pass times in. */
#ifndef AR_BUDGET_H
#define AR_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "ar_opts.h"

/* "Far below": a figure below 1/AR_FAR_FACTOR of its reference (the floor, or the median of its peers at the
 * same size). Noise on a shared host or fabric slows a transfer by a share (two users: a half, three: a
 * third), and the pairs' screen already names members 10 % low once they stand out of that noise; a factor 4
 * is beyond what contention by a few jobs does, and a node or link that slow leaves no doubt after two
 * figures. */
#define AR_FAR_FACTOR 4.0
/* Figures taken twice before a member is judged far below its peers (two sizes, or two operations). */
#define AR_FAR_TIMES 2
/* The judging size: isolation looks from here up; 1 MiB is large enough that a transfer's time is its link's
 * bandwidth rather than latency, and small enough to be quick even on a link 100 times slower. */
#define AR_JUDGE_BYTES (1ull << 20)
/* Sizes of isolation once the fabric is known to be slow: up to 16 MiB, enough to see a node 10x slower. */
#define AR_ISOLATION_MAX_BYTES (16ull << 20)
/* No figure below this size counts as far below anything: there one operation's time is latency and
 * scheduling, not bandwidth (healthy pairs were declared "more than 4x below" at 16-512 B from one noisy
 * operation on a loaded host, and then measured with one operation per size). */
#define AR_FAR_MIN_BYTES (64ull << 10)
/* "Low": below 1/AR_LOW_FACTOR of its reference. Not evidence alone (a loaded host halves a transfer); a
 * member low in every pair it is in (two pairs at least: two partners, at two moments) is isolated as a far
 * one is, by small sizes and one operation each: a node 12x slower measured 2.7x below its peers under load.
 */
#define AR_LOW_FACTOR 2.0
/* The screen's operations per pair at the judging size, the best kept: contention only slows an operation,
 * and on a busy machine the best of two still missed a node 60x slower. */
#define AR_SCREEN_OPS 3

/* Seconds kept back from the patterns for the gathers, the analysis and the report. */
double ar_budget_reserve(double time_left_s);

/* The share of the time left that the pattern at position i of the list gets, its successors running after
 * it: each later pattern gets its share of what is left when it starts, so time an earlier one did not use
 * rolls on. time_left_s <= 0 means no bound (returns 0: unbounded). */
double ar_budget_phase(const ar_pattern_id *patterns, int n_patterns, int i, double time_left_s);

/* Timed iterations of one size and placement: -n (want) when they fit budget_s at first_s each, else as many
 * as fit, and at least 1 (a figure is one operation). budget_s <= 0: want. */
int ar_budget_iters(double first_s, double budget_s, int want);
/* Warm-up operations after the first (timed) one: want - 1 when they fit a fifth of budget_s, else fewer. */
int ar_budget_warmups(double first_s, double budget_s, int want);

/* far[i] = fig[i] (> 0) is below 1/AR_FAR_FACTOR of the median of the other positive figures; needs at least
 * one other. Returns how many are far. */
int ar_far_below_peers(const double *fig, int n, bool *far);
/* fig below 1/AR_FAR_FACTOR of floor (floor > 0). */
bool ar_far_below_floor(double fig, double floor);
/* The world's busbw against the screen's median pair: the world is far slower than its pairs below
 * 1/AR_WORLD_FAR_FACTOR of it. Twice the pairs' factor: a world of n ranks makes 2(n - 1) steps of size/n
 * where a pair makes one, so at the judging size its busbw lies below a pair's by latency alone (4 healthy
 * ranks on 2 cores: the world 2-9x below the screen's median pair at 1-4 MiB). A node 12x slower is past it.
 */
#define AR_WORLD_FAR_FACTOR (2.0 * AR_FAR_FACTOR)
/* Whether a figure at this size may count as far below (AR_FAR_MIN_BYTES). */
bool ar_far_counts_at(uint64_t bytes);
/* The world's busbw at bytes is far below the screen's median pair (pairs_busbw > 0) at a size that counts:
 * its slowest link is far slower than the pairs' links, which the world sweep need not measure further. */
bool ar_world_far_below_pairs(double world_busbw, double pairs_busbw, uint64_t bytes);

/* The judging size's index in sizes[0..n-1]: the smallest at or above AR_JUDGE_BYTES, else the largest. */
int ar_judge_size_index(const uint64_t *sizes, int n);
/* The sizes isolation keeps once the fabric is slow: from the judging size (ar_judge_size_index) up to
 * AR_ISOLATION_MAX_BYTES, at least that one. Sets *first to its index; returns how many. */
int ar_isolation_sizes(const uint64_t *sizes, int n, int *first);

#endif
