#include "ga_fatal.h"

#include "ga_deadline.h"
#include "ga_findings.h"
#include "ga_report.h"
#include "ga_str.h"
#include "ga_transport_capture.h"

#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fatal_host[64] = "?";
static int fatal_rank = -1;

static int thread_level = MPI_THREAD_SINGLE;
static pthread_t main_thread;
static int main_thread_known;

void ga_fatal_set_thread_level(int provided)
{
    thread_level = provided;
    main_thread = pthread_self();
    main_thread_known = 1;
}

void ga_fatal_set_identity(const char *host, int world_rank)
{
    snprintf(fatal_host, sizeof fatal_host, "%s", host);
    fatal_rank = world_rank;
}

/* Ends the process with exit_code: MPI_Abort where that is legal from this thread, else exit/_exit. */
_Noreturn static void end_job(int exit_code)
{
    ga_report_abandon_pending(); /* nothing written half-way */
    ga_nccl_debug_abandon();
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    bool other_thread = main_thread_known && !pthread_equal(pthread_self(), main_thread);
    if (other_thread && thread_level < MPI_THREAD_MULTIPLE)
        _exit(exit_code);
    if (initialized && !finalized)
        MPI_Abort(MPI_COMM_WORLD, exit_code);
    exit(exit_code);
}

/* One fatal error per process: the deadline watcher and the main thread may both see the same expiry; the
 * second waits for the first to end the job. */
static atomic_flag taken = ATOMIC_FLAG_INIT;

/* The line every run ends with (README), for a run that ends here: after the [FATAL] line, on stdout where
 * [RESULT] SUCCESS would have been. */
static void result_line(int exit_code, const char *msg)
{
    const char *name = ga_exit_code_name(exit_code);
    size_t n = strlen(name);
    bool named = strncmp(msg, name, n) == 0 && msg[n] == ':'; /* "timeout: --timeout 3 s expired ..." */
    char clipped[GA_RESULT_REASONS_MAX +
                 8]; /* between words, as ga_result_print cuts (the [FATAL] line is whole) */
    ga_str_clip(clipped, sizeof clipped, msg, GA_RESULT_REASONS_MAX);
    printf("[RESULT] FAILURE: %s%s%s\n", named ? "" : name, named ? "" : ": ", clipped);
    fflush(stdout);
}

_Noreturn static void vfatal(const char *host, int rank, const char *file, int line, int exit_code,
                             const char *fmt, va_list ap)
{
    char msg[1024];
    if (atomic_flag_test_and_set(&taken))
        for (;;)
            pause();
    vsnprintf(msg, sizeof msg, fmt, ap);
    const char *base = strrchr(file, '/');
    fflush(stdout);
    if (rank < 0 && strcmp(host, "job") == 0) /* a fault of the job, no node's (ga_fatal_job_at) */
        fprintf(stderr, "[FATAL] job (%s:%d): %s\n", base ? base + 1 : file, line, msg);
    else
        fprintf(stderr, "[FATAL] %s rank %d (%s:%d): %s\n", host, rank, base ? base + 1 : file, line, msg);
    fflush(stderr);
    result_line(exit_code, msg);
    /* The process ends here: what another thread prints from now on (the main thread's table while the
     * watcher reports) goes nowhere, so that [RESULT] stays the last line. No lock is held: MPI_Abort may
     * still print. */
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0)
        dup2(null_fd, STDOUT_FILENO);
    end_job(exit_code);
}

void ga_fatal_at(const char *file, int line, int exit_code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfatal(fatal_host, fatal_rank, file, line, exit_code, fmt, ap);
}

void ga_fatal_for_at(const char *host, int world_rank, const char *file, int line, int exit_code,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfatal(host, world_rank, file, line, exit_code, fmt, ap);
}

void ga_fatal_job_at(const char *file, int line, int exit_code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfatal("job", -1, file, line, exit_code, fmt, ap);
}

void ga_fatal_quiet(int exit_code)
{
    if (atomic_flag_test_and_set(&taken))
        for (;;)
            pause();
    fflush(stdout);
    fflush(stderr);
    end_job(exit_code);
}

int ga_agree_failure_at(const char *file, int line, int exit_code, const char *msg_or_null)
{
    int mine = msg_or_null ? fatal_rank : INT_MAX, lowest = INT_MAX;
    /* bounded like every wait (the program's -T): a rank stopped before it agrees ends the job, named */
    const char *base = strrchr(file, '/');
    ga_deadline_arm("agreeing on a failure (%s:%d)", base ? base + 1 : file, line);
    GA_MPI_CHECK(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    ga_deadline_disarm();
    if (lowest == INT_MAX)
        return 0;
    if (msg_or_null && lowest == fatal_rank) {
        fflush(stdout);
        fprintf(stderr, "[FATAL] %s rank %d (%s:%d): %s\n", fatal_host, fatal_rank, base ? base + 1 : file,
                line, msg_or_null);
        fflush(stderr);
        result_line(exit_code, msg_or_null);
    }
    return exit_code;
}

void ga_exit_notice(int exit_code)
{
    if (exit_code == GA_EXIT_PASS)
        return;
    fflush(stdout);
    fprintf(stderr, "[EXIT] %s rank %d code %d (%s)\n", fatal_host, fatal_rank, exit_code,
            ga_exit_code_name(exit_code));
    fflush(stderr);
}
