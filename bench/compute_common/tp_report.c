#include "tp_report.h"

#include <stdio.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_log.h"
#include "ga_parse.h"
#include "ga_report.h"
#include "tp_peaks.h"

int tp_report_finish(json_t *report, const ga_findings *f, const ga_common_opts *common, const char *program,
                     const char *tag)
{
    for (size_t i = 0; i < f->count; i++)
        if (f->items[i].severity != GA_SEV_INFO || ga_log_verbose())
            ga_log(tag, "%s %s: %s", ga_severity_name(f->items[i].severity), f->items[i].code,
                   f->items[i].message);
    int exit_code = ga_findings_exit_code(f);
    char err[GA_PATH_MAX + 256] = "";
    ga_report_set_verdict(report, f, exit_code);
    if (ga_report_write_atomic(common->report_dir, program, report, err, sizeof err) != 0) {
        exit_code = GA_EXIT_ENV;
    } else {
        ga_log(tag, "report: %s/%s.json", common->report_dir, program);
    }
    ga_result_print(f, exit_code, err);
    return exit_code;
}

int tp_parse_dtypes(const char *arg, unsigned *mask, bool *is_all, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    *mask = 0;
    *is_all = strcmp(arg, "all") == 0;
    if (*is_all) {
        *mask = (1u << TP_DTYPE_COUNT) - 1;
        return 0;
    }
    char *items[TP_DTYPE_COUNT * 2];
    int n = ga_split_list(buf, items, TP_DTYPE_COUNT * 2);
    if (n <= 0) {
        snprintf(err, errlen,
                 "'%s': expected a comma-separated list of fp64, fp32, tf32, fp16, bf16, fp8, "
                 "int8, or 'all'",
                 arg);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int d = tp_dtype_parse(items[i]);
        if (d < 0) {
            snprintf(err, errlen, "unknown dtype '%s' (fp64, fp32, tf32, fp16, bf16, fp8, int8, or all)",
                     items[i]);
            return -1;
        }
        *mask |= 1u << d;
    }
    return 0;
}
