/* gemm_flops' command line: the option table, its handler and what it fills. */
#ifndef GF_OPTS_H
#define GF_OPTS_H

#include <stddef.h>

#include "ga_cli.h"
#include "gf_record.h"

typedef struct {
    gf_opts o;
    char dtype_arg[128];
    const char *burn_only; /* the first option that means something only in burn mode, NULL: none */
    double wait_timeout_s; /* -T/--wait-timeout, 0: none */
} gf_cli;

/* The program's command line (ga_program_spec): name, --help text, option table and handler, aliases. */
extern const ga_program_spec gf_command_line; /* its options are a gf_cli */

#endif
