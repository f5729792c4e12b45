/* The command-line parse every program shares: the common options, the program's table, its aliases, --help.
 */
#include "ga_cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_parse.h"
#include "ga_version.h"

/* Keys of the common options: above any short option character and any program's long-only key. */
enum { OPT_REPORT_DIR = 1000, OPT_QUICK, OPT_VERBOSE, OPT_TIMEOUT, OPT_VERSION, OPT_RUN_ID, OPT_HELP = 'h' };
/* getopt keys of a program's deprecated aliases, ALIAS_KEY0 + index: above every other key. */
enum { ALIAS_KEY0 = 2000 };

static const ga_option common_options[] = {
    {"report-dir", OPT_REPORT_DIR, true, "DIR", "write the JSON report to DIR/<program>.json (default: .)",
     GA_OPT_PATH},
    {"quick", OPT_QUICK, false, NULL, "smaller sizes and fewer iterations: a fast smoke run", GA_OPT_FLAG},
    {"verbose", OPT_VERBOSE, false, NULL, "print detail", GA_OPT_FLAG},
    {"timeout", OPT_TIMEOUT, true, "SEC", "abort the whole job after SEC seconds (0: never)", GA_OPT_REAL,
     "s"},
    {"run-id", OPT_RUN_ID, true, "ID",
     "the run this report belongs to (default: $GPUACCEPT_RUN_ID, the Slurm job, or a fresh id)",
     GA_OPT_STRING},
    {"help", OPT_HELP, false, NULL, "print this help and exit", GA_OPT_FLAG},
    {"version", OPT_VERSION, false, NULL, "print the version and exit", GA_OPT_FLAG},
};
#define N_COMMON (sizeof common_options / sizeof common_options[0])

const ga_option *ga_cli_common_options(size_t *n)
{
    *n = N_COMMON;
    return common_options;
}

/* A program option that reuses a common option's long name or key, or NULL. One name, one meaning: a
 * program cannot give --timeout another sense (allreduce_bw's per-wait bound is -T/--wait-timeout). */
static const ga_option *clash(const ga_program_spec *spec)
{
    for (size_t i = 0; i < spec->n_options; i++)
        for (size_t j = 0; j < N_COMMON; j++)
            if (strcmp(spec->options[i].long_name, common_options[j].long_name) == 0 ||
                spec->options[i].key == common_options[j].key)
                return &spec->options[i];
    return NULL;
}

/* The program option with this key, or NULL. */
static const ga_option *program_option(const ga_program_spec *spec, int key)
{
    for (size_t i = 0; i < spec->n_options; i++)
        if (spec->options[i].key == key)
            return &spec->options[i];
    return NULL;
}

/* The program option with this long name, or NULL. */
static const ga_option *program_option_named(const ga_program_spec *spec, const char *long_name)
{
    for (size_t i = 0; i < spec->n_options; i++)
        if (strcmp(spec->options[i].long_name, long_name) == 0)
            return &spec->options[i];
    return NULL;
}

bool ga_cli_valid_run_id(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= GA_RUN_ID_MAX)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("._:-", *s)))
            return false;
    return true;
}

int ga_cli_parse_pct(const char *arg, double min_pct, double max_pct, double *pct, char *err, size_t errlen)
{
    char buf[64];
    size_t n = arg ? strlen(arg) : 0;
    if (n == 0 || n >= sizeof buf) {
        snprintf(err, errlen, "'%s' is not a percentage", arg ? arg : "");
        return -1;
    }
    memcpy(buf, arg, n + 1);
    bool has_sign = buf[n - 1] == '%';
    if (has_sign)
        buf[n - 1] = '\0';
    double v;
    if (ga_parse_double(buf, min_pct, max_pct, &v, err, errlen))
        return -1;
    if (!has_sign && v != 0 && fabs(v) < 1) {
        snprintf(err, errlen,
                 "%s is a percentage, not a fraction: write %g for %g%% (or %s%% if you mean %s%%)", arg,
                 v * 100, v * 100, arg, arg);
        return -1;
    }
    *pct = v;
    return 0;
}

int ga_cli_parse_pct_fraction(const char *arg, double min_pct, double max_pct, double *fraction, char *err,
                              size_t errlen)
{
    double pct;
    if (ga_cli_parse_pct(arg, min_pct, max_pct, &pct, err, errlen))
        return -1;
    *fraction = pct / 100;
    return 0;
}

static void print_option(const ga_option *o)
{
    char left[64];
    char shortname[8] = "    ";
    if (o->key > 0 && o->key < 256)
        snprintf(shortname, sizeof shortname, "-%c, ", o->key);
    snprintf(left, sizeof left, "%s--%s%s%s", shortname, o->long_name, o->has_arg ? " " : "",
             o->has_arg ? o->arg_name : "");
    /* The default from the table unless the text already says it; the unit unless the metavar is it. */
    bool say_default = o->default_text && !strstr(o->help, "default");
    bool say_unit = ga_cli_unit_shown(o->arg_name, o->unit);
    printf("  %-30s %s", left, o->help);
    if (say_unit)
        printf(" [%s]", o->unit);
    if (say_default)
        printf(" (default: %s)", o->default_text);
    printf("\n");
}

void ga_cli_print_help(const ga_program_spec *spec)
{
    printf("usage: %s [options]\n%s\n\n", spec->name, spec->summary);
    if (spec->n_options) {
        printf("Options:\n");
        for (size_t i = 0; i < spec->n_options; i++)
            print_option(&spec->options[i]);
        printf("\n");
    }
    printf("Common options (docs/options.md):\n");
    for (size_t i = 0; i < N_COMMON; i++)
        print_option(&common_options[i]);
    printf("\nExit codes: 0 pass, 1 check failed, 2 usage error, 3 environment error, 4 timeout, 5 internal "
           "error.\n");
    if (spec->epilog)
        printf("\n%s\n", spec->epilog);
}

static void cli_error(bool print, const char *program, const char *fmt, const char *a, const char *b)
{
    if (!print)
        return;
    fflush(stdout);
    /* A value echoed in the line (an argument, or a message quoting one) stays on the line: \n and the
     * other control characters are written escaped. */
    char shown_a[512], shown_b[512];
    ga_cli_escape(a, shown_a, sizeof shown_a);
    ga_cli_escape(b, shown_b, sizeof shown_b);
    fprintf(stderr, "%s: ", program);
    fprintf(stderr, fmt, shown_a, shown_b);
    fprintf(stderr, " (see --help)\n");
}

/* Fills getopt_long's tables from the common and the program's options. */
static void build_tables(const ga_program_spec *spec, struct option *longs, char *shorts)
{
    size_t n = 0, s = 0;
    shorts[s++] = ':'; /* report a missing value as ':' rather than '?' */
    const ga_option *lists[2] = {spec->options, common_options};
    size_t counts[2] = {spec->n_options, N_COMMON};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < counts[l]; i++) {
            const ga_option *o = &lists[l][i];
            longs[n++] =
                (struct option){o->long_name, o->has_arg ? required_argument : no_argument, NULL, o->key};
            if (o->key > 0 && o->key < 256) {
                shorts[s++] = (char)o->key;
                if (o->has_arg)
                    shorts[s++] = ':';
            }
        }
    }
    for (size_t i = 0; i < spec->n_aliases; i++) {
        const ga_option *target = program_option_named(spec, spec->aliases[i].replaced_by);
        longs[n++] = (struct option){spec->aliases[i].long_name,
                                     target && target->has_arg ? required_argument : no_argument, NULL,
                                     ALIAS_KEY0 + (int)i};
    }
    longs[n] = (struct option){0};
    shorts[s] = '\0';
}

/* "--name" of an option key, for error messages. */
static const char *option_label(const ga_program_spec *spec, int key, char *buf, size_t len)
{
    if (key >= ALIAS_KEY0 && (size_t)(key - ALIAS_KEY0) < spec->n_aliases) {
        snprintf(buf, len, "--%s", spec->aliases[key - ALIAS_KEY0].long_name);
        return buf;
    }
    const ga_option *lists[2] = {spec->options, common_options};
    size_t counts[2] = {spec->n_options, N_COMMON};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < counts[l]; i++)
            if (lists[l][i].key == key) {
                snprintf(buf, len, "--%s", lists[l][i].long_name);
                return buf;
            }
    snprintf(buf, len, "-%c", key);
    return buf;
}

/* A deprecated alias acts as its option, and warns once that value is taken (a bad value gives only the error
 * line); any other key is a program option, stored by the typed parse when its row says where, else by the
 * program's callback. */
static int program_on_option(const ga_program_spec *spec, int key, const char *arg, void *program_opts,
                             bool print, char *err, size_t errlen)
{
    const ga_alias *alias = NULL;
    if (key >= ALIAS_KEY0 && (size_t)(key - ALIAS_KEY0) < spec->n_aliases) {
        alias = &spec->aliases[key - ALIAS_KEY0];
        const ga_option *target = program_option_named(spec, alias->replaced_by);
        if (!target) {
            snprintf(err, errlen, "alias of an unknown option --%s", alias->replaced_by);
            return -1;
        }
        key = target->key;
    }
    const ga_option *o = program_option(spec, key);
    int rc;
    if (o && o->type != GA_OPT_UNTYPED && o->at)
        rc = ga_cli_store_typed(o, arg, program_opts, err, errlen);
    else if (!o || !spec->on_option) {
        snprintf(err, errlen, "unhandled option");
        return -1;
    } else
        rc = spec->on_option(program_opts, key, arg, err, errlen);
    if (rc == 0 && alias && print) {
        fflush(stdout);
        fprintf(stderr, "%s: warning: --%s is deprecated; use --%s\n", spec->name, alias->long_name,
                alias->replaced_by);
    }
    return rc;
}

double ga_cli_scan_timeout(const ga_program_spec *spec, int argc, char **argv)
{
    double t = spec->default_timeout_s;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *v = strcmp(argv[i], "--timeout") == 0         ? (i + 1 < argc ? argv[i + 1] : NULL)
                        : strncmp(argv[i], "--timeout=", 10) == 0 ? argv[i] + 10
                                                                  : NULL;
        char err[128];
        double parsed;
        if (v && ga_parse_double(v, 0, 7 * 24 * 3600, &parsed, err, sizeof err) == 0)
            t = parsed; /* the last one wins, as in the parse; a bad value is the parse's to refuse */
    }
    return t;
}

/* The value of word i when it is long option name ("--name V" or "--name=V"), else NULL. */
static const char *long_value(const char *name, int argc, char **argv, int i)
{
    size_t n = strlen(name);
    if (strncmp(argv[i], "--", 2) != 0 || strncmp(argv[i] + 2, name, n) != 0)
        return NULL;
    if (argv[i][2 + n] == '=')
        return argv[i] + 3 + n;
    return argv[i][2 + n] == '\0' && i + 1 < argc ? argv[i + 1] : NULL;
}

/* The value of word i when it is the short option key ("-K V" or "-KV"), else NULL. */
static const char *short_value(int key, int argc, char **argv, int i)
{
    if (key <= 0 || key >= 128 || argv[i][0] != '-' || argv[i][1] != key)
        return NULL;
    return argv[i][2] ? argv[i] + 2 : i + 1 < argc ? argv[i + 1] : NULL;
}

double ga_cli_scan_wait_timeout(const ga_program_spec *spec, int argc, char **argv)
{
    const ga_option *row = NULL;
    for (size_t k = 0; k < spec->n_options && !row; k++)
        if (strcmp(spec->options[k].long_name, "wait-timeout") == 0)
            row = &spec->options[k];
    if (!row)
        return 0;
    double t = 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *v = long_value("wait-timeout", argc, argv, i);
        if (!v)
            v = short_value(row->key, argc, argv, i);
        for (size_t a = 0; !v && a < spec->n_aliases; a++)
            if (strcmp(spec->aliases[a].replaced_by, "wait-timeout") == 0)
                v = long_value(spec->aliases[a].long_name, argc, argv, i);
        char err[128];
        double parsed;
        if (v && ga_parse_double(v, 0, 7 * 24 * 3600, &parsed, err, sizeof err) == 0)
            t = parsed; /* the last one wins, as in the parse; a bad value is the parse's to refuse */
    }
    return t;
}

/* getopt's '?': an unknown option, or a long one given a value it takes none of (--quick=1; getopt then puts
 * its key in optopt, which is no character to print). */
static void unknown_option(const ga_program_spec *spec, int argc, char **argv, bool print)
{
    char label[80];
    const char *word = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    bool long_word = strncmp(word, "--", 2) == 0;
    const char *eq = long_word ? strchr(word, '=') : NULL;
    if (!long_word && optopt > 32 && optopt < 127)
        snprintf(label, sizeof label, "-%c", optopt);
    else
        snprintf(label, sizeof label, "%.*s", eq ? (int)(eq - word) : (int)strlen(word), word);
    if (long_word && eq && optopt)
        cli_error(print, spec->name, "option '%s' takes no value%s", label, "");
    else
        cli_error(print, spec->name, "unknown option '%s'%s", label, "");
}

/* The common options with a value or a switch (--report-dir, --run-id, --quick, --verbose, --timeout):
 * GA_CLI_RUN or GA_CLI_ERROR; -1 when key is none of them. */
static int common_option(const ga_program_spec *spec, int key, ga_common_opts *common, bool print)
{
    char err[256];
    ga_cli_result result = GA_CLI_RUN;
    switch (key) {
    case OPT_REPORT_DIR:
        if (!*optarg || strlen(optarg) >= sizeof common->report_dir) {
            cli_error(print, spec->name, "--report-dir: '%s' is not a usable path%s", optarg, "");
            result = GA_CLI_ERROR;
        } else {
            snprintf(common->report_dir, sizeof common->report_dir, "%s", optarg);
        }
        return result;
    case OPT_RUN_ID:
        if (!ga_cli_valid_run_id(optarg)) {
            cli_error(print, spec->name, "--run-id: '%s' is not 1 to 63 characters of [A-Za-z0-9._:-]%s",
                      optarg, "");
            result = GA_CLI_ERROR;
        } else {
            snprintf(common->run_id, sizeof common->run_id, "%s", optarg);
        }
        return result;
    case OPT_QUICK:
        common->quick = true;
        return result;
    case OPT_VERBOSE:
        common->verbose = true;
        return result;
    case OPT_TIMEOUT:
        if (ga_parse_double(optarg, 0, 7 * 24 * 3600, &common->timeout_s, err, sizeof err)) {
            cli_error(print, spec->name, "--timeout: %s%s", err, "");
            result = GA_CLI_ERROR;
        }
        common->timeout_given = true;
        return result;
    default:
        return -1;
    }
}

ga_cli_result ga_cli_parse(const ga_program_spec *spec, int argc, char **argv, ga_common_opts *common,
                           void *program_opts, bool print)
{
    memset(common, 0, sizeof *common);
    snprintf(common->report_dir, sizeof common->report_dir, ".");
    common->timeout_s = spec->default_timeout_s;
    const ga_option *clashing = clash(spec);
    if (clashing) {
        /* A programming error, caught by the program's first test run. */
        cli_error(print, spec->name, "internal error: option --%s reuses a common option's name or key%s",
                  clashing->long_name, "");
        return GA_CLI_ERROR;
    }

    size_t total = spec->n_options + N_COMMON + spec->n_aliases;
    struct option *longs = calloc(total + 1, sizeof *longs);
    char *shorts = calloc(2 * total + 2, 1);
    if (!longs || !shorts) {
        free(longs);
        free(shorts);
        return GA_CLI_ERROR;
    }
    build_tables(spec, longs, shorts);

    ga_cli_result result = GA_CLI_RUN;
    char err[256];
    optind = 0; /* full re-initialisation, so the parser can run more than once in a process */
    opterr = 0;
    int key, rc;
    while (result == GA_CLI_RUN && (key = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        char label[80];
        switch (key) {
        case '?':
            unknown_option(spec, argc, argv, print);
            result = GA_CLI_ERROR;
            break;
        case ':':
            cli_error(print, spec->name, "option '%s' needs a value%s",
                      option_label(spec, optopt, label, sizeof label), "");
            result = GA_CLI_ERROR;
            break;
        case OPT_HELP:
            if (print)
                ga_cli_print_help(spec);
            result = GA_CLI_EXIT;
            break;
        case OPT_VERSION:
            if (print)
                printf("%s (gpuaccept) %s\n", spec->name, ga_version());
            result = GA_CLI_EXIT;
            break;
        default:
            if ((rc = common_option(spec, key, common, print)) >= 0)
                result = rc;
            else if (program_on_option(spec, key, optarg, program_opts, print, err, sizeof err)) {
                cli_error(print, spec->name, "%s: %s", option_label(spec, key, label, sizeof label), err);
                result = GA_CLI_ERROR;
            }
        }
    }
    if (result == GA_CLI_RUN && optind < argc) {
        cli_error(print, spec->name, "unexpected argument '%s'%s", argv[optind], "");
        result = GA_CLI_ERROR;
    }
    free(longs);
    free(shorts);
    return result;
}
