/* env_audit's command line: the option table and its handler (main.c holds the program). */
#ifndef ENV_OPTS_H
#define ENV_OPTS_H

#include <stddef.h>

#include "ga_cli.h"

extern const ga_option env_options[];
extern const size_t env_n_options;

/* A ga_option_handler for env_options: opts is an env_audit_opts (env_analysis.h). */
int env_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen);

#endif
