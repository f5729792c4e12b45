#include "ar_screen.h"

#include <stdlib.h>

#include "ar_budget.h"
#include "ga_stats.h"

/* Pair i's busbw over the median of its reference (the other pairs of its round when there are enough of
 * them, else every other pair); 0 when there is no reference. *own_round: the reference is its round's. x:
 * scratch of n. */
static double ratio_of(const ar_screen_pair *p, int n, int i, double *x, bool *own_round)
{
    size_t k = 0;
    for (int j = 0; j < n; j++)
        if (j != i && p[j].busbw > 0 && p[j].round == p[i].round)
            x[k++] = p[j].busbw;
    *own_round = k >= AR_SCREEN_ROUND_PEERS;
    if (!*own_round) {
        k = 0;
        for (int j = 0; j < n; j++)
            if (j != i && p[j].busbw > 0)
                x[k++] = p[j].busbw;
    }
    if (!k || p[i].busbw <= 0)
        return 0;
    double ref = ga_median(x, k);
    return ref > 0 ? p[i].busbw / ref : 0;
}

/* Member m's kind from the ratios of the pairs it is in. Low needs every pair held to its own round: a
 * reference pooled over rounds mixes loads (4 ranks on 2 cores showed a healthy rank 4x below that way). */
static ar_screen_kind member_kind(const ar_screen_pair *p, const double *ratio, const bool *own, int n, int m,
                                  int *pairs, int *below, double *worst)
{
    int far = 0, low = 0;
    *pairs = 0;
    *worst = 0;
    for (int i = 0; i < n; i++) {
        if (ratio[i] <= 0 || (p[i].member[0] != m && p[i].member[1] != m))
            continue;
        (*pairs)++;
        far += ratio[i] * AR_FAR_FACTOR < 1.0;
        low += own[i] && ratio[i] * AR_LOW_FACTOR < 1.0;
        *worst = *pairs == 1 || ratio[i] < *worst ? ratio[i] : *worst;
    }
    if (far >= AR_FAR_TIMES) {
        *below = far;
        return AR_SCREEN_FAR;
    }
    *below = low;
    return *pairs >= AR_FAR_TIMES && low == *pairs ? AR_SCREEN_LOW : AR_SCREEN_NONE;
}

int ar_screen_judge(const ar_screen_pair *p, int n, int members, ar_screen_verdict *out)
{
    *out = (ar_screen_verdict){.member = -1};
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x),
           *ratio = malloc((size_t)(n > 0 ? n : 1) * sizeof *ratio);
    bool *own = malloc((size_t)(n > 0 ? n : 1) * sizeof *own);
    if (!x || !ratio || !own) {
        free(x);
        free(ratio);
        free(own);
        return -1;
    }
    for (int i = 0; i < n; i++)
        ratio[i] = ratio_of(p, n, i, x, &own[i]);
    size_t k = 0;
    for (int i = 0; i < n; i++)
        if (p[i].busbw > 0)
            x[k++] = p[i].busbw;
    out->median = k ? ga_median(x, k) : 0;
    for (int m = 0; m < members; m++) {
        int pairs, below;
        double worst;
        ar_screen_kind kind = member_kind(p, ratio, own, n, m, &pairs, &below, &worst);
        bool better = kind > out->kind || (kind == out->kind && kind != AR_SCREEN_NONE && worst < out->worst);
        if (kind != AR_SCREEN_NONE && better)
            *out = (ar_screen_verdict){kind, m, pairs, below, worst, out->median};
    }
    free(x);
    free(ratio);
    free(own);
    return 0;
}
