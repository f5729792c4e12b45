#include "ga_testhook.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

double ga_test_p2p_factor(int src, int dst)
{
    const char *pair = getenv(GA_TEST_PREFIX "SLOW_P2P"), *factor = getenv(GA_TEST_SLOW_FACTOR_ENV);
    int s = -1, d = -1;
    if (!pair || sscanf(pair, "%d,%d", &s, &d) != 2 || s != src || d != dst || !factor)
        return 1.0;
    double f = strtod(factor, NULL);
    return f >= 1 && f <= 1000 ? f : 1.0;
}

int ga_test_ranks_per_node(void)
{
    long n = ga_test_int("RANKS_PER_NODE", 0);
    return n > 0 && n < 1000000 ? (int)n : 0;
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

void ga_test_stop_at_phase(int world_rank, const char *phase)
{
    static int named = -2; /* -2: not read yet; -1: no rank named */
    static const char *prefix;
    if (named == -2) {
        named = (int)ga_test_int("STOP_RANK", -1);
        prefix = getenv(GA_TEST_PREFIX "STOP_PHASE");
        if (!prefix || !*prefix)
            named = -1;
    }
    if (named < 0 || world_rank != named || strncmp(phase, prefix, strlen(prefix)) != 0)
        return;
    fflush(stdout);
    fflush(stderr);
    /* The whole process, its watcher thread too: alive, silent, answering nothing. Stopped again when
     * continued: a stopped process in an orphaned process group (a test runs the job in a session of its own)
     * gets SIGCONT when any process of the group exits. */
    for (;;)
        raise(SIGSTOP);
}

double ga_test_delay_s(int world_rank)
{
    long us = ga_test_int("DELAY_US", 0);
    return ga_test_names_rank("DELAY_RANK", world_rank) && us > 0 ? (double)us * 1e-6 : 0;
}

double ga_test_comm_delay_s(void)
{
    static double s = -1; /* read once: it is asked at every step */
    if (s < 0) {
        long us = ga_test_int("GRAD_DELAY_US", 0);
        s = us > 0 ? (double)us * 1e-6 : 0;
    }
    return s;
}

void ga_test_delay(double seconds)
{
    if (!(seconds > 0))
        return;
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) /* the time left after a signal */
        ;
}
