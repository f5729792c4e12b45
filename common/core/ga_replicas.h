/* Which replicas of a data-parallel model agree (ddp_smoke, lm_train): every rank's parameters end as one
 * 64-bit digest, and the digest most ranks hold is the reference the others are checked against. Pure. */
#ifndef GA_REPLICAS_H
#define GA_REPLICAS_H

#include <stddef.h>
#include <stdint.h>

/* The index of a rank holding the digest most ranks hold (a tie: the digest the lowest index holds; that
 * lowest index is returned) and, in *sharing, how many hold it. n >= 1; O(n log n). -1 when memory runs
 * out. */
int ga_replicas_majority(const uint64_t *digest, int n, int *sharing);

/* The same over n records of stride bytes each, whose digest stands at offset bytes into the record (the
 * programs' gathered records): the index of a record holding the majority digest, 0 when memory runs out. */
int ga_replicas_majority_record(const void *records, int n, size_t stride, size_t offset);

#endif
