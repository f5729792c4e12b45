#include "train_cut.h"

#include <stdio.h>
#include <string.h>

#include "suite_util.h"

/* allreduce_bw's findings that mean a collective is slow, whichever member or link it names: a slow node,
 * link or rail, the world under its floor, a node's own collectives slow or unlike its peers'. */
static const char *const slow_fabric_codes[] = {"COMM_SLOW_NODE",      "COMM_SLOW_LINK",
                                                "COMM_SLOW_RAIL",      "COMM_BUSBW_LOW",
                                                "COMM_NODE_BUSBW_LOW", "COMM_NODE_PEERS_DIFFER"};

static bool slow_fabric_code(const char *code)
{
    for (size_t i = 0; i < sizeof slow_fabric_codes / sizeof slow_fabric_codes[0]; i++)
        if (strcmp(code, slow_fabric_codes[i]) == 0)
            return true;
    return false;
}

bool suite_train_cut_cause(const json_t *report, char *why, size_t len)
{
    size_t i, found = 0;
    json_t *f;
    why[0] = '\0';
    json_array_foreach(sj_arr(report, "findings"), i, f) {
        if (strcmp(sj_str(f, "severity", ""), "fail") != 0 || !slow_fabric_code(sj_str(f, "code", "")))
            continue;
        if (found++ == 0) {
            const char *host = sj_str(f, "host", NULL), *peer = sj_str(f, "peer_host", NULL);
            snprintf(why, len, "%s %s %.120s%s%.120s", sj_str(f, "code", ""), host ? "on" : "at",
                     host ? host : "the job", host && peer ? " <-> " : "", host && peer ? peer : "");
        }
    }
    if (found > 1)
        snprintf(why + strlen(why), len - strlen(why), " and %zu more", found - 1);
    return found > 0;
}

double suite_train_cut_timeout(double normal_s, double estimate_s)
{
    double cut = estimate_s > 0 ? SUITE_TRAIN_CUT_ESTIMATES * estimate_s : 0;
    if (cut < SUITE_TRAIN_CUT_MIN_S)
        cut = SUITE_TRAIN_CUT_MIN_S;
    return cut < normal_s ? cut : normal_s;
}
