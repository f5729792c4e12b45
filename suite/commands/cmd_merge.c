/* gpuaccept merge: the summary of the reports already in a directory, without running anything (after a run
 * under another launcher, or to re-render with a baseline). */
#include <getopt.h> /* optind, the option arguments */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_report.h"
#include "merge.h"
#include "suite.h"
#include "suite_util.h"
#include "report_load.h"
#include "verb_options.h"

enum { OPT_REPORT_DIR = 1000, OPT_OUT_DIR, OPT_BASELINE, OPT_TOLERANCE };

static const suite_option merge_options[] = {
    {"report-dir", OPT_REPORT_DIR, required_argument, "DIR", "the reports to merge (default .)", GA_OPT_PATH},
    {"out-dir", OPT_OUT_DIR, required_argument, "DIR",
     "where the summary goes (default: the report directory)", GA_OPT_PATH},
    {"baseline", OPT_BASELINE, required_argument, "FILE|auto|none",
     "hold the figures to a baseline (default auto: the shipped one of the GPU model, if any)", GA_OPT_PATH},
    {"baseline-tolerance", OPT_TOLERANCE, required_argument, "PCT",
     "how far below the baseline a figure may be, in percent (default: the file's)", GA_OPT_PCT, "%"},
};

static void merge_before(void)
{
    printf(
        "usage: gpuaccept merge [--report-dir DIR] [--out-dir DIR] [--baseline FILE|auto|none] "
        "[--baseline-tolerance "
        "PCT]\n"
        "Merges the gpuaccept reports in the report directory (default .) into summary.json, summary.md and\n"
        "summary.html in the output directory (default: the report directory). How each step ended comes "
        "from\n"
        "suite_run.json when `gpuaccept run` left one, else from each report's verdict.\n"
        "Only one run's reports are merged (the run suite_run.json names, else the one run every report\n"
        "must share); a file that cannot be trusted (unreadable, truncated, another schema version, another\n"
        "cluster, a report not named after its program, any *.json but those and summary.json,\n"
        "suite_run.json, gpuaccept-k8s.json) stops the merge with exit 2 and writes no summary.\n");
}

static void merge_after(void)
{
    printf("Exit code: the verdict (0 pass, 1 a check failed, 2-5 a step could not measure); 2 also for a\n"
           "refused input.\n");
}

/* --tolerance, this verb's first name of --baseline-tolerance (the programs' --tolerance is "below peers").
 */
static const ga_alias merge_aliases[] = {{"tolerance", "baseline-tolerance"}};

const suite_verb merge_verb = {
    "merge",     merge_options, sizeof merge_options / sizeof merge_options[0], merge_before,
    merge_after, merge_aliases, sizeof merge_aliases / sizeof merge_aliases[0]};

typedef struct {
    const char *dir, *out, *baseline;
    double tol;
} merge_args;

static int on_merge_option(void *ctx, int key, const char *arg)
{
    merge_args *m = ctx;
    char perr[160];
    switch (key) {
    case OPT_REPORT_DIR:
        m->dir = arg;
        return 0;
    case OPT_OUT_DIR:
        m->out = arg;
        return 0;
    case OPT_BASELINE:
        m->baseline = arg;
        return 0;
    default: /* OPT_TOLERANCE */
        if (suite_parse_pct(arg, &m->tol, perr, sizeof perr))
            return suite_usage_error("merge", "--baseline-tolerance: %s", perr);
        return 0;
    }
}

/* An input that cannot be trusted: one line, and no summary (a verdict from part of the evidence would read
 * as the verdict of all of it). */
__attribute__((format(printf, 1, 2))) static int refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gpuaccept merge: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return GA_EXIT_USAGE;
}

int cmd_merge(int argc, char **argv)
{
    merge_args m = {".", NULL, "auto", -1};
    int rc = suite_verb_parse(&merge_verb, argc, argv, on_merge_option, &m);
    if (rc >= 0)
        return rc;
    const char *dir = m.dir, *out = m.out, *baseline = m.baseline;
    double tol = m.tol;
    if (optind < argc)
        return suite_usage_error("merge", "unexpected argument '%s'", argv[optind]);
    char err[512];
    if (out && ga_report_dir_prepare(out, err, sizeof err) != 0)
        return suite_usage_error("merge", "--out-dir: %s", err);
    json_t *reports, *run;
    if (suite_load_run_dir(dir, &reports, &run, err, sizeof err) != 0)
        return refuse("%s", err);
    if (json_array_size(reports) == 0 && !run) {
        json_decref(reports);
        return suite_usage_error("merge", "no gpuaccept report in %s", dir);
    }
    json_t *summary = suite_merge(reports, run, dir);
    json_decref(reports);
    json_decref(run);
    int exit_code, written;
    if (suite_apply_baseline_option(summary, baseline, tol, err, sizeof err) != 0) {
        exit_code = suite_usage_error("merge", "--baseline: %s", err);
    } else if ((written = suite_outputs_write(summary, out ? out : dir, err, sizeof err)) != 0) {
        /* Inputs too large to summarise are refused like any other input (exit 2); a failed write is 3. */
        if (written == SUITE_OUTPUTS_TOO_LARGE) {
            exit_code = refuse("%s", err);
        } else {
            fprintf(stderr, "gpuaccept merge: %s\n", err);
            exit_code = suite_print_failure(GA_EXIT_ENV, err);
        }
    } else {
        suite_print_verdict(summary, out ? out : dir);
        exit_code = (int)sj_int(json_object_get(summary, "verdict"), "exit_code", GA_EXIT_INTERNAL);
    }
    json_decref(summary);
    return exit_code;
}
