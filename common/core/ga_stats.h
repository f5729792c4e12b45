/* Statistics over samples, for the analyses and the front-end alike. Pure. */
#ifndef GA_STATS_H
#define GA_STATS_H

#include <stddef.h>

/* Median of v[0..n-1], the mean of the two middle values when n is even; 0 when n is 0. Sorts v in place
 * (ascending), so that a caller may also read the best and worst sample from it afterwards; pass a copy to
 * keep the order. */
double ga_median(double *v, size_t n);

/* qsort comparator for doubles, ascending. */
int ga_cmp_double(const void *a, const void *b);

#endif
