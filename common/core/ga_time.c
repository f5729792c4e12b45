#include "ga_time.h"

#include <sched.h>
#include <stdio.h>
#include <time.h>

double ga_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ga_wait_pause_s(double waited_s)
{
    if (!(waited_s >= GA_WAIT_YIELD_ONLY_S))
        return 0;
    double pause = waited_s / 200;
    return pause < GA_WAIT_SLEEP_MAX_S ? pause : GA_WAIT_SLEEP_MAX_S;
}

void ga_wait_pause(double waited_s)
{
    double pause = ga_wait_pause_s(waited_s);
    if (pause <= 0) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, (long)(pause * 1e9)};
    nanosleep(&ts, NULL);
}

void ga_utc_format(char *buf, size_t len, const char *fmt)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (len && strftime(buf, len, fmt, &tm) == 0)
        buf[0] = '\0'; /* too small: strftime leaves buf undefined */
}

static double clock_seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ga_thread_cpu_now(void)
{
    return clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}

double ga_process_cpu_now(void)
{
    return clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

void ga_utc_timestamp(char *buf, size_t len)
{
    ga_utc_format(buf, len, "%Y-%m-%dT%H:%M:%SZ");
}

double ga_run_queue_wait_now(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return -1;
    unsigned long long on_cpu = 0, waited = 0;
    int got = fscanf(f, "%llu %llu", &on_cpu, &waited);
    fclose(f);
    return got == 2 ? (double)waited * 1e-9 : -1;
}
