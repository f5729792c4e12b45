/* mem_bw's command line: the option table and its handler. */
#ifndef MB_OPTS_H
#define MB_OPTS_H

#include <stddef.h>

#include "ga_cli.h"
#include "mb_record.h"

/* The program's command line (ga_program_spec): name, --help text, option table and handler, aliases. */
extern const ga_program_spec mb_command_line;

#endif
