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
#include "verb_options.h"

enum { OPT_FROM = 1000, OPT_TOLERANCE, OPT_FORCE };

static const suite_option baseline_options[] = {
    {"from", OPT_FROM, required_argument, "FILE", "the summary.json of the healthy run", GA_OPT_PATH},
    {"output", 'o', required_argument, "FILE", "where to write it (default: standard output)", GA_OPT_PATH},
    {"baseline-tolerance", OPT_TOLERANCE, required_argument, "PCT",
     "how far below the baseline a figure may fall (default 10)", GA_OPT_PCT, "%"},
    {"force", OPT_FORCE, no_argument, NULL, "make a baseline from a run that failed", GA_OPT_FLAG},
};

_Static_assert((int)SUITE_BASELINE_DEFAULT_TOLERANCE_PCT == 10, "--baseline-tolerance's help says 10");

static void baseline_before(void)
{
    printf(
        "usage: gpuaccept baseline --from SUMMARY.json [-o FILE] [--baseline-tolerance PCT] [--force]\n"
        "Writes a baseline made from a healthy run: per program, metric and scope (GPU, rank, node or the\n"
        "whole job), the median of the run's values. Job-wide figures hold only for the same number of "
        "ranks\n"
        "and nodes. Use it with `gpuaccept run --baseline FILE`. A failed run is refused unless --force.\n");
}

/* --tolerance, this verb's first name of --baseline-tolerance (the programs' --tolerance is "below peers").
 */
static const ga_alias baseline_aliases[] = {{"tolerance", "baseline-tolerance"}};

const suite_verb baseline_verb = {
    "baseline", baseline_options, sizeof baseline_options / sizeof baseline_options[0], baseline_before,
    NULL,       baseline_aliases, sizeof baseline_aliases / sizeof baseline_aliases[0]};

typedef struct {
    const char *from, *out;
    double tol;
    int force;
} baseline_args;

static int on_baseline_option(void *ctx, int key, const char *arg)
{
    baseline_args *b = ctx;
    char perr[160];
    switch (key) {
    case OPT_FROM:
        b->from = arg;
        return 0;
    case 'o':
        b->out = arg;
        return 0;
    case OPT_TOLERANCE:
        if (suite_parse_pct(arg, &b->tol, perr, sizeof perr))
            return suite_usage_error("baseline", "--baseline-tolerance: %s", perr);
        return 0;
    default: /* OPT_FORCE */
        b->force = 1;
        return 0;
    }
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
    baseline_args args = {NULL, NULL, -1, 0};
    int parsed = suite_verb_parse(&baseline_verb, argc, argv, on_baseline_option, &args);
    if (parsed >= 0)
        return parsed;
    const char *from = args.from, *out = args.out;
    double tol = args.tol;
    int force = args.force;
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
