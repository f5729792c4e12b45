/* Link findings (issue 44, item 6): a slow pair whose two ends are fine with their other partners names the
 * link or path between them, not either node. allreduce_bw reports it as COMM_SLOW_LINK, placed on the
 * pair's first end, its message naming both ("pair A node 0 <-> B node 3 (round 2): ... neither end is slow
 * with other partners"). The merge marks such a finding with "link": [A, B]; the verdict then keeps it off
 * both nodes (neither is abnormal, drained or resumed for it) and lists it in "abnormal_links". Pure. */
#ifndef LINKS_H
#define LINKS_H

#include <jansson.h>
#include <stdbool.h>

#define SUITE_LINK_CODE "COMM_SLOW_LINK"

/* Marks each link finding of the summary s with "link": [host, peer] (the peer by its one name, aliases:
 * {alias: host}). Not marked, so left on its node as before: two ends on one host (a link inside a node),
 * a message that does not name two ends, and an end that the program's own pairs show with no unflagged
 * partner (one round or two members: a slow node cannot be told from a slow link). */
void suite_links_mark(json_t *s, const json_t *aliases);

/* The two ends of a marked link finding, or false. */
bool suite_link_ends(const json_t *finding, const char **a, const char **b);

/* The abnormal links of the findings: [{hosts: [a, b], program, fault_codes, message}], one per pair of
 * ends (either order), in the findings' order. New reference. */
json_t *suite_abnormal_links(const json_t *findings);

/* {host: true} for every end of an abnormal link. New reference. */
json_t *suite_link_ends_set(const json_t *summary);

#endif
