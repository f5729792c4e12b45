#include "ga_devreport.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_headline.h"
#include "ga_log.h"
#include "ga_parse.h"
#include "ga_report.h"
#include "ga_devflag.h"
#include "ga_outlier.h" /* GA_REMEASURE_MAX */
#include "ga_peaks.h"
#include <stdlib.h>

bool ga_devflag_on_option(const ga_devflag_fields *f, int key, const char *arg, int *rc, char *err,
                          size_t errlen)
{
    long v = 0;
    switch (key) {
    case GA_DEVFLAG_OPT_TOLERANCE: /* percent on the command line, a fraction in the analysis */
        *rc = ga_cli_parse_pct_fraction(arg, 0, 100, f->tolerance, err, errlen);
        return true;
    case GA_DEVFLAG_OPT_REMEASURE:
        if ((*rc = ga_parse_long(arg, 0, GA_REMEASURE_MAX, &v, err, errlen)) == 0)
            *f->remeasure = (int)v;
        return true;
    case GA_DEVFLAG_OPT_RELATIVE:
        *rc = ga_parse_relative(arg, f->relative_warn, err, errlen);
        return true;
    case GA_DEVFLAG_OPT_THREADS:
        if ((*rc = ga_parse_long(arg, 1, 4096, &v, err, errlen)) == 0)
            *f->threads = (int)v;
        return true;
    }
    return false;
}

int ga_dtype_parse_list(const char *arg, unsigned *mask, bool *is_all, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    *mask = 0;
    *is_all = strcmp(arg, "all") == 0;
    if (*is_all) {
        *mask = (1u << GA_DTYPE_COUNT) - 1;
        return 0;
    }
    char *items[GA_DTYPE_COUNT * 2];
    int n = ga_split_list(buf, items, GA_DTYPE_COUNT * 2);
    if (n <= 0) {
        snprintf(err, errlen,
                 "'%s': expected a comma-separated list of fp64, fp32, tf32, fp16, bf16, fp8, "
                 "int8, or 'all'",
                 arg);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int d = ga_dtype_parse(items[i]);
        if (d < 0) {
            snprintf(err, errlen, "unknown dtype '%s' (fp64, fp32, tf32, fp16, bf16, fp8, int8, or all)",
                     items[i]);
            return -1;
        }
        *mask |= 1u << d;
    }
    return 0;
}

void ga_dev_record_order(const void *records, int n, size_t record_size, int *idx)
{
    ga_dev_sample *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    if (!s) {
        for (int i = 0; i < n; i++)
            idx[i] = i;
        return;
    }
    for (int i = 0; i < n; i++) {
        const ga_record_header *h = ga_record_at(records, record_size, i);
        s[i] = (ga_dev_sample){.host = h->host,
                               .node_index = h->node_index,
                               .rank = h->world_rank,
                               .gpu = h->device_index,
                               .pci_bus_id = ga_record_where(h).pci_bus_id,
                               .value = 0,
                               .peak = -1};
    }
    ga_dev_order(s, n, idx);
    free(s);
}

void ga_dev_figure_log(const ga_dev_figure *fig, const char *tag)
{
    if (fig->median < 0)
        return;
    char peak[48] = "";
    if (fig->peak > 0)
        snprintf(peak, sizeof peak, ", peak %.4g", fig->peak);
    ga_log(tag, "%s: median %.4g %s over %d %s%s", fig->name, fig->median, fig->unit, fig->measured,
           fig->on_gpus ? "GPUs" : "ranks", peak);
}

void ga_dev_figure_headline(json_t *report, const ga_dev_figure *fig, bool higher_is_better)
{
    ga_headline h = {.name = fig->metric,
                     .label = fig->name,
                     .value = fig->median >= 0 ? fig->median : NAN,
                     .unit = fig->unit,
                     .scope = GA_SCOPE_PER_DEVICE,
                     .higher_is_better = higher_is_better,
                     .reference = fig->peak > 0 ? fig->peak : NAN,
                     .reference_label = fig->peak > 0 ? "peak" : NULL};
    ga_report_add_headline(report, &h);
}
