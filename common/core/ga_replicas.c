/* Which replicas agree (ga_replicas.h). */
#include "ga_replicas.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t digest;
    int index;
} entry;

static int by_digest_then_index(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->digest != y->digest)
        return x->digest < y->digest ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int ga_replicas_majority(const uint64_t *digest, int n, int *sharing)
{
    *sharing = 0;
    entry *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!e || n < 1) {
        free(e);
        return -1;
    }
    for (int i = 0; i < n; i++)
        e[i] = (entry){digest[i], i};
    qsort(e, (size_t)n, sizeof *e, by_digest_then_index);
    /* each run of one digest starts at its lowest index: the largest run wins, a tie the lowest first */
    int best = -1, best_count = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && e[j].digest == e[i].digest)
            j++;
        if (j - i > best_count || (j - i == best_count && e[i].index < best)) {
            best = e[i].index;
            best_count = j - i;
        }
        i = j;
    }
    free(e);
    *sharing = best_count;
    return best;
}

int ga_replicas_majority_record(const void *records, int n, size_t stride, size_t offset)
{
    uint64_t *digest = malloc((size_t)n * sizeof *digest);
    int ref = -1, sharing;
    if (digest) {
        const char *base = records;
        for (int i = 0; i < n; i++)
            memcpy(&digest[i], base + (size_t)i * stride + offset, sizeof digest[i]);
        ref = ga_replicas_majority(digest, n, &sharing);
    }
    free(digest);
    return ref >= 0 ? ref : 0;
}
