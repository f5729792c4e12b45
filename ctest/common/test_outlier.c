/* Unit tests of the one outlier rule (common/core/ga_outlier.c), linked with the core alone. The data-driven
 * cases (ctest/common/cases/outlier/) describe groups; these check the edges: two members, leave one out, the
 * direction, unmeasured members, the bound's formula, and the burn's drop over a series. */
#include <math.h>

#include "ga_outlier.h"
#include "ga_test.h"

static const ga_outlier_rule higher10 = {0.10, GA_HIGHER_IS_BETTER, 0};

static void test_two_members_never_blame_one(void)
{
    double v[] = {100, 50};
    ga_outlier_verdict o[2];
    CHECK(ga_outlier_judge(v, 2, &higher10, o) == 0);
    CHECK(o[0].call == GA_OUTLIER_PAIR_DIFFERS && o[1].call == GA_OUTLIER_PAIR_DIFFERS);
    CHECK(o[0].other == 1 && o[1].other == 0);
    CHECK(o[0].members == 2 && o[0].median == 75);
    double close[] = {100, 92};
    CHECK(ga_outlier_judge(close, 2, &higher10, o) == 0);
    CHECK(o[0].call == GA_OUTLIER_NONE && o[1].call == GA_OUTLIER_NONE);
    /* an unmeasured third member leaves a group of two */
    double third[] = {-1, 100, 40};
    ga_outlier_verdict t[3];
    CHECK(ga_outlier_judge(third, 3, &higher10, t) == 0);
    CHECK(t[0].call == GA_OUTLIER_NONE && t[0].members == 0);
    CHECK(t[1].call == GA_OUTLIER_PAIR_DIFFERS && t[2].other == 1);
    /* one member alone has no peers */
    double one[] = {5};
    CHECK(ga_outlier_judge(one, 1, &higher10, o) == 0 && o[0].call == GA_OUTLIER_NONE && o[0].members == 1);
    CHECK(ga_outlier_judge(NULL, 0, &higher10, o) == 0);
}

static void test_leave_one_out(void)
{
    /* Four ranks, one at half speed: pooled, its own figure would widen the spread it is held to. */
    double v[] = {100, 103, 97, 50};
    ga_outlier_verdict o[4];
    CHECK(ga_outlier_judge(v, 4, &higher10, o) == 1);
    CHECK(o[3].call == GA_OUTLIER_WORSE);
    CHECKF(o[3].ref_median == 100, "others' median %g", o[3].ref_median);
    CHECK(o[0].call == GA_OUTLIER_NONE && o[1].call == GA_OUTLIER_NONE && o[2].call == GA_OUTLIER_NONE);
    /* the bound is the others' median less the larger of the tolerance and 3.5 scaled MADs of their logs */
    double mad = fmin(log(103.0 / 100.0), log(100.0 / 97.0));
    double want = 100 * fmin(0.9, exp(-GA_OUTLIER_MAD_K * GA_OUTLIER_MAD_SCALE * mad));
    CHECKF(fabs(o[3].bound - want) < 1e-9, "bound %g, want %g", o[3].bound, want);
    /* eight members or more: one bound over all of them */
    double w[] = {100, 101, 99, 100, 102, 98, 100, 60};
    ga_outlier_verdict p[8];
    CHECK(ga_outlier_judge(w, 8, &higher10, p) == 1 && p[7].call == GA_OUTLIER_WORSE);
    CHECK(p[0].bound == p[7].bound && p[0].ref_median == p[0].median);
}

static void test_small_group_one_slow(void)
{
    /* Four ranks, rank 1 at half speed (the slowed-rank hook) and rank 2 12% below the two others, as cores
     * of a shared host differ for a whole run. Rank 2's others' spread is one small gap: on one measurement
     * each it is named with rank 1; when the ranks' repeated measurements showed 5% of noise, rank 1 alone.
     */
    double v[] = {100, 50, 88, 101};
    ga_outlier_verdict o[4];
    CHECK(ga_outlier_judge(v, 4, &higher10, o) == 2);
    const ga_outlier_rule repeated = {0.10, GA_HIGHER_IS_BETTER, 0.05};
    CHECK(ga_outlier_judge(v, 4, &repeated, o) == 1);
    CHECKF(o[1].call == GA_OUTLIER_WORSE && o[2].call == GA_OUTLIER_NONE, "rank 2: bound %g", o[2].bound);
}

static void test_noise_names_nobody(void)
{
    /* A loaded host: healthy figures 0.6x to 1.5x of each other. The bare tolerance named three. */
    double v[] = {100, 62, 140, 85, 118, 71, 96, 150, 77, 109};
    ga_outlier_verdict o[10];
    CHECK(ga_outlier_judge(v, 10, &higher10, o) == 0);
    /* a fault well beyond that noise is still named */
    v[4] = 20;
    CHECK(ga_outlier_judge(v, 10, &higher10, o) == 1 && o[4].call == GA_OUTLIER_WORSE);
}

static void test_lower_is_better(void)
{
    const ga_outlier_rule r = {0.5, GA_LOWER_IS_BETTER, 0};
    double ms[] = {10, 10.4, 9.7, 10.1, 31};
    ga_outlier_verdict o[5];
    CHECK(ga_outlier_judge(ms, 5, &r, o) == 1 && o[4].call == GA_OUTLIER_WORSE);
    CHECKF(o[4].bound >= 10.05 * 1.5 - 1e-9, "bound %g: at least the tolerance above the others' median",
           o[4].bound);
    double fast[] = {10, 10.4, 9.7, 10.1, 3}; /* faster is never worse */
    CHECK(ga_outlier_judge(fast, 5, &r, o) == 0);
    double two[] = {10, 16};
    CHECK(ga_outlier_judge(two, 2, &r, o) == 0 && o[0].call == GA_OUTLIER_PAIR_DIFFERS);
    two[1] = 14;
    CHECK(ga_outlier_judge(two, 2, &r, o) == 0 && o[0].call == GA_OUTLIER_NONE);
    CHECK(ga_outlier_better(10, 12, GA_LOWER_IS_BETTER) == 10 &&
          ga_outlier_better(10, 12, GA_HIGHER_IS_BETTER) == 12);
    CHECK(ga_outlier_better(-1, 12, GA_LOWER_IS_BETTER) == 12 &&
          ga_outlier_better(7, NAN, GA_LOWER_IS_BETTER) == 7);
}

static void test_bound_of_a_set(void)
{
    double v[] = {40, 20, 42, -1, 38};
    ga_outlier_set s;
    CHECK(ga_outlier_bound(v, 5, 1, &higher10, &s) == 0);
    CHECK(s.members == 3 && s.median == 40);
    CHECKF(fabs(s.spread - GA_OUTLIER_MAD_SCALE * log(42.0 / 40.0)) < 1e-12 ||
               fabs(s.spread - GA_OUTLIER_MAD_SCALE * log(40.0 / 38.0)) < 1e-12,
           "spread %g", s.spread);
    CHECK(ga_outlier_bound(v, 0, -1, &higher10, &s) == 0 && s.members == 0 && s.bound == 0);
    /* identical figures: the tolerance is the floor of the bound */
    double same[] = {50, 50, 50};
    CHECK(ga_outlier_bound(same, 3, -1, &higher10, &s) == 0 && fabs(s.bound - 45) < 1e-12 && s.spread == 0);
}

static void test_repeat_noise(void)
{
    /* Member 0 measured 100, 90, 110; member 1 measured 50, 55; member 2 once. */
    double a[] = {100, 90, 110}, b[] = {50, 55}, c[] = {70};
    const double *lists[] = {a, b, c};
    int counts[] = {3, 2, 1};
    /* every two measurements of one member: ln(100/90), ln(110/100), ln(110/90); ln(55/50) */
    double want = GA_OUTLIER_MAD_SCALE * (log(1.1) + log(100.0 / 90.0)) / 2; /* the median of the four */
    double got = ga_outlier_repeat_spread(lists, counts, 3);
    CHECKF(fabs(got - want) < 1e-12, "repeat spread %g, want %g", got, want);
    CHECK(ga_outlier_repeat_spread(lists + 2, counts + 2, 1) == 0); /* measured once: nothing known */
    /* Four members measured together in three passes; the whole host 30% slower in the second pass and 20%
     * faster in the third. That shift is common to all: what is left is each member's own 1% wobble. */
    double shift[] = {1.0, 0.7, 1.2},
           wobble[4][3] = {{1, 1.01, 1}, {1.01, 1, 1}, {1, 1, 0.99}, {0.5, 0.5, 0.505}};
    double m4[4][3];
    const double *l4[4];
    int c4[4] = {3, 3, 3, 3};
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 3; k++)
            m4[i][k] = 100 * shift[k] * wobble[i][k];
        l4[i] = m4[i];
    }
    double aligned = ga_outlier_repeat_spread(l4, c4, 4);
    CHECKF(aligned > 0 && aligned < GA_OUTLIER_MAD_SCALE * 0.03, "common shift removed: spread %g", aligned);
    /* A slow member and one that jumps in two passes (measured on a loaded host, ddp_smoke compute ms): the
     * shift is taken with each member's own level out, so neither the slow one nor the jump sets it. */
    double j0[] = {0.400, 0.630, 0.635}, j1[] = {0.471, 0.457, 0.382}, j2[] = {1.321, 1.556, 1.614},
           j3[] = {0.390, 0.449, 0.383};
    const double *lj[] = {j0, j1, j2, j3};
    int cj[] = {3, 3, 3, 3};
    double jumpy = ga_outlier_repeat_spread(lj, cj, 4);
    CHECKF(jumpy > 0.1 && jumpy < 0.25, "a jump in one member: spread %g (the slow one would make it 0.34)",
           jumpy);
    c4[3] = 2; /* counts differ: the passes are not known to be shared, each member's own differences count */
    CHECKF(ga_outlier_repeat_spread(l4, c4, 4) > 0.2, "unaligned: the shift is noise (%g)",
           ga_outlier_repeat_spread(l4, c4, 4));
    /* Two ranks 15% apart differ at a known noise of 0 but not when their own measurements scatter by 10%. */
    double two[] = {100, 85};
    ga_outlier_verdict o[2];
    ga_outlier_rule quiet = {0.10, GA_HIGHER_IS_BETTER, 0}, noisy = {0.10, GA_HIGHER_IS_BETTER, 0.10};
    CHECK(ga_outlier_judge(two, 2, &quiet, o) == 0 && o[0].call == GA_OUTLIER_PAIR_DIFFERS);
    CHECK(ga_outlier_judge(two, 2, &noisy, o) == 0 && o[0].call == GA_OUTLIER_NONE);
    two[1] = 40; /* a factor beyond 3.5 times that noise still differs */
    CHECK(ga_outlier_judge(two, 2, &noisy, o) == 0 && o[1].call == GA_OUTLIER_PAIR_DIFFERS);
    /* in a larger group the known noise widens a bound the group's own spread left tight */
    double four[] = {100, 100, 100, 75};
    ga_outlier_verdict f[4];
    CHECK(ga_outlier_judge(four, 4, &quiet, f) == 1 && f[3].call == GA_OUTLIER_WORSE);
    CHECK(ga_outlier_judge(four, 4, &noisy, f) == 0);
}

static void test_series_drop(void)
{
    ga_series_drop d;
    /* the burn: two intervals are not a trend */
    double two[] = {10.0, 8.07};
    ga_series_drop_judge(two, 2, 0, 10, &d);
    CHECK(!d.judged && !d.fell && d.used == 2);
    /* a noisy flat burn whose last interval happens to be low: not a fall */
    double flat[] = {7, 10, 9.1, 10.4, 9.6, 10.2, 9.3, 10.5, 9.8, 8.0};
    ga_series_drop_judge(flat, 10, 1, 10, &d);
    CHECKF(d.judged && !d.fell, "drop %.1f%%, bound %.1f%%", d.drop_pct, d.bound_pct);
    CHECK(d.used == 9);
    /* a steady fall from 10 to 7 over quiet intervals */
    double fall[] = {9, 10, 10, 9.9, 9.4, 8.9, 8.4, 7.9, 7.4, 7.0};
    ga_series_drop_judge(fall, 10, 1, 10, &d);
    CHECKF(d.judged && d.fell && d.drop_pct > 20, "drop %.1f%%, bound %.1f%%", d.drop_pct, d.bound_pct);
    CHECKF(fabs(d.first - 10) < 1e-12 && fabs(d.last - 7.4) < 1e-12, "first %g last %g", d.first, d.last);
    /* a step down halfway (clocks capped) is a fall too: one difference is large, the rest are quiet */
    double step[] = {10, 10, 10.1, 9.9, 10, 6, 6.1, 5.9, 6, 6};
    ga_series_drop_judge(step, 10, 1, 10, &d);
    CHECKF(d.fell && d.noise_pct < 2, "drop %.1f%%, noise %.2f%%", d.drop_pct, d.noise_pct);
    /* the same drop in intervals that scatter by about 15% is within their noise */
    double noisy[] = {10, 12, 8.6, 11.5, 8.4, 10.4, 7.2, 9.8, 7.6, 8.8};
    ga_series_drop_judge(noisy, 10, 1, 10, &d);
    CHECKF(!d.fell && d.drop_pct > 10, "drop %.1f%%, bound %.1f%%", d.drop_pct, d.bound_pct);
    /* rising is never a fall */
    double rise[] = {5, 6, 7, 8, 9, 10};
    ga_series_drop_judge(rise, 6, 0, 10, &d);
    CHECK(d.judged && !d.fell && d.drop_pct < 0);
}

int main(void)
{
    test_two_members_never_blame_one();
    test_leave_one_out();
    test_small_group_one_slow();
    test_noise_names_nobody();
    test_lower_is_better();
    test_bound_of_a_set();
    test_repeat_noise();
    test_series_drop();
    return ga_test_finish();
}
