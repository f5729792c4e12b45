/* Which replicas of a data-parallel model agree (ddp_smoke, lm_train): every rank's parameters end as one
 * 64-bit digest, and the digest most ranks hold is the reference the others are checked against. Pure. */
#ifndef GA_REPLICAS_H
#define GA_REPLICAS_H

#include <stdint.h>

/* The index of a rank holding the digest most ranks hold (a tie: the digest the lowest index holds; that
 * lowest index is returned) and, in *sharing, how many hold it. n >= 1; O(n log n). -1 when memory runs
 * out. */
int ga_replicas_majority(const uint64_t *digest, int n, int *sharing);

#endif
