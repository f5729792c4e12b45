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

#include "ga_time.h"
#include "proc_tree.h"
#include "slurm_steps.h"

static volatile sig_atomic_t stop_requested; /* the signal that asked the run to stop, 0 none */

static void on_stop_signal(int sig)
{
    if (!stop_requested)
        stop_requested = sig;
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

const char *suite_stop_signal_name(void)
{
    return stop_requested == SIGTERM ? "SIGTERM" : stop_requested ? "SIGINT" : NULL;
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
            suite_attr_scan_line(&res->attr, ls->line);
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

/* The child's side of the fork: a session of its own, which is also its process group (the launcher gets the
 * SIGTERM there; the ranks Open MPI moves to groups of their own stay in the session, so the whole step can
 * be found and killed), default SIGINT/SIGTERM, stdin from /dev/null, stdout and stderr into the pipe. */
__attribute__((noreturn)) static void exec_step(const suite_step_spec *spec, const int fds[2])
{
    setsid();
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

/* A running step as the parent watches it. */
typedef struct {
    pid_t pid;
    int fd; /* read end of the step's output */
    double t0, last_output, deadline, kill_at, drain_until;
    bool eof, exited, term_sent, kill_sent;
    line_scan ls;
} step_watch;

/* Under srun, the step is also cancelled through Slurm, which reaches its tasks on every node. */
static void cancel_slurm_step(const suite_step_spec *spec, suite_step_result *res)
{
    if (!spec->slurm_job || !*spec->slurm_job || !spec->slurm_step_name)
        return;
    char ids[512], err[256];
    int n =
        suite_slurm_cancel_steps(spec->slurm_job, spec->slurm_step_name, ids, sizeof ids, err, sizeof err);
    if (n < 0)
        printf("[SUITE] %s: could not cancel the Slurm step: %s\n", spec->label, err);
    else if (n > 0)
        printf("[SUITE] %s: scancel %s\n", spec->label, ids);
    fflush(stdout);
    res->slurm_cancelled += n > 0 ? n : 0;
}

/* SIGTERM to the group at the deadline or on a stop request, SIGKILL after the grace; a heartbeat line after
 * a silence. */
static void enforce_limits(const suite_step_spec *spec, step_watch *w, double t, suite_step_result *res)
{
    if (w->exited)
        return;
    if (!w->term_sent && (t >= w->deadline || stop_requested)) {
        res->timed_out = !stop_requested;
        res->interrupted = stop_requested != 0;
        kill(-w->pid, SIGTERM);
        w->term_sent = true;
        w->kill_at = t + spec->grace_s;
        cancel_slurm_step(spec, res);
    }
    if (w->term_sent && !w->kill_sent && t >= w->kill_at) {
        /* The launcher had its grace to stop its daemons and ranks: whatever is left goes now. */
        kill(-w->pid, SIGKILL);
        suite_proc_signal_step(w->pid, w->pid, SIGKILL);
        w->kill_sent = true;
    }
    if (spec->heartbeat_s > 0 && t - w->last_output >= spec->heartbeat_s) {
        printf("[SUITE] %s: running for %.0f s (step limit %.0f s)\n", spec->label, t - w->t0,
               spec->timeout_s);
        fflush(stdout);
        w->last_output = t;
    }
}

/* Waits up to 200 ms for output, copies it through and keeps the [RESULT] line. -1 if poll failed. */
static int pump_output(step_watch *w, suite_step_result *res)
{
    char buf[8192];
    struct pollfd pfd = {w->fd, POLLIN, 0};
    int pr = poll(&pfd, 1, 200);
    if (pr < 0 && errno != EINTR)
        return -1;
    if (pr > 0) {
        ssize_t n = read(w->fd, buf, sizeof buf);
        if (n > 0) {
            write_all(STDOUT_FILENO, buf, (size_t)n);
            scan_bytes(&w->ls, buf, (size_t)n, res);
            w->last_output = ga_now();
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            w->eof = true;
        }
    }
    return 0;
}

/* Until the leader has exited and its output is drained (or a short grace for the ranks' last lines). */
static void watch_step(const suite_step_spec *spec, step_watch *w, suite_step_result *res)
{
    while (true) {
        double t = ga_now();
        if (!w->exited && leader_exited(w->pid)) {
            w->exited = true;
            w->drain_until = t + 2.0; /* ranks' last lines may still be in flight */
        }
        if (w->exited && (w->eof || t >= w->drain_until))
            return;
        enforce_limits(spec, w, t, res);
        if (w->eof) {
            struct timespec nap = {0, 50 * 1000 * 1000};
            nanosleep(&nap, NULL);
            continue;
        }
        if (pump_output(w, res) != 0)
            return;
    }
}

/* Whatever the step left running (ranks, daemons) goes with it. The leader is not reaped yet, so its pid,
 * group and session still name only this step's processes. Then the leader's status. */
static void reap_step(step_watch *w, suite_step_result *res)
{
    kill(-w->pid, SIGKILL);
    res->survivors = suite_proc_kill_step(w->pid, w->pid, 5.0);
    close(w->fd);
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (w->ls.len) /* a last line without a newline */
        scan_bytes(&w->ls, "\n", 1, res);
    res->duration_s = ga_now() - w->t0;
    if (WIFEXITED(status))
        res->exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        res->signal = WTERMSIG(status);
}

int suite_step_run(const suite_step_spec *spec, suite_step_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    suite_proc_become_subreaper(); /* where there is none, the session sweep alone finds the ranks */
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
    if (pid == 0)
        exec_step(spec, fds);
    /* No setpgid here: the child's setsid fails if it is already a group leader. Until it has run, a signal
     * to the group finds nothing, and the /proc sweep still finds the child by its pid. */
    res->started = true;
    close(fds[1]);
    step_watch w = {.pid = pid, .fd = fds[0], .t0 = t0, .last_output = t0, .deadline = t0 + spec->timeout_s};
    watch_step(spec, &w, res);
    reap_step(&w, res);
    return 0;
}
