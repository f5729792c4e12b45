/* Measure again before calling it: the loop every program with a relative check runs after its measurement.
 * The records are gathered to rank 0; while rank 0's (pure) analysis finds suspects and passes remain, rank 0
 * decides what to measure again and broadcasts it, every rank measures that again together (so that the
 * figures stay comparable on a shared node and every rank enters the same collectives), keeping the best
 * of its measurements and all of them in its record, and the records are gathered again. A fault is slow
 * every time; contention on a shared host only ever slows a measurement, so the best of N is the estimate
 * least disturbed by noise. */
#ifndef GA_REMEASURE_H
#define GA_REMEASURE_H

#include <stddef.h>

#include "ga_outlier.h" /* GA_REMEASURE_MAX */
#include "ga_runtime.h"

typedef struct {
    size_t record_size;
    /* Rank 0: what the gathered records call for measuring again, as a bit mask (0: nothing), with a short
     * description for the log ("fp32: rank 3 below its bound"). */
    unsigned (*suspects)(const void *all, int n, void *user, char *why, size_t why_len);
    /* Every rank, the same mask on each: measures the masked items again into its own record (keeping the
     * best, appending the measurement). */
    void (*measure_again)(unsigned mask, void *mine, void *user);
    const char *tag;     /* log tag: "COMPUTE" */
    const char *program; /* for the log line */
} ga_remeasure_spec;

/* Gathers the records and remeasures as above, at most max_passes times (0: never). On rank 0 *all receives
 * the final records (malloc'd, free it); elsewhere NULL. Returns the passes run, the same on every rank.
 * Collective over MPI_COMM_WORLD. */
int ga_remeasure_loop(const ga_ctx *ctx, const ga_remeasure_spec *spec, int max_passes, void *mine,
                      void **all, void *user);

#endif
