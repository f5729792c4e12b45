#include "hostlist.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite_util.h"

typedef struct {
    const char *host;
    size_t plen;        /* length of the prefix; the whole name when it has no trailing number */
    const char *digits; /* the trailing number as written, or NULL */
    unsigned long long value;
} hl_item;

static int cmp_items(const void *a, const void *b)
{
    const hl_item *x = a, *y = b;
    size_t m = x->plen < y->plen ? x->plen : y->plen;
    int c = strncmp(x->host, y->host, m);
    if (c)
        return c;
    if (x->plen != y->plen)
        return x->plen < y->plen ? -1 : 1;
    if (!x->digits || !y->digits)
        return (x->digits != NULL) - (y->digits != NULL);
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return strcmp(x->digits, y->digits);
}

/* A number written with a leading zero keeps its width; Slurm joins "9" and "10" in one range, "09" and
 * "10" too (same width), but never "1" and "01". */
static bool padded(const char *d)
{
    return d[0] == '0' && d[1];
}

static bool joins(const hl_item *a, const hl_item *b)
{
    size_t wa = strlen(a->digits), wb = strlen(b->digits);
    return b->value == a->value + 1 && (wa == wb || (!padded(a->digits) && !padded(b->digits)));
}

char *suite_hostlist_compress(const char *const *hosts, size_t n)
{
    hl_item *it = calloc(n ? n : 1, sizeof *it);
    if (!it)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *h = hosts[i];
        size_t len = strlen(h), p = len;
        while (p > 0 && isdigit((unsigned char)h[p - 1]))
            p--;
        /* A number of more than 18 digits would not fit: such a name stays whole. */
        bool num = p < len && len - p <= 18;
        hl_item x = {h, num ? p : len, num ? h + p : NULL, num ? strtoull(h + p, NULL, 10) : 0};
        bool dup = false;
        for (size_t j = 0; j < m && !dup; j++) /* duplicates are rare and lists short: a scan will do */
            dup = strcmp(it[j].host, h) == 0;
        if (!dup)
            it[m++] = x;
    }
    qsort(it, m, sizeof *it, cmp_items);
    sbuf b;
    sbuf_init(&b);
    for (size_t i = 0; i < m;) {
        if (i)
            sbuf_puts(&b, ",");
        size_t g = i + 1; /* the group: the same prefix, each with a number */
        while (it[i].digits && g < m && it[g].digits && it[g].plen == it[i].plen &&
               strncmp(it[g].host, it[i].host, it[i].plen) == 0)
            g++;
        if (g - i == 1) {
            sbuf_puts(&b, it[i].host);
            i = g;
            continue;
        }
        sbuf_printf(&b, "%.*s[", (int)it[i].plen, it[i].host);
        for (size_t r = i; r < g;) {
            size_t e = r;
            while (e + 1 < g && joins(&it[e], &it[e + 1]))
                e++;
            sbuf_printf(&b, "%s%s", r > i ? "," : "", it[r].digits);
            if (e > r)
                sbuf_printf(&b, "-%s", it[e].digits);
            r = e + 1;
        }
        sbuf_puts(&b, "]");
        i = g;
    }
    free(it);
    return sbuf_finish(&b);
}

/* ---- helpers ---- */
