#include "ga_log.h"

#include <stdarg.h>
#include <stdio.h>

static int log_rank = 0;
static char log_host[64] = "?";
static bool log_verbose = false;

void ga_log_set_rank(int world_rank, const char *host)
{
    log_rank = world_rank;
    snprintf(log_host, sizeof log_host, "%s", host);
}

void ga_log_set_verbose(bool verbose)
{
    log_verbose = verbose;
}

bool ga_log_verbose(void)
{
    return log_verbose;
}

static void vlog(const char *tag, bool with_identity, const char *fmt, va_list ap)
{
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    if (with_identity)
        printf("[%s] %s rank %d: %s\n", tag, log_host, log_rank, line);
    else
        printf("[%s] %s\n", tag, line);
    fflush(stdout);
}

void ga_log(const char *tag, const char *fmt, ...)
{
    if (log_rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, false, fmt, ap);
    va_end(ap);
}

void ga_log_rank(const char *tag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, true, fmt, ap);
    va_end(ap);
}

void ga_debug(const char *tag, const char *fmt, ...)
{
    if (!log_verbose || log_rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, false, fmt, ap);
    va_end(ap);
}

void ga_error_once(const char *program, const char *fmt, ...)
{
    if (log_rank != 0)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "%s: %s\n", program, line);
    fflush(stderr);
}
