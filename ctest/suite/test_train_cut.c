/* The training steps' cut after a slow fabric (train_cut.h, issue 44, item 8): which findings are a cause,
 * what the cause says (a link names both ends), and the bounds of the cut timeout. */
#include <math.h>

#include "../ga_test.h"
#include "train_cut.h"

static bool cause_of(const char *text, char *why, size_t len)
{
    json_error_t e;
    json_t *r = json_loads(text, 0, &e);
    bool found = suite_train_cut_cause(r, why, len);
    json_decref(r);
    return found;
}

int main(void)
{
    char why[256];
    CHECK(cause_of(
        "{\"findings\": [{\"severity\": \"fail\", \"code\": \"COMM_SLOW_LINK\", \"host\": \"node02\", "
        "\"peer_host\": \"node05\"}, {\"severity\": \"fail\", \"code\": \"COMM_SLOW_NODE\", "
        "\"host\": \"node03\"}]}",
        why, sizeof why));
    CHECK_STR(why, "COMM_SLOW_LINK on node02 <-> node05 and 1 more");
    CHECK(cause_of("{\"findings\": [{\"severity\": \"fail\", \"code\": \"COMM_BUSBW_LOW\", \"host\": null}]}",
                   why, sizeof why));
    CHECK_STR(why, "COMM_BUSBW_LOW at the job");
    /* a warning is no evidence of a slow fabric; nor is a wrong result or a non-fabric failure */
    CHECK(
        !cause_of("{\"findings\": [{\"severity\": \"warn\", \"code\": \"COMM_SLOW_NODE\", \"host\": \"n1\"}, "
                  "{\"severity\": \"fail\", \"code\": \"COMM_WRONG_RESULT\", \"host\": \"n1\"}, "
                  "{\"severity\": \"fail\", \"code\": \"GEMM_BELOW_MEDIAN\", \"host\": \"n1\"}]}",
                  why, sizeof why));
    CHECK_STR(why, "");
    CHECK(!cause_of("{}", why, sizeof why));

    CHECK(suite_train_cut_timeout(1780, 9) == SUITE_TRAIN_CUT_MIN_S);  /* a small estimate: the floor */
    CHECK(suite_train_cut_timeout(1780, -1) == SUITE_TRAIN_CUT_MIN_S); /* none: the floor */
    CHECK(fabs(suite_train_cut_timeout(1780, 100) - 300) < 1e-9);      /* 3 estimates */
    CHECK(suite_train_cut_timeout(1780, 1000) == 1780);                /* never more than its own */
    CHECK(suite_train_cut_timeout(60, 9) == 60);
    return ga_test_finish();
}
