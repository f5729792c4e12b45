/* The typed half of the option table (ga_cli.h): one parse per type, so that an option whose table row names
 * its type, range and destination needs no hand-written case in its program; and the escaping of values
 * echoed in error lines. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ga_cli.h"
#include "ga_parse.h"

const char *ga_opt_type_name(ga_opt_type t)
{
    static const char *const names[] = {"untyped",    "flag",   "int",  "real", "size",
                                        "percentage", "string", "list", "enum", "path"};
    return (size_t)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

bool ga_cli_unit_shown(const char *metavar, const char *unit)
{
    if (!unit || !*unit)
        return false;
    size_t n = strlen(unit);
    for (const char *m = metavar; m && *m; m++)
        if (strncasecmp(m, unit, n) == 0)
            return false;
    return true;
}

static bool has_range(const ga_option *o)
{
    return o->min != 0 || o->max != 0;
}

static int store_size(const ga_option *o, const char *arg, uint64_t *dest, char *err, size_t errlen)
{
    uint64_t v = 0;
    if (ga_parse_size(arg, &v, err, errlen))
        return -1;
    if (has_range(o) && ((double)v < o->min || (double)v > o->max)) {
        char shown[96];
        ga_cli_escape(arg, shown, sizeof shown);
        snprintf(err, errlen, "'%s': between %.0f and %.0f bytes", shown, o->min, o->max);
        return -1;
    }
    *dest = v;
    return 0;
}

static int store_text(const ga_option *o, const char *arg, char *dest, char *err, size_t errlen)
{
    if ((o->flags & GA_OPT_NONEMPTY) && !*arg) {
        snprintf(err, errlen, "an empty value");
        return -1;
    }
    if (strlen(arg) >= o->cap) {
        snprintf(err, errlen, "longer than %zu characters", o->cap - 1);
        return -1;
    }
    memcpy(dest, arg, strlen(arg) + 1);
    return 0;
}

int ga_cli_store_typed(const ga_option *o, const char *arg, void *program_opts, char *err, size_t errlen)
{
    void *dest = (char *)program_opts + (o->at - 1);
    double lo = has_range(o) ? o->min : -1e300, hi = has_range(o) ? o->max : 1e300;
    switch (o->type) {
    case GA_OPT_FLAG:
        *(bool *)dest = true;
        return 0;
    case GA_OPT_INT: {
        long v = 0;
        /* (no range: every int; a double of +-1e300 converted to long would be undefined) */
        long min = has_range(o) ? (long)o->min : INT_MIN, max = has_range(o) ? (long)o->max : INT_MAX;
        if (ga_parse_long(arg, min, max, &v, err, errlen))
            return -1;
        *(int *)dest = (int)v;
        return 0;
    }
    case GA_OPT_REAL:
        return ga_parse_double(arg, lo, hi, dest, err, errlen);
    case GA_OPT_SIZE:
        return store_size(o, arg, dest, err, errlen);
    case GA_OPT_PCT:
        return o->flags & GA_OPT_FRACTION ? ga_cli_parse_pct_fraction(arg, lo, hi, dest, err, errlen)
                                          : ga_cli_parse_pct(arg, lo, hi, dest, err, errlen);
    case GA_OPT_STRING:
    case GA_OPT_PATH:
        return store_text(o, arg, dest, err, errlen);
    default:
        snprintf(err, errlen, "no typed parse for a %s option", ga_opt_type_name(o->type));
        return -1;
    }
}

void ga_cli_escape(const char *s, char *out, size_t len)
{
    size_t n = 0;
    if (!len)
        return;
    for (; s && *s && n + 5 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n' || c == '\t' || c == '\r' || c == '\\')
            n += (size_t)snprintf(out + n, len - n, "\\%c",
                                  c == '\n'   ? 'n'
                                  : c == '\t' ? 't'
                                  : c == '\r' ? 'r'
                                              : '\\');
        else if (c < 0x20 || c == 0x7f)
            n += (size_t)snprintf(out + n, len - n, "\\x%02x", c);
        else
            out[n++] = (char)c;
    }
    out[n] = '\0';
}
