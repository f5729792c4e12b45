/* The one rule for "this member is worse than its peers", used by every relative check of every program
 * (gemm_flops per dtype, mem_bw per test, ddp_smoke's per-rank compute time, allreduce_bw's nodes and pairs).
 *
 * A member is named only when its figure is worse than its group's median by more than both the tolerance
 * and GA_OUTLIER_MAD_K scaled MADs of the logarithms of the group's figures. Noise on a shared machine is a
 * ratio (a time-shared core or link gives each user a share), so it is measured on logarithms, and a fault
 * that halves a figure stands out of noise that moves the others by a few percent. Below GA_OUTLIER_FEW
 * members each member is held to the others' figures alone (leave one out): a slow member would otherwise
 * widen the very spread it is measured against. Two members never blame one of them: the median of two is
 * their mean, so one is always half the spread below it; when they differ by more than the tolerance the
 * verdict says so (GA_OUTLIER_PAIR_DIFFERS) and the check emits a warning naming both. Absolute floors
 * (peaks, SKU figures) are the other half of a verdict and are not made here.
 *
 * Pure: no MPI, no CUDA. docs/architecture.md, "How a verdict is reached"; the measurement behind the
 * constants: docs/testing.md, "False alarms". */
#ifndef GA_OUTLIER_H
#define GA_OUTLIER_H

#include <stdbool.h>

/* One-sided 3.5 sigma of log-normal noise: about 2 in 10,000 healthy figures fall beyond it. */
#define GA_OUTLIER_MAD_K 3.5
/* The MAD of normal noise times this is its standard deviation. */
#define GA_OUTLIER_MAD_SCALE 1.4826
/* Below this many members a member is held to the others' figures alone (leave one out). */
#define GA_OUTLIER_FEW 8
/* A suspect is measured again before it is called (--remeasure N, ga_remeasure.h): at most this many passes,
 * so that a fixed-size record can hold every measurement. */
#define GA_REMEASURE_MAX 16
#define GA_REMEASURE_DEFAULT 2
/* Noise widens a bound at most this factor beyond the tolerance's own bound (a 10 % tolerance: to 1.67x below
 * the reference median; a straggler ratio of 1.5: to 2.25x above), when the rule asks for it
 * (ga_outlier_rule.far): a rank slowed 2x on a loaded host measured 1.98x below its peers with its repeats
 * scattered 6.8-10.4 GB/s, and a bound from that scatter (9.3 GB/s) let it pass. Beyond the cap a member is
 * named however noisy the run. */
#define GA_OUTLIER_FAR 1.5

typedef enum {
    GA_HIGHER_IS_BETTER = 0, /* TFLOP/s, GB/s */
    GA_LOWER_IS_BETTER = 1,  /* step time */
} ga_direction;

typedef struct {
    double tolerance; /* fraction: worse than the median by more than this (0.1: 10 %) */
    ga_direction direction;
    /* The noise two figures of healthy members are known to differ by, as a spread of logarithms
     * (ga_outlier_repeat_spread: how much one member's own repeated measurements differ); 0: none known. The
     * bound allows for the larger of it and the group's spread, and two members differ only beyond it. */
    double noise;
    /* > 1: noise widens the bound at most this factor beyond the tolerance's bound, and a member beyond that
     * is named however noisy (GA_OUTLIER_FAR); 0: no cap (the tolerance and the noise alone) */
    double far;
} ga_outlier_rule;

typedef enum {
    GA_OUTLIER_NONE = 0,     /* within its group, or not judged (not measured, or alone in its group) */
    GA_OUTLIER_WORSE,        /* beyond the bound: the member is named */
    GA_OUTLIER_PAIR_DIFFERS, /* one of a group of two whose figures differ by more than the tolerance */
} ga_outlier_call;

typedef struct {
    ga_outlier_call call;
    int members;   /* measured members of the group, itself included (0 when it was not measured) */
    double median; /* the median of the group's figures */
    double
        ref_median; /* the median the bound comes from: the others' with fewer than GA_OUTLIER_FEW members */
    double spread;  /* scaled MAD of the logarithms of those figures: the noise, as a fraction */
    double bound;  /* a figure worse than this is an outlier; a group of two: the other figure less (or, lower
                    * is better, plus) the tolerance; 0 when not judged */
    int other;     /* a group of two: the other member's index, else -1 */
    bool screened; /* worse than the group's median by more than the tolerance alone: noise or a fault, a
                    * suspect to measure again before the call (the pairs' screen) */
    /* Not judged: worse than the reference median by more than the tolerance, and not named because the
     * noise widened the bound: its gap lies where the noise allows no call ("not covered"), which the check
     * says in a warning, never a silent pass. */
    bool noisy;
    /* Worse than its bound by less than its own measurements' noise (ga_outlier_confirm): not named, as one
     * scattered figure just past a bound is no evidence; the check says so in a warning. */
    bool unconfirmed;
    double own_noise; /* that noise (scaled MAD of the member's own logarithms), 0 when not computed */
} ga_outlier_verdict;

/* A figure is measured when it is finite and >= 0; others (-1: not measured) take no part. */
bool ga_outlier_measured(double v);

/* The bound of a set of figures: their median moved towards worse by the larger of the tolerance and
 * GA_OUTLIER_MAD_K scaled MADs of their logarithms. */
typedef struct {
    int members;   /* measured figures it was computed from */
    double median; /* their median (0 when none) */
    double spread; /* scaled MAD of their logarithms */
    double bound;  /* 0 when none */
    bool noisy;    /* the noise asked for a bound wider than the rule's far cap, which held it */
} ga_outlier_set;

/* The bound of the measured figures among v[0..n-1] other than v[skip] (skip < 0: all of them). 0, or -1 when
 * memory runs out. */
int ga_outlier_bound(const double *v, int n, int skip, const ga_outlier_rule *r, ga_outlier_set *out);

/* The noise of repeated measurements, at the scale of a difference between two figures: 1.4826 times the
 * median of |log x - log y| over every two measurements x, y of one member, pooled over the members measured
 * more than once (lists[i][0..counts[i]-1]); 0 when none was. A fault is slow in every measurement; noise is
 * what moves one member's figures between passes, and two members' figures differ by two such noises (the
 * spread of the difference of two measurements of one member is that of two members' when they are healthy).
 * Pairwise differences, not deviations from each member's own median: with 3 measurements one deviation in
 * three would be 0 by construction. When every member was measured in the same passes (equal counts, as
 * ga_remeasure_loop measures every rank together), each pass's common shift is taken out first: the median
 * over the members of their log in that pass less their own median log. A host busier in one pass slows every
 * member alike, which is no difference between members (on a loaded 2-core host that shift alone set a bound
 * that hid a rank slowed 2x); taking each member's own level out first keeps a slow member from setting it.
 */
double ga_outlier_repeat_spread(const double *const *lists, const int *counts, int n);

/* Whether value is worse than bound in the rule's direction. */
bool ga_outlier_worse_than(double value, double bound, ga_direction d);

/* The better of two figures in the rule's direction (an unmeasured one loses). */
double ga_outlier_better(double a, double b, ga_direction d);

/* Judges every member of one group v[0..n-1] (n >= 0) and fills out[0..n-1]. Returns how many are
 * GA_OUTLIER_WORSE, or -1 when memory runs out. */
int ga_outlier_judge(const double *v, int n, const ga_outlier_rule *r, ga_outlier_verdict *out);

/* The rule over members each measured one or more times (a training rank's compute time per window): best[i]
 * is the figure judged, lists[i] its counts[i] measurements, whose spread is the noise allowed for
 * (ga_outlier_repeat_spread). A new array of n verdicts (free it), or NULL when memory runs out. */
ga_outlier_verdict *ga_outlier_judge_repeated(const double *best, const double *const *lists,
                                              const int *counts, int n, double tolerance,
                                              ga_direction direction);

/* Evidence beyond the bound: a member named (GA_OUTLIER_WORSE) whose figure best[i] is worse than its bound
 * by less than the noise of its own measurements lists[i][0..counts[i]-1] (1.4826 times the median of their
 * pairwise log differences; two or more measurements) is not named but marked unconfirmed, unless it is
 * beyond the far cap (rule->far), which no noise excuses. A fault is slow in every measurement; a member
 * whose own figures scatter across the bound is not shown slow by the best of them. */
void ga_outlier_confirm(ga_outlier_verdict *v, const double *best, const double *const *lists,
                        const int *counts, int n, const ga_outlier_rule *rule);

/* How many members the verdicts name or screen (the suspects measured again), the first into *first (-1 when
 * none). */
int ga_outlier_suspects(const ga_outlier_verdict *v, int n, int *first);

/* How much a series fell, judged on all its points: the median of the last third of series[warmup..n-1]
 * against the median of the first third, and the noise of one point (scaled MAD of the differences of
 * consecutive logarithms, over sqrt 2: a steady trend moves every difference a little, a step one of them).
 * Higher is better (TFLOP/s of burn intervals). */
typedef struct {
    int used;           /* points judged: n - warmup; the drop is not judged (judged false) below 3 */
    double first, last; /* medians of the first and the last third */
    double drop_pct;    /* 100 (first - last) / first; negative: it rose */
    double noise_pct;   /* one point's noise, percent */
    double bound_pct;   /* a drop beyond the larger of max_drop_pct and GA_OUTLIER_MAD_K noises is a fall */
    bool judged, fell;
} ga_series_drop;

void ga_series_drop_judge(const double *series, int n, int warmup, double max_drop_pct, ga_series_drop *out);

#endif
