/* The training programs' shared pieces (ddp_smoke, lm_train): the replicas' majority, communication's share
 * of the step, and the steps that fit the time. */
#include <stdint.h>

#include "ga_commshare.h"
#include "ga_replicas.h"
#include "ga_test.h"
#include "ga_train_budget.h"

static void test_majority(void)
{
    int sharing;
    uint64_t one[] = {7};
    CHECK(ga_replicas_majority(one, 1, &sharing) == 0 && sharing == 1);
    uint64_t most[] = {5, 9, 9, 5, 9};
    CHECK(ga_replicas_majority(most, 5, &sharing) == 1 && sharing == 3);
    /* a tie goes to the digest the lowest rank holds, whatever the digests' order */
    uint64_t tie[] = {9, 5, 5, 9};
    CHECK(ga_replicas_majority(tie, 4, &sharing) == 0 && sharing == 2);
    uint64_t all_differ[] = {4, 3, 2, 1};
    CHECK(ga_replicas_majority(all_differ, 4, &sharing) == 0 && sharing == 1);
}

static void test_comm_share(void)
{
    ga_comm_verdict v;
    /* a loaded host's fault-free share (ddp_smoke, 4 ranks on 2 cores at a load of 8.7: 80-84 %) */
    double wait_ok[] = {2.65, 2.70, 2.71, 2.78}, step_ok[] = {3.3, 3.3, 3.3, 3.3};
    ga_comm_judge(wait_ok, step_ok, 4, &v);
    CHECK(!v.dominates && v.share > 0.8 && v.share < 0.83);
    /* rank 2 arrives 60 ms late each step: the others wait, it does not */
    double wait_late[] = {67.2, 66.8, 3.2, 67.0}, step_late[] = {68.7, 68.3, 68.5, 68.2};
    ga_comm_judge(wait_late, step_late, 4, &v);
    CHECKF(v.dominates && v.waited_for == 2, "dominates %d, waited for %d", v.dominates, v.waited_for);
    /* every rank waits alike: the fabric, no rank named */
    double wait_fab[] = {98, 97, 99, 98}, step_fab[] = {100, 100, 100, 100};
    ga_comm_judge(wait_fab, step_fab, 4, &v);
    CHECK(v.dominates && v.waited_for == -1 && v.others_wait == 98);
    /* just below the bound: not dominated */
    double wait_below[] = {94, 94, 94, 94};
    ga_comm_judge(wait_below, step_fab, 4, &v);
    CHECK(!v.dominates);
    /* two ranks: the lowest share is left out, so one late rank still shows */
    double wait_two[] = {98, 1}, step_two[] = {100, 100};
    ga_comm_judge(wait_two, step_two, 2, &v);
    CHECK(v.dominates && v.waited_for == 1);
    /* a failed rank (no step) is left out; one rank alone is never judged */
    double wait_one[] = {98, 98}, step_one[] = {100, 0};
    ga_comm_judge(wait_one, step_one, 2, &v);
    CHECK(!v.dominates && v.share == 0);
}

static void test_fit(void)
{
    CHECK(ga_train_fit(0.01, 5.0, 3, 100000) == 503); /* 500 more steps fit */
    CHECK(ga_train_fit(0.01, 5.0, 3, 300) == 300);    /* all that were asked */
    CHECK(ga_train_fit(0.5, 0.2, 3, 300) == 3);       /* not one more */
    CHECK(ga_train_fit(0.5, -1.0, 3, 300) == 3);      /* the time is spent */
    CHECK(ga_train_fit(0, 5.0, 3, 300) == 300);       /* no pace yet: no cut */
}

int main(void)
{
    test_majority();
    test_comm_share();
    test_fit();
    return ga_test_finish();
}
