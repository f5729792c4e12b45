/* String helpers. Pure. */
#ifndef GA_STR_H
#define GA_STR_H

#include <stdbool.h>

/* True when both are set and equal: a field missing from a JSON document (NULL) equals nothing. */
bool ga_streq(const char *a, const char *b);

#endif
