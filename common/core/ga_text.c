/* Valid UTF-8 from any bytes (ga_text.h). Pure. */
#include "ga_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether byte b continues a sequence (10xxxxxx). */
static int cont(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

size_t ga_utf8_seq(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    if (!s || !s[0])
        return 0;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        return cont(s[1]) ? 2 : 0;
    if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        unsigned lo = s[0] == 0xE0 ? 0xA0 : 0x80, hi = s[0] == 0xED ? 0x9F : 0xBF; /* overlong, surrogates */
        return s[1] >= lo && s[1] <= hi && cont(s[2]) ? 3 : 0;
    }
    if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        unsigned lo = s[0] == 0xF0 ? 0x90 : 0x80, hi = s[0] == 0xF4 ? 0x8F : 0xBF; /* overlong, > U+10FFFF */
        return s[1] >= lo && s[1] <= hi && cont(s[2]) && cont(s[3]) ? 4 : 0;
    }
    return 0;
}

char *ga_utf8_text(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *out = malloc(4 * n + 1); /* every byte written as \xHH at worst */
    if (!out)
        return NULL;
    size_t o = 0;
    while (*s) {
        size_t k = ga_utf8_seq(s);
        if (k) {
            memcpy(out + o, s, k);
            o += k, s += k;
        } else {
            snprintf(out + o, 5, "\\x%02X", (unsigned)(unsigned char)*s);
            o += 4, s++;
        }
    }
    out[o] = '\0';
    return out;
}

json_t *ga_json_text(const char *s)
{
    if (!s)
        return json_null();
    char *t = ga_utf8_text(s);
    json_t *j = t ? json_string(t) : NULL;
    free(t);
    return j;
}
