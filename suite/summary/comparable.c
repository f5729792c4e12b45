#include "comparable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_str.h"
#include "merge.h"
#include "suite_util.h"

json_t *suite_measured_under(const json_t *run, const char *program)
{
    json_t *u = json_object();
    bool summary = ga_streq(sj_str(run, "schema", NULL), SUITE_SUMMARY_SCHEMA);
    const json_t *src = summary ? suite_summary_step(run, program) : run;
    const char *profile = summary ? sj_str(json_object_get(run, "profile"), "name", NULL) : NULL;
    if (profile)
        json_object_set_new(u, "profile", json_string(profile));
    const char *keys[] = {"world_size", "node_count", "conditions"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        json_t *v = json_object_get(src, keys[k]);
        if (v && !json_is_null(v))
            json_object_set(u, keys[k], v);
    }
    return u;
}

/* "v" as text for a reason: a string as is, anything else as compact JSON. */
static void value_text(const json_t *v, char *out, size_t len)
{
    if (!v) {
        snprintf(out, len, "unknown");
    } else if (json_is_object(v)) {
        snprintf(out, len, "recorded"); /* compared key by key where both have it */
    } else if (json_is_string(v)) {
        snprintf(out, len, "%s", json_string_value(v));
    } else {
        char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(out, len, "%s", t ? t : "?");
        free(t);
    }
}

static void add_reason(sbuf *b, const char *key, const json_t *a, const json_t *c)
{
    char x[120], y[120];
    value_text(a, x, sizeof x);
    value_text(c, y, sizeof y);
    sbuf_printf(b, "%s%s %s -> %s", b->len ? "; " : "", key, x, y);
}

/* Each condition key in either, compared. */
static void conditions_differ(sbuf *b, const json_t *a, const json_t *c)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)a, key, v)
        if (!json_equal(v, json_object_get(c, key)))
            add_reason(b, key, v, json_object_get(c, key));
    json_object_foreach((json_t *)c, key, v)
        if (!json_object_get(a, key))
            add_reason(b, key, NULL, v);
}

bool suite_comparable(const json_t *o, const json_t *n, const char *const *keys, char *why, size_t len)
{
    static const char *const all[] = {"profile", "world_size", "node_count", "conditions", NULL};
    sbuf b;
    sbuf_init(&b);
    for (const char *const *k = keys ? keys : all; *k; k++) {
        json_t *a = json_object_get(o, *k), *c = json_object_get(n, *k);
        if (!a && !c)
            continue;
        if (ga_streq(*k, "conditions") && json_is_object(a) && json_is_object(c))
            conditions_differ(&b, a, c);
        else if (!a || !c || !json_equal(a, c))
            add_reason(&b, *k, a, c);
    }
    bool same = b.len == 0;
    snprintf(why, len, "%s", same ? "" : sbuf_str(&b));
    sbuf_free(&b);
    return same;
}
