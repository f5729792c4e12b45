/* env_audit's command line (env_opts.h). */
#include "env_opts.h"

#include "env_analysis.h"
#include "ga_parse.h"

enum { OPT_EXPECT_GPUS = 256 };

static const ga_option env_options[] = {
    {"expect-gpus", OPT_EXPECT_GPUS, true, "N",
     "GPUs every node must have; fewer is a failure (default: any)"},
};

static int env_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
{
    env_audit_opts *o = opts;
    long v = 0;
    if (key == OPT_EXPECT_GPUS) {
        if (ga_parse_long(arg, 0, 1024, &v, err, errlen))
            return -1;
        o->expect_gpus = (int)v;
    }
    return 0;
}

const ga_program_spec env_command_line = {
    .name = "env_audit",
    .summary = "Records the software stack, GPUs and topology of every rank and checks that nodes agree.",
    .epilog = "Example: mpirun -np 16 --map-by ppr:8:node env_audit --expect-gpus 8 --report-dir reports",
    .options = env_options,
    .n_options = sizeof env_options / sizeof env_options[0],
    .on_option = env_opts_on_option,
    .default_timeout_s = 300,
};
