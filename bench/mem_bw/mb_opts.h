/* mem_bw's command line: the option table and its handler. */
#ifndef MB_OPTS_H
#define MB_OPTS_H

#include <stddef.h>

#include "ga_cli.h"
#include "mb_record.h"

extern const ga_option mb_options[];
extern const size_t mb_n_options;
extern const ga_alias mb_aliases[]; /* --device, deprecated for --backend */
extern const size_t mb_n_aliases;

/* A ga_option_handler for mb_options: opts is an mb_opts. */
int mb_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen);

#endif
