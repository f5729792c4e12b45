#include "ar_deadline.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_time.h"

static struct {
    pthread_mutex_t lock;
    pthread_t thread;
    bool running, stop, armed;
    double timeout_s, deadline, bound;
    char what[256];
    ar_abort_hook hook;
    void *hook_user;
} dl = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *watch(void *arg)
{
    (void)arg;
    struct timespec tick = {0, 50 * 1000 * 1000}; /* 50 ms: fine against any timeout worth setting */
    for (;;) {
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&dl.lock);
        if (dl.stop) {
            pthread_mutex_unlock(&dl.lock);
            return NULL;
        }
        bool expired = dl.armed && ga_now() > dl.deadline;
        char what[sizeof dl.what];
        snprintf(what, sizeof what, "%s", dl.what);
        double bound = dl.bound;
        ar_abort_hook hook = dl.hook;
        void *user = dl.hook_user;
        pthread_mutex_unlock(&dl.lock);
        if (expired) {
            if (hook)
                hook(user);
            GA_FATAL(GA_EXIT_TIMEOUT, "timeout: %s did not complete within %g s (-T %g)", what, bound,
                     dl.timeout_s);
        }
    }
}

void ar_deadline_start(double timeout_s)
{
    dl.timeout_s = timeout_s;
    if (timeout_s <= 0 || dl.running)
        return;
    dl.stop = false;
    dl.running = pthread_create(&dl.thread, NULL, watch, NULL) == 0;
}

void ar_deadline_stop(void)
{
    if (!dl.running)
        return;
    pthread_mutex_lock(&dl.lock);
    dl.stop = true;
    pthread_mutex_unlock(&dl.lock);
    pthread_join(dl.thread, NULL);
    dl.running = false;
}

void ar_deadline_set_abort_hook(ar_abort_hook hook, void *user)
{
    pthread_mutex_lock(&dl.lock);
    dl.hook = hook;
    dl.hook_user = user;
    pthread_mutex_unlock(&dl.lock);
}

static void arm(double seconds, const char *fmt, va_list ap)
{
    if (!dl.running)
        return;
    pthread_mutex_lock(&dl.lock);
    vsnprintf(dl.what, sizeof dl.what, fmt, ap);
    dl.deadline = ga_now() + seconds;
    dl.bound = seconds;
    dl.armed = true;
    pthread_mutex_unlock(&dl.lock);
}

void ar_deadline_arm(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    arm(dl.timeout_s, fmt, ap);
    va_end(ap);
}

void ar_deadline_arm_for(double seconds, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    arm(seconds, fmt, ap);
    va_end(ap);
}

void ar_deadline_disarm(void)
{
    if (!dl.running)
        return;
    pthread_mutex_lock(&dl.lock);
    dl.armed = false;
    pthread_mutex_unlock(&dl.lock);
}

double ar_deadline_timeout(void)
{
    return dl.timeout_s;
}
