#include "ga_fatal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char fatal_host[64] = "?";
static int fatal_rank = -1;

void ga_fatal_set_identity(const char *host, int world_rank)
{
    snprintf(fatal_host, sizeof fatal_host, "%s", host);
    fatal_rank = world_rank;
}

void ga_fatal_at(const char *file, int line, int exit_code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    fflush(stdout);
    fprintf(stderr, "[FATAL] %s rank %d (%s:%d): %s\n", fatal_host, fatal_rank, base ? base + 1 : file, line,
            msg);
    fflush(stderr);

    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Abort(MPI_COMM_WORLD, exit_code);
    exit(exit_code);
}
