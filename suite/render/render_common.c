#include "render_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "finding_text.h"
#include "suite_util.h"

size_t render_pick_nodes(const json_t *summary, const json_t **out, size_t max, size_t *hidden)
{
    const char *order[] = {"fail", "warn", "pass"};
    size_t n = 0, total = json_array_size(sj_arr(summary, "nodes"));
    for (size_t o = 0; o < 3; o++) {
        size_t i;
        json_t *node;
        json_array_foreach(sj_arr(summary, "nodes"), i, node) {
            const char *v = sj_str(node, "verdict", "pass");
            bool mine = o < 2 ? strcmp(v, order[o]) == 0 : strcmp(v, "fail") != 0 && strcmp(v, "warn") != 0;
            if (mine && (o < 2 || n < max))
                out[n++] = node;
        }
    }
    *hidden = total - n;
    return n;
}

void render_gpu_label(const json_t *e, char *buf, size_t len)
{
    const char *host = sj_str(e, "host", "?");
    if (sj_int(e, "gpu", -1) >= 0)
        snprintf(buf, len, "%s:%lld", host, sj_int(e, "gpu", -1));
    else if (sj_str(e, "pci_bus_id", NULL)) /* its index on the node unknown (one GPU bound per rank) */
        snprintf(buf, len, "%s:%s", host, sj_str(e, "pci_bus_id", ""));
    else
        snprintf(buf, len, "%s r%lld", host, sj_int(e, "rank", -1));
}

const char *render_item_word(const json_t *gpus)
{
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
        if (suite_is_gpu(g))
            return "GPU";
    return "rank";
}

void render_duration(const json_t *step, char *buf, size_t len)
{
    if (!sj_is_num(step, "duration_s")) {
        snprintf(buf, len, "-");
        return;
    }
    double d = sj_num(step, "duration_s", 0);
    if (!(d >= 0 && d < 1e9)) /* a figure no step can take: never converted to int */
        snprintf(buf, len, "-");
    else if (d < 60)
        snprintf(buf, len, "%.1f s", d);
    else
        snprintf(buf, len, "%d min %02d s", (int)(d / 60), (int)d % 60);
}

bool render_has_headlines(const json_t *summary, const char *program)
{
    size_t i;
    json_t *h;
    json_array_foreach(sj_arr(summary, "headlines"), i, h)
        if (strcmp(sj_str(h, "program", ""), program) == 0)
            return true;
    return false;
}

void render_headline_value(const json_t *h, char *buf, size_t len)
{
    if (!sj_is_num(h, "value")) {
        snprintf(buf, len, "not measured");
        return;
    }
    const char *unit = sj_str(h, "unit", "");
    /* a count of one reads "1 finding", not "1 findings" (issue 41, observation 10): the count units the
     * programs use lose their plural s */
    static const char *const counts[] = {"findings",   "intervals", "nodes", "ranks", "GPUs",
                                         "errors",     "steps",     "pairs", "ports", "rounds",
                                         "iterations", "bytes",     "links"};
    int unit_len = (int)strlen(unit);
    if (sj_num(h, "value", 0) == 1.0)
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
            if (strcmp(unit, counts[i]) == 0)
                unit_len--;
    int n = snprintf(buf, len, "%.4g%s%.*s", sj_num(h, "value", 0), *unit ? " " : "", unit_len, unit);
    if (n > 0 && (size_t)n < len && sj_is_num(h, "reference"))
        snprintf(buf + n, len - (size_t)n, " (%s %.4g)", sj_str(h, "reference_label", "reference"),
                 sj_num(h, "reference", 0));
}

json_t *render_device_values(const json_t *summary, const char *program, const char *name)
{
    json_t *out = json_array();
    size_t i;
    json_t *m;
    json_array_foreach(sj_arr(summary, "metrics"), i, m) {
        if (strcmp(sj_str(m, "program", ""), program) == 0 && strcmp(sj_str(m, "name", ""), name) == 0 &&
            sj_str(m, "host", NULL) && sj_is_num(m, "value"))
            json_array_append(out, m);
    }
    return out;
}

const char *render_plural(long long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void render_parts_text(const json_t *entry, const char *code, char *buf, size_t len)
{
    enum { SHOWN = 3 }; /* a cell of the node table, not the findings: those have every part */
    const json_t *list = json_object_get(json_object_get(entry, "parts"), code);
    size_t i, used = 0, k = 0, n = json_array_size(list);
    json_t *p;
    buf[0] = '\0';
    json_array_foreach(list, i, p) {
        const char *t = json_string_value(p);
        if (!t)
            continue;
        int w = k < SHOWN ? snprintf(buf + used, len - used, "%s%s", k ? ", " : "", t)
                          : snprintf(buf + used, len - used, ", +%zu more", n - i);
        used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
        if (k++ >= SHOWN || used + 1 >= len)
            break;
    }
}
