/* Writes every program's and every verb's option table as tab-separated rows (owner, long name, type, unit,
 * metavar, whether it has a help text, the deprecated aliases), for check_option_names.py: the tables
 * themselves, linked from the programs' cores and the front-end, not their --help. */
#include <stdio.h>

#include "ar_opts.h"
#include "ddp_opts.h"
#include "env_opts.h"
#include "ga_cli.h"
#include "gf_opts.h"
#include "lm_opts.h"
#include "mb_opts.h"
#include "nh_opts.h"
#include "verb_options.h"

static void row(const char *owner, const char *name, ga_opt_type type, const char *unit, const char *metavar,
                const char *help)
{
    printf("option\t%s\t%s\t%s\t%s\t%s\t%s\n", owner, name, ga_opt_type_name(type), unit ? unit : "",
           metavar ? metavar : "", help && *help ? "help" : "");
}

static void program_rows(const char *owner, const ga_option *options, size_t n)
{
    for (size_t i = 0; i < n; i++)
        row(owner, options[i].long_name, options[i].type, options[i].unit, options[i].arg_name,
            options[i].help);
}

static void aliases(const char *owner, const ga_alias *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("alias\t%s\t%s\t%s\n", owner, a[i].long_name, a[i].replaced_by);
}

static void program(const ga_program_spec *spec)
{
    program_rows(spec->name, spec->options, spec->n_options);
    aliases(spec->name, spec->aliases, spec->n_aliases);
}

int main(void)
{
    size_t n_common = 0;
    const ga_option *common = ga_cli_common_options(&n_common);
    program_rows("common", common, n_common);
    const ga_program_spec *specs[] = {&nh_command_line, &env_command_line, &gf_command_line,
                                      &mb_command_line, &ddp_command_line, &lm_command_line};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        program(specs[i]);
    program_rows("allreduce_bw", ar_options, AR_N_OPTIONS); /* its spec is built in its main.c */
    for (const suite_verb *const *v = suite_verb_tables; *v; v++) {
        char owner[64];
        snprintf(owner, sizeof owner, "gpuaccept %s", (*v)->verb);
        for (size_t i = 0; i < (*v)->n_options; i++) {
            const suite_option *o = &(*v)->options[i];
            row(owner, o->long_name, o->type, o->unit, o->arg_name, o->help);
        }
        aliases(owner, (*v)->aliases, (*v)->n_aliases);
    }
    return 0;
}
