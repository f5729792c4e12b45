#include "ga_headline.h"

#include <math.h>

const char *ga_scope_name(ga_scope scope)
{
    return scope == GA_SCOPE_PER_DEVICE ? "per_device" : "cluster";
}

static json_t *finite_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The array under key, created on first use; borrowed. */
static json_t *report_list(json_t *report, const char *key)
{
    json_t *a = json_object_get(report, key);
    if (!json_is_array(a)) {
        a = json_array();
        json_object_set_new(report, key, a);
    }
    return a;
}

void ga_report_add_headline(json_t *report, const ga_headline *h)
{
    json_t *e =
        json_pack("{s:s, s:s, s:o, s:s, s:s, s:b}", "name", h->name, "label", h->label ? h->label : h->name,
                  "value", finite_or_null(h->value), "unit", h->unit ? h->unit : "", "scope",
                  ga_scope_name(h->scope), "higher_is_better", h->higher_is_better);
    if (e && h->reference_label && isfinite(h->reference) && h->reference > 0) {
        json_object_set_new(e, "reference", json_real(h->reference));
        json_object_set_new(e, "reference_label", json_string(h->reference_label));
    }
    if (e)
        json_array_append_new(report_list(report, "headlines"), e);
}

json_t *ga_chart_new(const char *title, const char *x_label, const char *y_label, bool x_log2_bytes)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:[]}", "title", title, "x_label", x_label, "y_label", y_label,
                     "x_scale", x_log2_bytes ? "log2_bytes" : "linear", "series");
}

int ga_chart_add_series(json_t *chart, const char *label, const double *x, const double *y, size_t n)
{
    json_t *series = json_object_get(chart, "series");
    if (!json_is_array(series) || !label || (n && (!x || !y)))
        return -1;
    json_t *points = json_array();
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i]))
            json_array_append_new(points, json_pack("[f, f]", x[i], y[i]));
    return json_array_append_new(series, json_pack("{s:s, s:o}", "label", label, "points", points));
}

void ga_report_add_chart(json_t *report, json_t *chart)
{
    if (chart)
        json_array_append_new(report_list(report, "charts"), chart);
}

void ga_report_flag_last_metric(json_t *report)
{
    json_t *metrics = json_object_get(report, "metrics");
    size_t n = json_array_size(metrics);
    if (n)
        json_object_set_new(json_array_get(metrics, n - 1), "flagged", json_true());
}
