#include "ga_str.h"

#include <string.h>

bool ga_streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

size_t ga_str_word_prefix(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return n;
    size_t cut = max;
    while (cut > 0 && s[cut] != ' ') /* s[max] exists: n > max */
        cut--;
    if (cut == 0) { /* one word longer than max: at least never inside a UTF-8 character */
        cut = max;
        while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
            cut--;
    }
    while (cut > 0 && strchr(" ;,:", s[cut - 1])) /* "word;…" reads as a cut, "word; …" as a gap */
        cut--;
    return cut;
}

void ga_str_clip(char *dst, size_t len, const char *src, size_t max)
{
    if (len == 0)
        return;
    if (max + 4 > len) /* room for the ellipsis (3 bytes of UTF-8) and the terminator */
        max = len > 4 ? len - 4 : 0;
    size_t n = ga_str_word_prefix(src, max);
    memcpy(dst, src, n);
    if (n < strlen(src))
        memcpy(dst + n, "\xe2\x80\xa6", 3), n += 3; /* U+2026 HORIZONTAL ELLIPSIS */
    dst[n] = '\0';
}
