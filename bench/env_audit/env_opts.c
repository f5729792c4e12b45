#include "env_opts.h"

#include "env_analysis.h"
#include "ga_parse.h"

enum { OPT_EXPECT_GPUS = 256 };

const ga_option env_options[] = {
    {"expect-gpus", OPT_EXPECT_GPUS, true, "N",
     "GPUs every node must have; fewer is a failure (default: any)"},
};
const size_t env_n_options = sizeof env_options / sizeof env_options[0];

int env_opts_on_option(void *opts, int key, const char *arg, char *err, size_t errlen)
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
