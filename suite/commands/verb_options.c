#include "verb_options.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_version.h"
#include "suite.h"

enum { KEY_HELP = 'h', KEY_VERSION = 999 };
/* getopt keys of a verb's deprecated aliases, KEY_ALIAS0 + index: above every option's key. */
enum { KEY_ALIAS0 = 3000 };
enum { HELP_COLUMN = 27, HELP_WIDTH = 104 };

/* Prints text from column HELP_COLUMN, words wrapped before HELP_WIDTH; "\n" in text breaks the line. */
static void print_wrapped(const char *text, int column)
{
    const char *p = text;
    bool line_start = true; /* no blank before the first word of a line */
    while (*p) {
        size_t word = strcspn(p, " \n");
        if (!line_start && column + 1 + (int)word > HELP_WIDTH) {
            printf("\n%*s", HELP_COLUMN, "");
            column = HELP_COLUMN;
        } else if (!line_start) {
            putchar(' ');
            column++;
        }
        printf("%.*s", (int)word, p);
        column += (int)word;
        line_start = false;
        p += word;
        if (*p == '\n') {
            printf("\n%*s", HELP_COLUMN, "");
            column = HELP_COLUMN;
            line_start = true;
        }
        while (*p == ' ' || *p == '\n')
            p++;
    }
    putchar('\n');
}

static void print_option(const suite_option *o)
{
    char left[96];
    char shrt[8] = "    ";
    if (o->key < 128)
        snprintf(shrt, sizeof shrt, "-%c, ", o->key);
    const char *sep = !o->arg_name ? "" : o->has_arg == optional_argument ? "" : " ";
    snprintf(left, sizeof left, "  %s--%s%s%s", shrt, o->long_name, sep, o->arg_name ? o->arg_name : "");
    /* the unit from the table, unless the metavar is it */
    char help[1024];
    bool say_unit = ga_cli_unit_shown(o->arg_name, o->unit);
    snprintf(help, sizeof help, "%s%s%s%s", o->help, say_unit ? " [" : "", say_unit ? o->unit : "",
             say_unit ? "]" : "");
    int len = (int)strlen(left);
    if (len + 2 > HELP_COLUMN) {
        printf("%s  ", left);
        print_wrapped(help, len + 2);
    } else {
        printf("%-*s", HELP_COLUMN, left);
        print_wrapped(help, HELP_COLUMN);
    }
}

void suite_verb_help(const suite_verb *v)
{
    static const suite_option common[] = {{"help", KEY_HELP, no_argument, NULL, "this help"},
                                          {"version", KEY_VERSION, no_argument, NULL, "the version"}};
    v->before();
    printf("\nOptions:\n");
    for (size_t i = 0; i < v->n_options; i++)
        print_option(&v->options[i]);
    for (size_t i = 0; i < 2; i++)
        print_option(&common[i]);
    if (v->after) {
        printf("\n");
        v->after();
    }
}

/* (node-check takes only -h and the words it hands node_health: no table) */
extern const suite_verb run_verb, merge_verb, baseline_verb, compare_verb;
const suite_verb *const suite_verb_tables[] = {&run_verb, &merge_verb, &baseline_verb, &compare_verb, NULL};

/* The key of the option an alias names, or -1. */
static int alias_target(const suite_verb *v, const ga_alias *a)
{
    for (size_t i = 0; i < v->n_options; i++)
        if (strcmp(v->options[i].long_name, a->replaced_by) == 0)
            return v->options[i].key;
    return -1;
}

/* The row of key, or NULL. */
static const suite_option *option_of(const suite_verb *v, int key)
{
    for (size_t i = 0; i < v->n_options; i++)
        if (v->options[i].key == key)
            return &v->options[i];
    return NULL;
}

/* An option whose row says where it goes, stored by the programs' typed parse: 0, or the usage error's code
 * (naming the option as it was written, an alias too, as the programs do). */
static int store_typed(const suite_verb *v, const suite_option *o, const char *written, void *dest)
{
    const ga_option typed = {.long_name = o->long_name,
                             .type = o->type,
                             .unit = o->unit,
                             .at = o->at,
                             .min = o->min,
                             .max = o->max};
    char err[256];
    if (ga_cli_store_typed(&typed, optarg, dest, err, sizeof err) != 0)
        return suite_usage_error(v->verb, "--%s: %s", written, err);
    return 0;
}

/* One option given: an alias acts as its option, and warns once that value is taken (a bad value gives only
 * the error line). -1 to go on, else the exit code. */
static int verb_option(const suite_verb *v, int key, suite_option_fn on, void *ctx, void *dest)
{
    const ga_alias *alias = NULL;
    if (key >= KEY_ALIAS0 && (size_t)(key - KEY_ALIAS0) < v->n_aliases) {
        alias = &v->aliases[key - KEY_ALIAS0];
        key = alias_target(v, alias);
    }
    const suite_option *o = option_of(v, key);
    int r = dest && o && o->type != GA_OPT_UNTYPED && o->at
                ? store_typed(v, o, alias ? alias->long_name : o->long_name, dest)
                : on(ctx, key, optarg);
    if (r == 0 && alias) {
        fflush(stdout);
        fprintf(stderr, "gpuaccept %s: warning: --%s is deprecated; use --%s\n", v->verb, alias->long_name,
                alias->replaced_by);
    }
    return r == 0 ? -1 : r == SUITE_VERB_DONE ? GA_EXIT_PASS : r;
}

/* getopt_long's tables from the verb's options, its aliases, --help and --version. */
static void build_tables(const suite_verb *v, struct option *longs, char *shorts, size_t shorts_len)
{
    size_t n = v->n_options, ns = 1;
    for (size_t i = 0; i < n; i++) {
        const suite_option *o = &v->options[i];
        longs[i] = (struct option){o->long_name, o->has_arg, NULL, o->key};
        if (o->key < 128 && ns + 3 < shorts_len) {
            shorts[ns++] = (char)o->key;
            if (o->has_arg != no_argument)
                shorts[ns++] = ':';
        }
    }
    for (size_t i = 0; i < v->n_aliases; i++) {
        int target = alias_target(v, &v->aliases[i]);
        int has_arg = no_argument;
        for (size_t j = 0; j < n; j++)
            if (v->options[j].key == target)
                has_arg = v->options[j].has_arg;
        longs[n + i] = (struct option){v->aliases[i].long_name, has_arg, NULL, KEY_ALIAS0 + (int)i};
    }
    n += v->n_aliases;
    longs[n] = (struct option){"help", no_argument, NULL, KEY_HELP};
    longs[n + 1] = (struct option){"version", no_argument, NULL, KEY_VERSION};
    shorts[ns++] = 'h';
    shorts[ns] = '\0';
}

int suite_verb_parse(const suite_verb *v, int argc, char **argv, suite_option_fn on, void *ctx)
{
    return suite_verb_parse_into(v, argc, argv, on, ctx, NULL);
}

int suite_verb_parse_into(const suite_verb *v, int argc, char **argv, suite_option_fn on, void *ctx,
                          void *dest)
{
    struct option *longs = calloc(v->n_options + v->n_aliases + 3, sizeof *longs);
    char shorts[2 + 2 * 32 + 2] = ":";
    if (!longs) {
        fprintf(stderr, "gpuaccept %s: out of memory\n", v->verb);
        return GA_EXIT_INTERNAL;
    }
    build_tables(v, longs, shorts, sizeof shorts);
    optind = 0;
    opterr = 0;
    int key, rc = -1;
    while (rc == -1 && (key = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (key == KEY_HELP) {
            suite_verb_help(v);
            rc = GA_EXIT_PASS;
        } else if (key == KEY_VERSION) {
            printf("gpuaccept %s %s\n", v->verb, ga_version());
            rc = GA_EXIT_PASS;
        } else if (key == '?' || key == ':') {
            rc = suite_bad_option(v->verb, key, argv);
        } else {
            rc = verb_option(v, key, on, ctx, dest);
        }
    }
    free(longs);
    return rc;
}
