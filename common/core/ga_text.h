/* Text from outside (the environment, NCCL's log lines, interface and device names, other programs' output)
 * made valid UTF-8 before it reaches jansson: json_string returns NULL on invalid UTF-8, and a NULL member
 * drops its whole record part silently (issue 45, item 5). Pure. */
#ifndef GA_TEXT_H
#define GA_TEXT_H

#include <jansson.h>
#include <stddef.h>

/* The length of the valid UTF-8 sequence at s (1 to 4 bytes; no overlong form, no surrogate, nothing past
 * U+10FFFF), 0 when s starts none or at the terminating NUL. */
size_t ga_utf8_seq(const char *s);

/* s as valid UTF-8: each byte that starts no valid sequence written as the four characters "\xHH". A new
 * string (NULL for NULL, or when out of memory). */
char *ga_utf8_text(const char *s);

/* json_string of ga_utf8_text(s): never NULL for text (only when out of memory); json_null() for NULL. */
json_t *ga_json_text(const char *s);

#endif
