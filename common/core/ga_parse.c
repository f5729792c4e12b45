#include "ga_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ga_parse_size(const char *s, uint64_t *out, char *err, size_t errlen)
{
    if (!s || !*s || !isdigit((unsigned char)s[0])) {
        snprintf(err, errlen, "'%s' is not a size (bytes, or a number with K, M, G or T)", s ? s : "");
        return -1;
    }
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mult = 1;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        mult = 1ull << 10;
        end++;
        break;
    case 'm':
    case 'M':
        mult = 1ull << 20;
        end++;
        break;
    case 'g':
    case 'G':
        mult = 1ull << 30;
        end++;
        break;
    case 't':
    case 'T':
        mult = 1ull << 40; /* mem_bw's limit is 1T: a limit the parser could not reach */
        end++;
        break;
    default:
        end = NULL;
    }
    if (errno || !end || *end != '\0' || (v && mult > UINT64_MAX / v)) {
        snprintf(err, errlen, "'%s' is not a size (bytes, or a number with K, M, G or T)", s);
        return -1;
    }
    *out = (uint64_t)v * mult;
    return 0;
}

int ga_parse_long(const char *s, long min, long max, long *out, char *err, size_t errlen)
{
    errno = 0;
    char *end = NULL;
    long v = (s && *s) ? strtol(s, &end, 10) : 0;
    if (!s || !*s || errno || *end != '\0') {
        snprintf(err, errlen, "'%s' is not an integer", s ? s : "");
        return -1;
    }
    if (v < min || v > max) {
        snprintf(err, errlen, "%ld is out of range [%ld, %ld]", v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int ga_parse_double(const char *s, double min, double max, double *out, char *err, size_t errlen)
{
    errno = 0;
    char *end = NULL;
    double v = (s && *s) ? strtod(s, &end) : 0;
    if (!s || !*s || errno || *end != '\0' || !isfinite(v)) {
        snprintf(err, errlen, "'%s' is not a number", s ? s : "");
        return -1;
    }
    if (v < min || v > max) {
        snprintf(err, errlen, "%g is out of range [%g, %g]", v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int ga_split_list(char *s, char **items, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max)
            return -1;
        items[n++] = tok;
    }
    return n;
}

int ga_parse_relative(const char *s, bool *warn, char *err, size_t errlen)
{
    if (strcmp(s, "fail") != 0 && strcmp(s, "warn") != 0) {
        snprintf(err, errlen, "'%s' is neither 'fail' nor 'warn'", s);
        return -1;
    }
    *warn = strcmp(s, "warn") == 0;
    return 0;
}
