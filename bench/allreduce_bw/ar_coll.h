/* One thin descriptor per collective (nccl-tests' good idea): element counts from the size and the number of
 * ranks, the bus bandwidth factor, the input every rank writes and the output it must read back. The harness
 * and the analysis know nothing else about a collective; each backend adds the call itself (ar_host.c,
 * ar_gpu.c). Adding a collective: an enum value, one descriptor here, one case per backend. Pure. */
#ifndef AR_COLL_H
#define AR_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ar_types.h"

typedef enum {
    AR_ALLREDUCE,
    AR_ALLGATHER,
    AR_REDUCE_SCATTER,
    AR_BROADCAST,
    AR_REDUCE,
    AR_ALLTOALL,
    AR_SENDRECV,
    AR_GATHER,
    AR_SCATTER,
    AR_HYPERCUBE, /* an allgather made of log2(n) pairwise exchanges; n a power of two */
    AR_NCOLLS
} ar_coll_id;

/* Element counts of one operation, as nccl-tests counts them. In place, the input of rank r lies at
 * recvbuf + send_inplace_off * r elements and its output at recvbuf + recv_inplace_off * r. */
typedef struct {
    size_t send_count, recv_count;
    size_t param_count; /* the count argument of the call (per peer for alltoall) */
    size_t send_inplace_off, recv_inplace_off;
} ar_counts;

/* What the data of one check depends on. */
typedef struct {
    ar_dtype type;
    ar_op op;
    int nranks, root;
    uint32_t seed; /* varies per size so that a stale buffer from the previous size cannot pass */
    ar_counts counts;
} ar_pattern;

typedef struct {
    const char *name;
    bool reduces; /* takes a reduction operation */
    bool rooted;  /* has a root (broadcast, reduce) */
    /* count: elements of the size; esize: bytes per element (per-rank counts are aligned to 16 bytes) */
    void (*counts)(size_t count, size_t esize, int nranks, ar_counts *out);
    double (*bus_factor)(int nranks);
    /* algbw's share of the printed bytes, NULL for 1: hypercube moves (n-1)/n of its receive buffer */
    double (*alg_factor)(int nranks);
    /* the redop column for data movement ("none"; nccl-tests prints "" for hypercube) */
    const char *no_op_name;
} ar_coll;

const ar_coll *ar_coll_get(ar_coll_id id);
int ar_coll_parse(const char *name, ar_coll_id *out);
/* The redop column of a line: the op's name, or the collective's no_op_name for data movement. */
const char *ar_coll_op_label(ar_coll_id id, ar_op op);
/* Why a collective cannot run on nranks ranks (hypercube needs a power of two), or NULL. */
const char *ar_coll_unsupported(ar_coll_id id, int nranks);

/* The counts of a size in bytes (count = bytes / element size, as nccl-tests does), and the figures of a
 * measurement: bytes = max(send, recv) bytes, the size nccl-tests prints and divides by the time. */
void ar_coll_counts(ar_coll_id id, size_t size_bytes, ar_dtype type, int nranks, ar_counts *out);
size_t ar_coll_bytes(const ar_counts *c, ar_dtype type);
/* algbw = bytes x alg_factor / time (GB = 1e9), busbw = algbw * factor(nranks). 0 when time is not positive.
 */
void ar_coll_bandwidth(ar_coll_id id, size_t bytes, double time_s, int nranks, double *algbw, double *busbw);

/* The tolerance of the check in ULPs: 0 (exact) except avg on floating-point types, whose 1/n scaling and
 * reduction order round: nranks + 1 ULPs of the expected value. */
double ar_check_tolerance_ulps(ar_dtype type, ar_op op, int nranks);

/* Why the result of type and op cannot be checked, or NULL. fp8 avg: e4m3 keeps 3 mantissa bits and e5m2 2,
 * so the scaled partial sums round by a quarter of the value or more; a tolerance that wide would accept
 * almost any output, so the check is skipped (#wrong reads "N/A") rather than pretending. */
const char *ar_check_skip_reason(ar_dtype type, ar_op op);

/* Fills rank's input (send_count elements) into buf. */
void ar_fill_input(ar_coll_id id, const ar_pattern *p, int rank, void *buf);
/* Counts the wrong elements of rank's output (recv_count elements) in buf. */
int64_t ar_count_wrong(ar_coll_id id, const ar_pattern *p, int rank, const void *buf);

#endif
