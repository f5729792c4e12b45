/* gpuaccept compare OLD NEW: a re-check against the acceptance run. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "ga_exit.h"
#include "suite.h"
#include "suite_util.h"
#include "ga_version.h"

enum { OPT_TOLERANCE = 1000, OPT_JSON, OPT_ALL, OPT_FORCE, OPT_VERSION };

static void usage(void)
{
    printf(
        "usage: gpuaccept compare [--tolerance PCT] [--json FILE] [--all] [--force] OLD.json NEW.json\n"
        "Compares two runs' metrics (summary.json, or two reports of one program) per program, metric, node\n"
        "and GPU: old, new, change, and a regression where a figure moved the wrong way (by its\n"
        "higher_is_better) by more than the tolerance. Lists the metrics and nodes present in one run only.\n"
        "  --tolerance PCT  default %.0f\n"
        "  --json FILE      also write the comparison as JSON\n"
        "  --all            list every metric, not only the changed ones\n"
        "  --force          count metrics measured under other conditions too\n"
        "A program's metrics are comparable only when both runs had the same profile, ranks, nodes and\n"
        "conditions (problem size, sweep, model, backend); the others are listed as not comparable and not\n"
        "counted, and when none is comparable the comparison is refused (exit 2) unless --force.\n"
        "A metric or node of OLD that NEW lacks, or a value NEW lost (null), counts as a regression.\n"
        "Exit code: 0 no regression, 1 a regression, 2 usage or inputs that cannot be compared (another\n"
        "schema or version, different programs, no metric in common).\n",
        SUITE_COMPARE_DEFAULT_TOLERANCE_PCT);
}

int cmd_compare(int argc, char **argv)
{
    static const struct option longs[] = {{"tolerance", required_argument, NULL, OPT_TOLERANCE},
                                          {"json", required_argument, NULL, OPT_JSON},
                                          {"all", no_argument, NULL, OPT_ALL},
                                          {"force", no_argument, NULL, OPT_FORCE},
                                          {"help", no_argument, NULL, 'h'},
                                          {"version", no_argument, NULL, OPT_VERSION},
                                          {0}};
    double tol = SUITE_COMPARE_DEFAULT_TOLERANCE_PCT;
    char perr[160];
    const char *json_out = NULL;
    bool all = false, force = false;
    optind = 0;
    opterr = 0;
    int key;
    while ((key = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (key) {
        case OPT_TOLERANCE:
            if (suite_parse_pct(optarg, &tol, perr, sizeof perr))
                return suite_usage_error("compare", "--tolerance: %s", perr);
            break;
        case OPT_JSON:
            json_out = optarg;
            break;
        case OPT_ALL:
            all = true;
            break;
        case OPT_FORCE:
            force = true;
            break;
        case 'h':
            usage();
            return GA_EXIT_PASS;
        case OPT_VERSION:
            printf("gpuaccept compare %s\n", ga_version());
            return GA_EXIT_PASS;
        default:
            return suite_bad_option("compare", key, argv);
        }
    }
    if (argc - optind != 2)
        return suite_usage_error("compare", "needs two files, OLD.json and NEW.json");
    char err[512];
    if (json_out && suite_output_path_check(json_out, err, sizeof err) != 0)
        return suite_usage_error("compare", "--json: %s", err);
    json_t *old_run = suite_load_json(argv[optind], err, sizeof err);
    json_t *new_run = old_run ? suite_load_json(argv[optind + 1], err, sizeof err) : NULL;
    json_t *cmp = new_run ? suite_compare(old_run, new_run, tol, force, err, sizeof err) : NULL;
    json_decref(old_run);
    json_decref(new_run);
    if (!cmp)
        return suite_usage_error("compare", "%s", err);
    suite_compare_print(cmp, stdout, all);
    int rc = sj_int(cmp, "regressions", 0) > 0 || sj_int(cmp, "missing_in_new", 0) > 0 ? GA_EXIT_CHECK_FAILED
                                                                                       : GA_EXIT_PASS;
    if (json_out && suite_write_json_atomic(json_out, cmp, err, sizeof err) != 0) {
        fprintf(stderr, "gpuaccept compare: %s\n", err);
        rc = GA_EXIT_ENV;
    }
    json_decref(cmp);
    return rc;
}
