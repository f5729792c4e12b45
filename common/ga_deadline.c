#include "ga_deadline.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_time.h"

static struct {
    pthread_mutex_t lock;
    pthread_t thread;
    bool running, stop;
    double run_timeout, run_deadline; /* run_deadline 0: none */
    char phase[160];
    double wait_timeout; /* default bound of an armed wait, 0: none */
    bool wait_armed;
    double wait_deadline, wait_bound;
    char wait_what[256];
    ga_abort_hook hook;
    void *hook_user;
} dl = {.lock = PTHREAD_MUTEX_INITIALIZER, .phase = "start-up"};

static void *watch(void *arg)
{
    (void)arg;
    double nap = 0.0;
    for (;;) {
        struct timespec tick = {0, (long)(nap * 1e9)};
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&dl.lock);
        if (dl.stop) {
            pthread_mutex_unlock(&dl.lock);
            return NULL;
        }
        double now = ga_now();
        bool wait_expired = dl.wait_armed && now > dl.wait_deadline;
        bool run_expired = dl.run_deadline > 0 && now > dl.run_deadline;
        char msg[512];
        if (wait_expired)
            snprintf(msg, sizeof msg, "timeout: %s did not complete within %g s", dl.wait_what,
                     dl.wait_bound);
        else if (run_expired)
            snprintf(msg, sizeof msg, "timeout: --timeout %g s expired during '%s'", dl.run_timeout,
                     dl.phase);
        ga_abort_hook hook = dl.hook;
        void *user = dl.hook_user;
        /* Sleep until the nearest bound, but at most 50 ms, so that a bound armed meanwhile is seen. */
        nap = 0.05;
        if (dl.run_deadline > 0 && dl.run_deadline - now < nap)
            nap = dl.run_deadline - now;
        if (dl.wait_armed && dl.wait_deadline - now < nap)
            nap = dl.wait_deadline - now;
        nap = nap < 1e-4 ? 1e-4 : nap;
        pthread_mutex_unlock(&dl.lock);
        if (wait_expired || run_expired) {
            if (hook)
                hook(user);
            GA_FATAL(GA_EXIT_TIMEOUT, "%s", msg);
        }
    }
}

/* The watcher runs while any bound is set; started at most once. Caller holds no lock. */
static void ensure_watcher(void)
{
    pthread_mutex_lock(&dl.lock);
    bool start = !dl.running && !dl.stop && (dl.run_deadline > 0 || dl.wait_timeout > 0 || dl.wait_armed);
    if (start) {
        dl.stop = false;
        dl.running = pthread_create(&dl.thread, NULL, watch, NULL) == 0;
    }
    pthread_mutex_unlock(&dl.lock);
}

void ga_deadline_start_run(double run_timeout_s)
{
    pthread_mutex_lock(&dl.lock);
    dl.run_timeout = run_timeout_s;
    dl.run_deadline = run_timeout_s > 0 ? ga_now() + run_timeout_s : 0;
    pthread_mutex_unlock(&dl.lock);
    ensure_watcher();
}

void ga_deadline_set_wait_timeout(double wait_timeout_s)
{
    pthread_mutex_lock(&dl.lock);
    dl.wait_timeout = wait_timeout_s > 0 ? wait_timeout_s : 0;
    pthread_mutex_unlock(&dl.lock);
    ensure_watcher();
}

double ga_deadline_wait_timeout(void)
{
    return dl.wait_timeout;
}

void ga_deadline_stop(void)
{
    pthread_mutex_lock(&dl.lock);
    bool running = dl.running;
    dl.stop = true;
    pthread_mutex_unlock(&dl.lock);
    if (running)
        pthread_join(dl.thread, NULL);
    dl.running = false;
}

void ga_phase(const char *fmt, ...)
{
    char buf[sizeof dl.phase];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&dl.lock);
    memcpy(dl.phase, buf, sizeof buf);
    pthread_mutex_unlock(&dl.lock);
}

static void arm(double seconds, const char *fmt, va_list ap)
{
    if (seconds <= 0)
        return;
    pthread_mutex_lock(&dl.lock);
    vsnprintf(dl.wait_what, sizeof dl.wait_what, fmt, ap);
    dl.wait_deadline = ga_now() + seconds;
    dl.wait_bound = seconds;
    dl.wait_armed = true;
    pthread_mutex_unlock(&dl.lock);
    ensure_watcher();
}

void ga_deadline_arm(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    arm(dl.wait_timeout, fmt, ap); /* no effect while the default is 0 */
    va_end(ap);
}

void ga_deadline_arm_for(double seconds, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    arm(seconds, fmt, ap);
    va_end(ap);
}

void ga_deadline_rearm(void)
{
    pthread_mutex_lock(&dl.lock);
    if (dl.wait_armed)
        dl.wait_deadline = ga_now() + dl.wait_bound;
    pthread_mutex_unlock(&dl.lock);
}

void ga_deadline_disarm(void)
{
    pthread_mutex_lock(&dl.lock);
    dl.wait_armed = false;
    pthread_mutex_unlock(&dl.lock);
}

void ga_deadline_set_abort_hook(ga_abort_hook hook, void *user)
{
    pthread_mutex_lock(&dl.lock);
    dl.hook = hook;
    dl.hook_user = user;
    pthread_mutex_unlock(&dl.lock);
}
