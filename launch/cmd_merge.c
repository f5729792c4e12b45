/* gpuaccept merge: the summary of the reports already in a directory, without running anything (after a run
 * under another launcher, or to re-render with a baseline). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_report.h"
#include "merge.h"
#include "suite.h"
#include "suite_util.h"

#ifndef GA_VERSION
#define GA_VERSION "unknown"
#endif

enum { OPT_REPORT_DIR = 1000, OPT_OUT_DIR, OPT_BASELINE, OPT_TOLERANCE, OPT_VERSION };

static void usage(void)
{
    printf(
        "usage: gpuaccept merge [--report-dir DIR] [--out-dir DIR] [--baseline FILE|auto|none] [--tolerance "
        "PCT]\n"
        "Merges the gpuaccept reports in the report directory (default .) into summary.json, summary.md and\n"
        "summary.html in the output directory (default: the report directory). How each step ended comes "
        "from\n"
        "suite_run.json when `gpuaccept run` left one, else from each report's verdict.\n"
        "Exit code: the verdict (0 pass, 1 a check failed, 2-5 a step could not measure).\n");
}

int cmd_merge(int argc, char **argv)
{
    static const struct option longs[] = {{"report-dir", required_argument, NULL, OPT_REPORT_DIR},
                                          {"out-dir", required_argument, NULL, OPT_OUT_DIR},
                                          {"baseline", required_argument, NULL, OPT_BASELINE},
                                          {"tolerance", required_argument, NULL, OPT_TOLERANCE},
                                          {"help", no_argument, NULL, 'h'},
                                          {"version", no_argument, NULL, OPT_VERSION},
                                          {0}};
    const char *dir = ".", *out = NULL, *baseline = "auto";
    double tol = -1;
    char perr[160];
    optind = 0;
    opterr = 0;
    int key;
    while ((key = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (key) {
        case OPT_REPORT_DIR:
            dir = optarg;
            break;
        case OPT_OUT_DIR:
            out = optarg;
            break;
        case OPT_BASELINE:
            baseline = optarg;
            break;
        case OPT_TOLERANCE:
            if (suite_parse_pct(optarg, &tol, perr, sizeof perr))
                return suite_usage_error("merge", "--tolerance: %s", perr);
            break;
        case 'h':
            usage();
            return GA_EXIT_PASS;
        case OPT_VERSION:
            printf("gpuaccept merge %s\n", GA_VERSION);
            return GA_EXIT_PASS;
        default:
            return suite_bad_option("merge", key, argv);
        }
    }
    if (optind < argc)
        return suite_usage_error("merge", "unexpected argument '%s'", argv[optind]);
    char err[512];
    if (out && ga_report_dir_prepare(out, err, sizeof err) != 0)
        return suite_usage_error("merge", "--out-dir: %s", err);
    json_t *reports = suite_load_reports(dir, err, sizeof err);
    if (!reports)
        return suite_usage_error("merge", "%s", err);
    char path[4096];
    snprintf(path, sizeof path, "%s/suite_run.json", dir);
    json_t *run = suite_load_json(path, err, sizeof err);
    if (run && strcmp(sj_str(run, "schema", ""), SUITE_RUN_SCHEMA) != 0) {
        json_decref(run);
        run = NULL;
    }
    if (json_array_size(reports) == 0 && !run) {
        json_decref(reports);
        return suite_usage_error("merge", "no gpuaccept report in %s", dir);
    }
    json_t *summary = suite_merge(reports, run, dir);
    json_decref(reports);
    json_decref(run);
    int exit_code;
    if (suite_apply_baseline_option(summary, baseline, tol, err, sizeof err) != 0) {
        exit_code = suite_usage_error("merge", "--baseline: %s", err);
    } else if (suite_write_outputs(summary, out ? out : dir, err, sizeof err) != 0) {
        fprintf(stderr, "gpuaccept merge: %s\n", err);
        exit_code = GA_EXIT_ENV;
    } else {
        suite_print_verdict(summary, out ? out : dir);
        exit_code = (int)sj_int(json_object_get(summary, "verdict"), "exit_code", GA_EXIT_INTERNAL);
    }
    json_decref(summary);
    return exit_code;
}
