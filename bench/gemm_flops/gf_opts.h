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
} gf_cli;

extern const ga_option gf_options[];
extern const size_t gf_n_options;
extern const ga_alias gf_aliases[]; /* --device, deprecated for --backend */
extern const size_t gf_n_aliases;

/* A ga_option_handler for gf_options: opts is a gf_cli. */
int gf_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen);

#endif
