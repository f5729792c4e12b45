/* allreduce_bw's pairs (bad-link isolation): the schedule and the analysis are shared (ga_pairs.h, over a
 * neutral figure, the busbw here); what allreduce_bw concludes from them, its findings, is its own. */
#ifndef AR_PAIRS_H
#define AR_PAIRS_H

#include <stdbool.h>

#include "ga_findings.h"
#include "ga_pairs.h"

/* Findings: COMM_SLOW_NODE for each suspect, COMM_SLOW_LINK for each slow link.
 * by_rank: members are ranks of one node (names the rank and GPU rather than the node). */
void ar_pairs_findings(const ga_pair *pairs, int n, const ga_pairs_verdict *v, double tolerance, bool by_rank,
                       ga_findings *f);

#endif
