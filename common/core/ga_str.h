/* String helpers. Pure. */
#ifndef GA_STR_H
#define GA_STR_H

#include <stdbool.h>
#include <stddef.h>

/* True when both are set and equal: a field missing from a JSON document (NULL) equals nothing. */
bool ga_streq(const char *a, const char *b);

/* The length of s's longest prefix of at most max bytes that ends between words (trailing spaces and
 * separators dropped): strlen(s) when s fits. A single word longer than max is cut, on a UTF-8 boundary. A
 * line a person reads is never cut mid-word (issue 41, observation 10). */
size_t ga_str_word_prefix(const char *s, size_t max);

/* src into dst (len bytes): whole when it has at most max bytes, else its word prefix and "…". */
void ga_str_clip(char *dst, size_t len, const char *src, size_t max);

#endif
