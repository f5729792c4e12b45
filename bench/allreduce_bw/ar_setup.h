/* How nccl-tests' -u -G -R -x -y -M set up a backend: the part of the command line both ar_opts (MPI-free)
 * and the backends (ar_backend.h) read. */
#ifndef AR_SETUP_H
#define AR_SETUP_H

#include <stdbool.h>
#include <stddef.h>

#include "ar_types.h"

/* nccl-tests' flags that change how the buffers and the calls are set up (ar_opts.h). */
typedef struct {
    int unalign;        /* -u: buffers start this many elements past their allocation (both backends) */
    int graph_launches; /* -G */
    int reg_mode;       /* -R: 0 none, 1 ncclCommRegister, 2 ncclCommWindowRegister (symmetric) */
    int cta_policy;     /* -x: ncclConfig_t.CTAPolicy, -1 NCCL's default */
    bool stream_null;   /* -y 1: the default stream */
    bool memory_report; /* -M 1 */
} ar_backend_setup;

/* The bytes past max_bytes that -u needs: unalign elements of the largest type (8 bytes), as nccl-tests. */
static inline size_t ar_unalign_pad(const ar_backend_setup *s)
{
    return s ? (size_t)s->unalign * 8 : 0;
}

/* Where -u puts a buffer for this call's type. */
static inline char *ar_unaligned(char *base, const ar_backend_setup *s, ar_dtype type)
{
    return base + (s ? (size_t)s->unalign * ar_dtype_get(type)->size : 0);
}

#endif
