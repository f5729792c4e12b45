/* The options of the front-end's verbs, each verb's from one table (as the programs' ga_cli tables): the
 * table drives getopt_long and writes the "Options:" block of --help, so an option cannot be parsed and
 * left undocumented, or documented and not parsed. Every verb has -h/--help and --version besides. */
#ifndef SUITE_VERB_OPTIONS_H
#define SUITE_VERB_OPTIONS_H

#include <stddef.h>

#include "ga_cli.h" /* ga_opt_type, ga_alias: one description for programs and verbs */

typedef struct {
    const char *long_name;
    int key;              /* the short option's letter, or a value >= 1000 for a long-only option */
    int has_arg;          /* no_argument, required_argument or optional_argument (getopt.h) */
    const char *arg_name; /* in --help: "FILE"; for an optional value, as written: "[=json]" */
    const char *help;     /* in --help, wrapped; may hold "\n" to break a line */
    ga_opt_type type;     /* what the value is (ga_cli.h); the lint holds it equal to the programs' */
    const char *unit;     /* "s", "%", ...; NULL where none applies */
    size_t at;            /* GA_AT(the verb's options struct, member): the parse stores it; 0: the callback */
    double min, max;      /* an int's or real's range (both 0: none) */
} suite_option;

typedef struct {
    const char *verb;
    const suite_option *options;
    size_t n_options;
    void (*before)(void);    /* the usage line and what the verb does, printed before "Options:" */
    void (*after)(void);     /* exit codes and notes after the options; may be NULL */
    const ga_alias *aliases; /* deprecated spellings: each warns once, then acts as its option; may be NULL */
    size_t n_aliases;
} suite_verb;

/* Every verb's table, for the option lint (ctest/lint) and the docs check. NULL-terminated. */
extern const suite_verb *const suite_verb_tables[];

/* Called for each option given; returns 0 to go on, SUITE_VERB_DONE when the verb printed what was asked and
 * ends with exit 0, or an exit code to end with. */
#define SUITE_VERB_DONE (-2)
typedef int (*suite_option_fn)(void *ctx, int key, const char *arg);

/* Parses argv with the verb's table: -1 when the verb goes on (optind is then the first word after the
 * options), else the exit code to return (0 after --help or --version, 2 for an unknown option or a
 * missing value, or what on returned). */
int suite_verb_parse(const suite_verb *v, int argc, char **argv, suite_option_fn on, void *ctx);
/* The same, with the options whose rows say where (at) stored into dest by the typed parse (ga_cli.h). */
int suite_verb_parse_into(const suite_verb *v, int argc, char **argv, suite_option_fn on, void *ctx,
                          void *dest);

void suite_verb_help(const suite_verb *v);

#endif
