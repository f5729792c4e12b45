#include "ga_testhook.h"

#include <stdio.h>
#include <stdlib.h>

long ga_test_int(const char *name, long fallback)
{
    char var[96];
    snprintf(var, sizeof var, GA_TEST_PREFIX "%s", name);
    const char *v = getenv(var);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

bool ga_test_names_rank(const char *name, int world_rank)
{
    return world_rank >= 0 && ga_test_int(name, -1) == world_rank;
}

double ga_test_slow_factor(int world_rank)
{
    const char *rank = getenv(GA_TEST_SLOW_RANK_ENV), *factor = getenv(GA_TEST_SLOW_FACTOR_ENV);
    if (!rank || !*rank || atoi(rank) != world_rank)
        return 1.0;
    char *end = NULL;
    double f = factor ? strtod(factor, &end) : 0;
    if (!factor || end == factor || *end || !(f >= 1 && f <= 1000)) {
        static int warned;
        if (!warned++)
            fprintf(stderr,
                    "warning: %s=%s names this rank, but %s=%s is not a factor from 1 to 1000: ignored\n",
                    GA_TEST_SLOW_RANK_ENV, rank, GA_TEST_SLOW_FACTOR_ENV, factor ? factor : "(unset)");
        return 1.0;
    }
    return f;
}

void ga_test_slow_down(double factor, double elapsed_s, double (*clock)(void))
{
    double extra = (factor - 1.0) * elapsed_s;
    if (!(extra > 0))
        return;
    volatile double sink = 0;
    for (double until = clock() + extra; clock() < until;)
        for (int i = 0; i < 1000; i++)
            sink = sink + 1.0;
}
