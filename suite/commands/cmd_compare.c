/* gpuaccept compare OLD NEW: a re-check against the acceptance run. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "ga_exit.h"
#include "suite.h"
#include "suite_util.h"
#include "verb_options.h"

enum { OPT_TOLERANCE = 1000, OPT_JSON, OPT_ALL, OPT_FORCE };

static const suite_option compare_options[] = {
    {"baseline-tolerance", OPT_TOLERANCE, required_argument, "PCT",
     "how far a figure may move the wrong way, in percent (default: above)", GA_OPT_PCT, "%"},
    {"json", OPT_JSON, required_argument, "FILE", "also write the comparison as JSON", GA_OPT_PATH},
    {"all", OPT_ALL, no_argument, NULL, "list every metric, not only the changed ones", GA_OPT_FLAG},
    {"force", OPT_FORCE, no_argument, NULL, "count metrics measured under other conditions too", GA_OPT_FLAG},
};

static void compare_before(void)
{
    printf(
        "usage: gpuaccept compare [--baseline-tolerance PCT] [--json FILE] [--all] [--force] OLD.json "
        "NEW.json\n"
        "Compares two runs' metrics (summary.json, or two reports of one program) per program, metric, node\n"
        "and GPU: old, new, change, and a regression where a figure moved the wrong way (by its\n"
        "higher_is_better) by more than the tolerance (default %.0f%%). Lists the metrics and nodes present\n"
        "in one run only.\n",
        SUITE_COMPARE_DEFAULT_TOLERANCE_PCT);
}

static void compare_after(void)
{
    printf(
        "A program's metrics are comparable only when both runs had the same profile, ranks, nodes and\n"
        "conditions (problem size, sweep, model, backend); the others are listed as not comparable and not\n"
        "counted, and when none is comparable the comparison is refused (exit 2) unless --force.\n"
        "A metric or node of OLD that NEW lacks, or a value NEW lost (null), counts as a regression.\n"
        "Exit code: 0 no regression, 1 a regression, 2 usage or inputs that cannot be compared (another\n"
        "schema or version, different programs, no metric in common).\n");
}

/* --tolerance, this verb's first name of --baseline-tolerance (the programs' --tolerance is "below peers").
 */
static const ga_alias compare_aliases[] = {{"tolerance", "baseline-tolerance"}};

const suite_verb compare_verb = {
    "compare",     compare_options, sizeof compare_options / sizeof compare_options[0], compare_before,
    compare_after, compare_aliases, sizeof compare_aliases / sizeof compare_aliases[0]};

typedef struct {
    double tol;
    const char *json_out;
    bool all, force;
} compare_args;

static int on_compare_option(void *ctx, int key, const char *arg)
{
    compare_args *c = ctx;
    char perr[160];
    switch (key) {
    case OPT_TOLERANCE:
        if (suite_parse_pct(arg, &c->tol, perr, sizeof perr))
            return suite_usage_error("compare", "--baseline-tolerance: %s", perr);
        return 0;
    case OPT_JSON:
        c->json_out = arg;
        return 0;
    case OPT_ALL:
        c->all = true;
        return 0;
    default: /* OPT_FORCE */
        c->force = true;
        return 0;
    }
}

int cmd_compare(int argc, char **argv)
{
    compare_args c = {SUITE_COMPARE_DEFAULT_TOLERANCE_PCT, NULL, false, false};
    int parsed = suite_verb_parse(&compare_verb, argc, argv, on_compare_option, &c);
    if (parsed >= 0)
        return parsed;
    double tol = c.tol;
    const char *json_out = c.json_out;
    bool all = c.all, force = c.force;
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
