/* Command-line conventions shared by every program (after OSU's one options structure): the common options
 * are parsed here, a program adds its own through a table and one callback. GNU long options, nccl-tests
 * short ones where they exist. */
#ifndef GA_CLI_H
#define GA_CLI_H

#include <stdbool.h>
#include <stddef.h>

#define GA_PATH_MAX 1024
#define GA_RUN_ID_MAX 64

/* The environment variable (set to 1) that makes a program only parse its arguments and exit 0 or 2 (no
 * MPI_Init, no GPU): ga_program_begin's parse-only mode, which gpuaccept run asks of every planned step
 * before launching (docs/options.md). A variable, not a word of the command line: a wrapper script that adds
 * its own arguments after "$@" (a site's, or a test's) would push a last-word flag out of place. */
#define GA_CHECK_ARGS_ENV "GA_CHECK_ARGS_ONLY"

typedef struct {
    char report_dir[GA_PATH_MAX]; /* --report-dir, default "." */
    bool quick;                   /* --quick: smaller sizes and fewer iterations */
    bool verbose;                 /* --verbose */
    double timeout_s;             /* --timeout: whole-run watchdog, 0 = none */
    bool timeout_given;           /* --timeout was on the command line (else timeout_s is the default) */
    char run_id[GA_RUN_ID_MAX];   /* --run-id; "" = $GPUACCEPT_RUN_ID, the Slurm job, or a fresh one */
} ga_common_opts;

/* Whether s can be a run id: 1..63 characters of [A-Za-z0-9._:-]. */
bool ga_cli_valid_run_id(const char *s);

/* What an option's value is: the parse validates and stores the typed ones itself, the lint holds one type
 * per name across programs and verbs (ctest/lint, docs/options.md). Zero, the old positional initialiser's
 * value, is "untyped": the program's callback parses it. */
typedef enum {
    GA_OPT_UNTYPED = 0,
    GA_OPT_FLAG, /* no value: sets a bool */
    GA_OPT_INT,  /* an integer in [min, max], stored in an int */
    GA_OPT_REAL, /* a number in [min, max], stored in a double */
    GA_OPT_SIZE, /* bytes with K/M/G/T suffixes (ga_parse_size) in [min, max], stored in a uint64_t */
    GA_OPT_PCT,  /* a percentage (ga_cli_parse_pct) in [min, max], stored in a double (see GA_OPT_FRACTION) */
    GA_OPT_STRING, /* free text, stored in a char[cap] */
    GA_OPT_LIST,   /* a comma list; the callback parses it */
    GA_OPT_ENUM,   /* one of choices ("a|b|c"); the callback maps it */
    GA_OPT_PATH,   /* a file or directory, stored in a char[cap] */
} ga_opt_type;

/* ga_option.flags */
enum {
    GA_OPT_FRACTION = 1, /* a percentage stored as a fraction (10% -> 0.1) */
    GA_OPT_NONEMPTY = 2, /* a string or path may not be empty */
};

/* Where the parse stores a typed option's value: the member's offset plus one, so that zero stays "the
 * callback stores it" in tables written positionally. */
#define GA_AT(type, member) (offsetof(type, member) + 1)
/* The buffer size of a char[] member, for ga_option.cap. */
#define GA_CAP(type, member) sizeof(((type *)0)->member)

/* One program-specific option. key is the short option character, or a value >= 256 for long-only ones. A
 * program option may not reuse a common option's name or key: each option means one thing in every program
 * (docs/options.md). The typed description follows the five positional fields, so that a table written
 * {name, key, has_arg, metavar, help} still compiles (untyped, handled by the callback). */
typedef struct {
    const char *long_name;
    int key;
    bool has_arg;
    const char *arg_name; /* shown in --help, e.g. "BYTES" */
    const char *help;
    ga_opt_type type;
    const char *unit; /* "s", "GB/s", "%", "bytes", "Gb/s"; NULL where none applies (a count, a name) */
    const char *default_text; /* shown in --help unless help already says it; NULL: none */
    size_t at;                /* GA_AT(options struct, member); 0: the callback parses and stores it */
    double min, max;          /* range of an int, real, size or percentage; both 0: none */
    size_t cap;               /* a string's or path's buffer size */
    const char *choices;      /* an enum's values, "auto|gpu|host" */
    unsigned flags;           /* GA_OPT_FRACTION, GA_OPT_NONEMPTY */
} ga_option;

/* A deprecated spelling of a program option: it warns once (from the printing rank), then acts as the
 * option named replaced_by; it is left out of --help. */
typedef struct {
    const char *long_name;
    const char *replaced_by;
} ga_alias;

/* Called for each program option; returns 0, or -1 with a one-line message in err. */
typedef int (*ga_option_handler)(void *program_opts, int key, const char *arg, char *err, size_t errlen);

typedef struct {
    const char *name;    /* program name, as in the report file name */
    const char *summary; /* one line for --help */
    const char *epilog;  /* extra --help text (examples, notes), may be NULL */
    const ga_option *options;
    size_t n_options;
    ga_option_handler on_option;
    double default_timeout_s; /* watchdog when --timeout is not given */
    const ga_alias *aliases;  /* may be NULL */
    size_t n_aliases;
} ga_program_spec;

typedef enum {
    GA_CLI_RUN,   /* go on */
    GA_CLI_EXIT,  /* --help or --version was printed: exit 0 */
    GA_CLI_ERROR, /* bad command line: exit 2 */
} ga_cli_result;

/* Parses argv. Messages (help, version, the one error line) go out only when print is true, so that a
 * multi-rank job prints them once. */
ga_cli_result ga_cli_parse(const ga_program_spec *spec, int argc, char **argv, ga_common_opts *common,
                           void *program_opts, bool print);

void ga_cli_print_help(const ga_program_spec *spec);

/* The common options' table (--report-dir, --quick, ...), for the lint and the docs check. */
const ga_option *ga_cli_common_options(size_t *n);

/* Parses and stores a typed option with a destination (o->at != 0) into program_opts: 0, or -1 with a
 * one-line message in err. */
int ga_cli_store_typed(const ga_option *o, const char *arg, void *program_opts, char *err, size_t errlen);

/* Whether --help adds an option's unit after its text: it has one, and its metavar does not already say it
 * ("BYTES" says bytes, "GB/s" says GB/s). */
bool ga_cli_unit_shown(const char *metavar, const char *unit);

/* A type's name as the lint and docs/options.md write it: "int", "percentage", ... */
const char *ga_opt_type_name(ga_opt_type t);

/* Writes s into out with control characters and backslashes escaped (\n, \t, \xHH), so that a value echoed
 * in an error line keeps it one line. */
void ga_cli_escape(const char *s, char *out, size_t len);

/* The --timeout of argv (--timeout SEC or --timeout=SEC, the last one), else the program's default, without
 * parsing anything else: read before MPI is up, so that the watchdog bounds the start-up too. */
double ga_cli_scan_timeout(const ga_program_spec *spec, int argc, char **argv);

/* The -T/--wait-timeout of argv (its deprecated aliases too) when the program has that option, else 0 (none
 * given): read before MPI is up, so that the bound holds from the first collective on. */
double ga_cli_scan_wait_timeout(const ga_program_spec *spec, int argc, char **argv);

/* The -T/--wait-timeout row of a program whose waits have no other bound: every wait from the first
 * collective on, seconds, 0 (the default): none, --timeout alone (issue 45, item 8). */
#define GA_WAIT_TIMEOUT_OPTION(type, member)                                                                 \
    {                                                                                                        \
        "wait-timeout", 'T', true, "SEC",                                                                    \
            "bound of every wait from the first collective on, 0: none (default 0)", GA_OPT_REAL, "s",       \
            .at = GA_AT(type, member), .min = 0, .max = 7 * 24 * 3600                                        \
    }

/* Parses a percentage, "10" or "10%", within [min_pct, max_pct], into *pct (in percent). Every relative
 * threshold on the command line is a percentage (docs/options.md). A value strictly between -1 and 1 written
 * without '%' is refused with a hint: it reads as a fraction (0.1 for 10%), which taken as 0.1% would be a
 * limit a hundred times tighter than meant; "0.5%" says it is meant. 0, or -1 with a message in err. */
int ga_cli_parse_pct(const char *arg, double min_pct, double max_pct, double *pct, char *err, size_t errlen);
/* The same, stored as a fraction (10% -> 0.1) for analyses that work in fractions. */
int ga_cli_parse_pct_fraction(const char *arg, double min_pct, double max_pct, double *fraction, char *err,
                              size_t errlen);

#endif
