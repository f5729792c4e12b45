/* env_audit's command line (env_opts.h). */
#include "env_opts.h"

#include "env_analysis.h"

enum { OPT_EXPECT_GPUS = 256 };

static const ga_option env_options[] = {
    {.long_name = "expect-gpus",
     .key = OPT_EXPECT_GPUS,
     .has_arg = true,
     .arg_name = "N",
     .help = "GPUs every node must have; fewer is a failure (default: any)",
     .type = GA_OPT_INT,
     .at = GA_AT(env_audit_opts, expect_gpus),
     .min = 0,
     .max = 1024},
    GA_WAIT_TIMEOUT_OPTION(env_audit_opts, wait_timeout_s),
};

const ga_program_spec env_command_line = {
    .name = "env_audit",
    .summary = "Records the software stack, GPUs and topology of every rank and checks that nodes agree.",
    .epilog = "Example: mpirun -np 16 --map-by ppr:8:node env_audit --expect-gpus 8 --report-dir reports",
    .options = env_options,
    .n_options = sizeof env_options / sizeof env_options[0],
    .default_timeout_s = 300,
};
