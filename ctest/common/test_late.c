/* The lateness rule (common/core/ga_late.c): a rank behind the others at a timeout is named only when the
 * others have waited on it for a meaningful share of the bound (issue 44, item 5). */
#include <math.h>

#include "ga_late.h"
#include "ga_test.h"

/* Issue 44: --step-timeout 8 on a loaded host, rank 1 at wait 34 while the three others had entered wait 35
 * 0.2 s before the bound fell: scheduling, not evidence; nobody is named. */
static void test_one_wait_behind_at_the_deadline(void)
{
    ga_late_peer p[4] = {{true, 35, 0.2}, {true, 34, 0.0}, {true, 35, 0.25}, {true, 35, 0.15}};
    bool late[4];
    ga_late_verdict v;
    CHECK(ga_late_judge(p, 4, 8.0, late, &v) == 0);
    CHECKF(v.behind == 1 && v.late == 0 && !late[1], "one behind (%d), none named (%d)", v.behind, v.late);
    CHECKF(v.most == 35 && fabs(v.waited_s - 0.2) < 1e-9, "the others waited %g s at wait %lld", v.waited_s,
           v.most);
}

/* The same run bound, the others 3 s into their wait on rank 1: named. */
static void test_waited_on_long(void)
{
    ga_late_peer p[4] = {{true, 35, 3.1}, {true, 34, 0.0}, {true, 35, 3.0}, {true, 35, 2.9}};
    bool late[4];
    ga_late_verdict v;
    CHECK(ga_late_judge(p, 4, 8.0, late, &v) == 0);
    CHECKF(v.late == 1 && late[1] && !late[0] && !late[2] && !late[3], "rank 1 named (%d)", v.late);
}

/* A wait bound that expired: its ranks waited the whole bound, which is evidence however short (-T 1). */
static void test_wait_bound_expired(void)
{
    ga_late_peer p[2] = {{true, 7, 1.0}, {true, 6, 0.0}};
    bool late[2];
    ga_late_verdict v;
    CHECK(ga_late_judge(p, 2, 1.0, late, &v) == 0);
    CHECKF(v.late == 1 && late[1], "waited the whole 1 s bound: named (threshold %g)", v.threshold_s);
}

/* The threshold: max(2 s, 10 % of the bound), at most half of it; a silent rank takes no part. */
static void test_threshold(void)
{
    CHECK(ga_late_threshold(8) == GA_LATE_MIN_S);
    CHECK(fabs(ga_late_threshold(600) - 60) < 1e-9);
    CHECK(fabs(ga_late_threshold(1) - 0.5) < 1e-9);
    CHECK(ga_late_threshold(0) == GA_LATE_MIN_S);
    ga_late_peer p[3] = {{true, 5, 30}, {false, 0, 0}, {true, 5, 30}};
    bool late[3];
    ga_late_verdict v;
    CHECK(ga_late_judge(p, 3, 100, late, &v) == 0);
    CHECKF(v.behind == 0 && !late[1], "a silent rank is not behind by count (%d)", v.behind);
}

int main(void)
{
    test_one_wait_behind_at_the_deadline();
    test_waited_on_long();
    test_wait_bound_expired();
    test_threshold();
    return ga_test_finish();
}
