/* gpuaccept baseline --from summary.json: a site's baseline from a healthy run. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "ga_exit.h"
#include "ga_str.h"
#include "merge.h"
#include "suite.h"
#include "suite_util.h"
#include "ga_version.h"

enum { OPT_FROM = 1000, OPT_TOLERANCE, OPT_FORCE, OPT_VERSION };

static void usage(void)
{
    printf(
        "usage: gpuaccept baseline --from SUMMARY.json [-o FILE] [--tolerance PCT] [--force]\n"
        "Writes a baseline made from a healthy run: per program, metric and scope (GPU, rank, node or the\n"
        "whole job), the median of the run's values. Job-wide figures hold only for the same number of "
        "ranks\n"
        "and nodes. Use it with `gpuaccept run --baseline FILE`. A failed run is refused unless --force.\n"
        "  --from FILE        the summary.json of the healthy run\n"
        "  -o, --output FILE  where to write it (default: standard output)\n"
        "  --tolerance PCT    how far below the baseline a figure may fall (default 10)\n");
}

/* The summary at from, checked to be one (another kind of file is a wrong argument, exit 2, not a run that
 * failed, 1). NULL with *rc set when it is not. */
static json_t *load_summary(const char *from, int *rc)
{
    char err[512];
    json_t *summary = suite_load_json(from, err, sizeof err);
    if (!summary) {
        *rc = suite_usage_error("baseline", "%s", err);
        return NULL;
    }
    if (!ga_streq(sj_str(summary, "schema", NULL), SUITE_SUMMARY_SCHEMA) ||
        !json_is_integer(json_object_get(summary, "schema_version")) ||
        sj_int(summary, "schema_version", 0) != SUITE_SUMMARY_SCHEMA_VERSION) {
        *rc = suite_usage_error("baseline", "--from %s: schema \"%s\" version %lld, want \"%s\" version %d",
                                from, sj_str(summary, "schema", "missing"),
                                sj_int(summary, "schema_version", -1), SUITE_SUMMARY_SCHEMA,
                                SUITE_SUMMARY_SCHEMA_VERSION);
        json_decref(summary);
        return NULL;
    }
    return summary;
}

int cmd_baseline(int argc, char **argv)
{
    static const struct option longs[] = {{"from", required_argument, NULL, OPT_FROM},
                                          {"output", required_argument, NULL, 'o'},
                                          {"tolerance", required_argument, NULL, OPT_TOLERANCE},
                                          {"force", no_argument, NULL, OPT_FORCE},
                                          {"help", no_argument, NULL, 'h'},
                                          {"version", no_argument, NULL, OPT_VERSION},
                                          {0}};
    const char *from = NULL, *out = NULL;
    double tol = -1;
    char perr[160];
    int force = 0;
    optind = 0;
    opterr = 0;
    int key;
    while ((key = getopt_long(argc, argv, ":o:h", longs, NULL)) != -1) {
        switch (key) {
        case OPT_FROM:
            from = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case OPT_TOLERANCE:
            if (suite_parse_pct(optarg, &tol, perr, sizeof perr))
                return suite_usage_error("baseline", "--tolerance: %s", perr);
            break;
        case OPT_FORCE:
            force = 1;
            break;
        case 'h':
            usage();
            return GA_EXIT_PASS;
        case OPT_VERSION:
            printf("gpuaccept baseline %s\n", ga_version());
            return GA_EXIT_PASS;
        default:
            return suite_bad_option("baseline", key, argv);
        }
    }
    if (optind < argc)
        return suite_usage_error("baseline", "unexpected argument '%s'", argv[optind]);
    if (!from)
        return suite_usage_error("baseline", "--from SUMMARY.json is required");
    char err[512];
    if (out && suite_output_path_check(out, err, sizeof err) != 0)
        return suite_usage_error("baseline", "-o: %s", err);
    int rc = GA_EXIT_PASS;
    json_t *summary = load_summary(from, &rc);
    if (!summary)
        return rc;
    json_t *b = suite_baseline_from_summary(summary, tol, force, err, sizeof err);
    json_decref(summary);
    if (!b) {
        fprintf(stderr, "gpuaccept baseline: %s: %s\n", from, err);
        return GA_EXIT_CHECK_FAILED;
    }
    if (out) {
        if (suite_write_json_atomic(out, b, err, sizeof err) != 0) {
            fprintf(stderr, "gpuaccept baseline: %s\n", err);
            rc = GA_EXIT_ENV;
        } else {
            fprintf(stderr, "gpuaccept baseline: %zu metrics written to %s\n",
                    json_array_size(sj_arr(b, "metrics")), out);
        }
    } else {
        json_dumpf(b, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        printf("\n");
    }
    json_decref(b);
    return rc;
}
