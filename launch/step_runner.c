#include "step_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_time.h"

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

void suite_step_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool suite_stop_requested(void)
{
    return stop_requested != 0;
}

/* Tracks the current output line to keep the last "[RESULT]" line. */
typedef struct {
    char line[512];
    size_t len;
    bool overflow;
} line_scan;

static void scan_bytes(line_scan *ls, const char *buf, size_t n, suite_step_result *res)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            ls->line[ls->len] = '\0';
            if (strncmp(ls->line, "[RESULT]", 8) == 0)
                snprintf(res->result_line, sizeof res->result_line, "%s", ls->line);
            ls->len = 0;
            ls->overflow = false;
        } else if (ls->len + 1 < sizeof ls->line) {
            ls->line[ls->len++] = buf[i];
        } else {
            ls->overflow = true; /* the line is kept truncated */
        }
    }
}

static void write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* our own stdout is gone: the step goes on regardless */
        buf += w;
        n -= (size_t)w;
    }
}

/* Exited without being reaped: the zombie keeps the process-group id from being reused meanwhile. */
static bool leader_exited(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

int suite_step_run(const suite_step_spec *spec, suite_step_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    double t0 = ga_now();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            close(devnull);
        }
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        execvp(spec->argv[0], spec->argv);
        fprintf(stderr, "[SUITE] cannot run %s: %s\n", spec->argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here: whichever of parent and child runs first */
    res->started = true;
    close(fds[1]);

    line_scan ls = {0};
    bool eof = false, exited = false, term_sent = false, kill_sent = false;
    double last_output = t0, deadline = t0 + spec->timeout_s, kill_at = 0, drain_until = 0;
    char buf[8192];
    while (true) {
        double t = ga_now();
        if (!exited && leader_exited(pid)) {
            exited = true;
            drain_until = t + 2.0; /* ranks' last lines may still be in flight */
        }
        if (exited && (eof || t >= drain_until))
            break;
        if (!exited && !term_sent && (t >= deadline || stop_requested)) {
            res->timed_out = !stop_requested;
            res->interrupted = stop_requested != 0;
            kill(-pid, SIGTERM);
            term_sent = true;
            kill_at = t + spec->grace_s;
        }
        if (!exited && term_sent && !kill_sent && t >= kill_at) {
            kill(-pid, SIGKILL);
            kill_sent = true;
        }
        if (!exited && spec->heartbeat_s > 0 && t - last_output >= spec->heartbeat_s) {
            printf("[SUITE] %s: running for %.0f s (step limit %.0f s)\n", spec->label, t - t0,
                   spec->timeout_s);
            fflush(stdout);
            last_output = t;
        }
        if (eof) {
            struct timespec nap = {0, 50 * 1000 * 1000};
            nanosleep(&nap, NULL);
            continue;
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int pr = poll(&pfd, 1, 200);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr > 0) {
            ssize_t n = read(fds[0], buf, sizeof buf);
            if (n > 0) {
                write_all(STDOUT_FILENO, buf, (size_t)n);
                scan_bytes(&ls, buf, (size_t)n, res);
                last_output = ga_now();
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                eof = true;
            }
        }
    }
    /* Whatever the step left running (ranks, daemons) goes with it. The leader is not reaped yet, so the
     * group id still names only this step's processes. */
    kill(-pid, SIGKILL);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (ls.len) { /* a last line without a newline */
        scan_bytes(&ls, "\n", 1, res);
    }
    res->duration_s = ga_now() - t0;
    if (WIFEXITED(status)) {
        res->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->signal = WTERMSIG(status);
    }
    return 0;
}

const char *suite_step_classify(const suite_step_result *res, bool program_found, bool have_report)
{
    if (!program_found)
        return "missing";
    if (res->interrupted)
        return "interrupted";
    if (res->timed_out)
        return "timeout";
    if (res->signal || res->exit_code < 0)
        return "crashed";
    switch (res->exit_code) {
    case GA_EXIT_PASS:
        return have_report ? "pass" : "crashed";
    case GA_EXIT_CHECK_FAILED:
        return have_report ? "fail" : "crashed";
    case GA_EXIT_USAGE:
        return "usage_error";
    case GA_EXIT_ENV:
        return "env_error";
    case GA_EXIT_TIMEOUT:
        return "timeout";
    case GA_EXIT_INTERNAL:
        return "internal_error";
    default:
        return "crashed";
    }
}
