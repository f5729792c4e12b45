/* The pairs' plan at scale (ga_pairs.h, issue 44 item 2): when not every round of the circle runs, the ring
 * neighbours (i, i + 1 mod members: the pairs the world's ring used) get rounds of their own, inside the
 * rounds that run; every round is a matching (no member twice); the whole plan tests each pair exactly once;
 * the constant-time counts and partners the estimate uses agree with the rounds the program runs; the
 * coverage splits ring neighbours from the other pairs. */
#include <stdlib.h>
#include <string.h>

#include "ga_pairs.h"
#include "ga_test.h"

/* Every round of the plan (members, at, all circle rounds): a matching, agreeing with plan_count and
 * plan_partner; every pair once in all. */
static void check_whole_plan(int members, int at)
{
    int circle = ga_pairs_max_rounds(members), rounds = ga_pairs_plan_rounds(members, at, circle);
    int(*sched)[2] = malloc((size_t)(members / 2 + 1) * sizeof *sched);
    int *seen = calloc((size_t)(members * members), sizeof *seen),
        *busy = calloc((size_t)members, sizeof *busy);
    bool ok_matching = true, ok_count = true, ok_partner = true;
    for (int r = 0; r < rounds; r++) {
        int n = ga_pairs_plan_round(members, at, r, sched);
        ok_count = ok_count && n == ga_pairs_plan_count(members, at, r);
        memset(busy, 0, (size_t)members * sizeof *busy);
        for (int i = 0; i < n; i++) {
            int a = sched[i][0], b = sched[i][1];
            ok_matching = ok_matching && a < b && !busy[a] && !busy[b];
            busy[a] = busy[b] = 1;
            seen[a * members + b]++;
            ok_partner = ok_partner && ga_pairs_plan_partner(members, at, r, a) == b &&
                         ga_pairs_plan_partner(members, at, r, b) == a;
        }
        for (int x = 0; x < members; x++)
            ok_partner = ok_partner && (busy[x] || ga_pairs_plan_partner(members, at, r, x) == -1);
    }
    int once = 0;
    for (int a = 0; a < members; a++)
        for (int b = a + 1; b < members; b++)
            once += seen[a * members + b] == 1;
    CHECKF(ok_matching, "%d members, at %d: every round a matching", members, at);
    CHECKF(ok_count, "%d members, at %d: plan_count agrees with the rounds", members, at);
    CHECKF(ok_partner, "%d members, at %d: plan_partner agrees with the rounds", members, at);
    CHECKF(once == members * (members - 1) / 2, "%d members, at %d: %d of %d pairs exactly once", members, at,
           once, members * (members - 1) / 2);
    free(sched);
    free(seen);
    free(busy);
}

/* R circle rounds of R < all, ring neighbours first (at 0) or inserted after round `at`: the plan's first
 * at + neighbour rounds cover every ring neighbour, and the coverage says so. */
static void check_neighbours_first(int members, int at, int circle)
{
    int e = ga_pairs_neighbour_rounds(members), rounds = ga_pairs_plan_rounds(members, at, circle);
    CHECKF(rounds == circle + e, "%d members: %d circle rounds and %d of neighbours", members, circle, e);
    ga_pair *pairs = calloc((size_t)(rounds * (members / 2) + 1), sizeof *pairs);
    int(*sched)[2] = malloc((size_t)(members / 2 + 1) * sizeof *sched);
    int n = 0;
    for (int r = 0; r < at + e; r++) { /* the rounds up to the end of the neighbours' */
        int k = ga_pairs_plan_round(members, at, r, sched);
        for (int i = 0; i < k; i++, n++)
            pairs[n].round = r, pairs[n].member[0] = sched[i][0], pairs[n].member[1] = sched[i][1];
    }
    ga_pairs_cover c;
    int miss[4][2];
    int untested = ga_pairs_coverage(members, pairs, n, &c, miss, 4);
    CHECKF(untested == 0 && c.ring_tested == members && c.ring_total == members,
           "%d members, at %d: every ring neighbour within the first %d rounds (%d of %d, %d untested)",
           members, at, at + e, c.ring_tested, c.ring_total, untested);
    CHECKF(c.other_total == (long long)members * (members - 1) / 2 - members,
           "%d members: other pairs' total", members);
    free(pairs);
    free(sched);
}

/* The circle alone (the old schedule) leaves ring neighbours out when few rounds run: why the plan exists. */
static void check_circle_alone_misses(int members, int circle)
{
    ga_pair *pairs = calloc((size_t)(circle * (members / 2) + 1), sizeof *pairs);
    int(*sched)[2] = malloc((size_t)(members / 2 + 1) * sizeof *sched);
    int n = 0;
    for (int r = 0; r < circle; r++) {
        int k = ga_pairs_schedule(members, r, sched);
        for (int i = 0; i < k; i++, n++)
            pairs[n].member[0] = sched[i][0], pairs[n].member[1] = sched[i][1];
    }
    ga_pairs_cover c;
    int miss[1][2];
    int untested = ga_pairs_coverage(members, pairs, n, &c, miss, 1);
    CHECKF(untested > members / 2 && c.ring_tested + untested == members,
           "%d members, %d circle rounds: %d ring neighbours untested without the plan", members, circle,
           untested);
    CHECKF(miss[0][0] < miss[0][1] && ga_pairs_ring_neighbours(members, miss[0][0], miss[0][1]),
           "the untested list names ring neighbours, lower first");
    free(pairs);
    free(sched);
}

int main(void)
{
    for (int m = 2; m <= 23; m++)
        for (int at = -1; at <= 3; at++)
            check_whole_plan(m, at);
    check_whole_plan(64, 5);
    check_neighbours_first(6, 0, 1);
    check_neighbours_first(7, 0, 1);
    check_neighbours_first(2048, 0, 3);
    check_neighbours_first(2048, 1, 1300);
    check_neighbours_first(2047, 40, 1300);
    check_circle_alone_misses(2048, 100);
    /* the constant-time count at scale: two neighbour pairs at most leave each circle round */
    bool ok = true;
    for (int r = 0; r < 2047 + 2; r++) {
        int n = ga_pairs_plan_count(2048, 1, r);
        ok = ok && n <= 1024 && n >= 1022;
    }
    CHECK(ok);
    CHECK(ga_pairs_ring_neighbours(5, 4, 0) && !ga_pairs_ring_neighbours(5, 1, 3) &&
          ga_pairs_ring_neighbours(2, 1, 0));
    return ga_test_finish();
}
