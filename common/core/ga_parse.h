/* Strict parsers for command-line values: the whole string must be consumed, ranges are checked. They return
 * 0 on success and -1 with a message in err otherwise. */
#ifndef GA_PARSE_H
#define GA_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Byte sizes as nccl-tests reads them: plain bytes or a K, M or G suffix (binary: 1K = 1024), and T. */
int ga_parse_size(const char *s, uint64_t *out, char *err, size_t errlen);
int ga_parse_long(const char *s, long min, long max, long *out, char *err, size_t errlen);
int ga_parse_double(const char *s, double min, double max, double *out, char *err, size_t errlen);
/* --relative fail|warn: whether a member worse than its peers (the outlier rule) fails the run or is a
 * warning. */
int ga_parse_relative(const char *s, bool *warn, char *err, size_t errlen);
/* Splits a comma-separated list in place; returns the number of items, or -1 if more than max. */
int ga_split_list(char *s, char **items, int max);

#endif
