/* Link findings as allreduce_bw writes them (issue 44, item 6): the merge reads a COMM_SLOW_LINK's two ends
 * from the message ar_pairs_findings itself writes, so that a change of its wording fails here, not silently
 * in the merge; and leaves on its node a link inside one node, or one whose report shows an end paired with
 * nobody else. */
#include <string.h>

#include "../ga_test.h"
#include "ar_report.h"
#include "links.h"
#include "suite_util.h"

/* The findings allreduce_bw makes of one slow link between hosts a and b (by node, or by rank), tagged with
 * their program as the merge tags them, in a summary with the given pairs figures (NULL: none). */
static json_t *summary_of_link(const char *a, const char *b, bool by_rank, json_t *pairs)
{
    ga_pair p = {.round = 2,
                 .member = {1, 4},
                 .rank = {8, 32},
                 .figure = 0.02,
                 .measured = 2,
                 .slow_link = true,
                 .flagged = true,
                 .bound = 0.8};
    snprintf(p.host[0], sizeof p.host[0], "%s", a);
    snprintf(p.host[1], sizeof p.host[1], "%s", b);
    ga_pairs_verdict v = {.median = 1.1};
    ga_findings f;
    ga_findings_init(&f);
    ar_pairs_findings(&p, 1, &v, 0.5, by_rank, &f);
    json_t *findings = ga_findings_to_json(&f), *e;
    ga_findings_free(&f);
    size_t i;
    json_array_foreach(findings, i, e)
        json_object_set_new(e, "program", json_string("allreduce_bw"));
    json_t *figures = json_pack("{s:{s:o}}", "allreduce_bw", "pairs", pairs ? pairs : json_null());
    return json_pack("{s:o, s:o}", "findings", findings, "figures", figures);
}

static json_t *pair(const char *a, const char *b, bool flagged)
{
    return json_pack("{s:[s,s], s:b}", "hosts", a, b, "flagged", flagged);
}

int main(void)
{
    json_t *aliases = json_object();
    const char *a, *b;
    for (int by_rank = 0; by_rank < 2; by_rank++) { /* "node 1" or "rank 8" in the message */
        json_t *s = summary_of_link("node1", "node4", by_rank, NULL);
        suite_links_mark(s, aliases);
        const json_t *f = json_array_get(sj_arr(s, "findings"), 0);
        CHECK_STR(sj_str(f, "code", ""), SUITE_LINK_CODE);
        CHECKF(suite_link_ends(f, &a, &b) && strcmp(a, "node1") == 0 && strcmp(b, "node4") == 0,
               "by_rank %d: no link node1 <-> node4 read from '%s'", by_rank, sj_str(f, "message", ""));
        json_t *links = suite_abnormal_links(sj_arr(s, "findings"));
        CHECK(json_array_size(links) == 1);
        json_decref(links);
        json_decref(s);
    }
    /* Two ranks of one node: the node's own link (NVLink, shared memory), not a link between nodes. */
    json_t *s = summary_of_link("node1", "node1", true, NULL);
    suite_links_mark(s, aliases);
    CHECK(!suite_link_ends(json_array_get(sj_arr(s, "findings"), 0), &a, &b));
    json_decref(s);
    /* The report's pairs: both ends fine with another partner is a link; node4 paired with node1 alone
     * (one round) is not, and the finding stays on node1. */
    json_t *pairs = json_pack("{s:[o,o,o]}", "pairs", pair("node1", "node4", true),
                              pair("node1", "node2", false), pair("node4", "node3", false));
    s = summary_of_link("node1", "node4", false, pairs);
    suite_links_mark(s, aliases);
    CHECK(suite_link_ends(json_array_get(sj_arr(s, "findings"), 0), &a, &b));
    json_decref(s);
    pairs = json_pack("{s:[o,o]}", "pairs", pair("node1", "node4", true), pair("node1", "node2", false));
    s = summary_of_link("node1", "node4", false, pairs);
    suite_links_mark(s, aliases);
    CHECK(!suite_link_ends(json_array_get(sj_arr(s, "findings"), 0), &a, &b));
    json_decref(s);
    /* The peer by its one name: an alias the launcher used maps to the host the reports use. */
    json_object_set_new(aliases, "node4", json_string("gpu-node-04"));
    s = summary_of_link("node1", "node4", false, NULL);
    suite_links_mark(s, aliases);
    CHECK(suite_link_ends(json_array_get(sj_arr(s, "findings"), 0), &a, &b) && strcmp(b, "gpu-node-04") == 0);
    json_decref(s);
    /* allreduce_bw names the other end in peer_host (issue 46, item 4): read before the message, which need
     * not name it; by its one name too. A report without peer_host: the message, as before. */
    s = summary_of_link("node1", "node4", false, NULL);
    json_t *f = json_array_get(sj_arr(s, "findings"), 0);
    CHECK_STR(sj_str(f, "peer_host", ""), "node4");
    json_object_set_new(f, "message", json_string("slow pair in round 2, neither end slow with others"));
    suite_links_mark(s, aliases);
    CHECK(suite_link_ends(f, &a, &b) && strcmp(a, "node1") == 0 && strcmp(b, "gpu-node-04") == 0);
    json_decref(s);
    s = summary_of_link("node1", "node4", false, NULL);
    json_object_del(json_array_get(sj_arr(s, "findings"), 0), "peer_host");
    suite_links_mark(s, aliases);
    CHECK(suite_link_ends(json_array_get(sj_arr(s, "findings"), 0), &a, &b) && strcmp(b, "gpu-node-04") == 0);
    json_decref(s);
    json_decref(aliases);
    return ga_test_finish();
}
