/* env_audit's command line: its name, --help text, option table and handler (main.c holds the program). */
#ifndef ENV_OPTS_H
#define ENV_OPTS_H

#include <stddef.h>

#include "ga_cli.h"

/* The program's ga_program_spec; its options are an env_audit_opts (env_analysis.h). */
extern const ga_program_spec env_command_line;

#endif
