#include "slurm_steps.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ga_time.h"

#define SLURM_CMD_BOUND_S 10.0

/* Runs argv with stdout into out (NUL-terminated, cut at outlen) and stderr discarded. Returns the exit
 * status, or -1 if it could not be run or did not end within the bound (it is then killed). */
static int run_capture(char *const argv[], char *out, size_t outlen)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0;
    double until = ga_now() + SLURM_CMD_BOUND_S;
    bool eof = false;
    while (!eof && ga_now() < until) {
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int pr = poll(&pfd, 1, 200);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        char buf[4096];
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n <= 0) {
            eof = n == 0 || (errno != EINTR && errno != EAGAIN);
            continue;
        }
        size_t room = outlen > len + 1 ? outlen - len - 1 : 0;
        size_t take = (size_t)n < room ? (size_t)n : room;
        memcpy(out + len, buf, take);
        len += take;
    }
    out[len] = '\0';
    close(fds[0]);
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, WNOHANG)) == 0 && ga_now() < until) {
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    if (got != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int suite_slurm_cancel_steps(const char *job, const char *name, char *ids, size_t idslen, char *err,
                             size_t errlen)
{
    ids[0] = '\0';
    char list[16384];
    /* "%i %j": step id (JOB.STEP) and step name, one running step a line. */
    char *const squeue[] = {"squeue", "-h", "-s", "-j", (char *)job, "-o", "%i %j", NULL};
    int rc = run_capture(squeue, list, sizeof list);
    if (rc != 0) {
        snprintf(err, errlen, "squeue -s -j %s %s", job, rc < 0 ? "did not answer" : "failed");
        return -1;
    }
    int cancelled = 0;
    char *save = NULL;
    for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char id[64], step_name[256];
        if (sscanf(line, "%63s %255s", id, step_name) != 2 || strcmp(step_name, name) != 0)
            continue;
        /* JOB.STEP, and only steps: never the batch script's own step or the job itself. */
        const char *dot = strchr(id, '.');
        if (!dot || strncmp(id, job, (size_t)(dot - id)) != 0 || strlen(job) != (size_t)(dot - id) ||
            strcmp(dot + 1, "batch") == 0 || strcmp(dot + 1, "extern") == 0)
            continue;
        /* SIGKILL to its tasks on every node first: a plain cancel sends SIGTERM and waits KillWait (30 s by
         * default) before the KILL, and a hung task may ignore SIGTERM. Then the cancel itself. */
        char *const kill_tasks[] = {"scancel", "--signal=KILL", id, NULL};
        char *const cancel[] = {"scancel", id, NULL};
        char ignored[256];
        int killed = run_capture(kill_tasks, ignored, sizeof ignored);
        int gone = run_capture(cancel, ignored, sizeof ignored);
        if (killed != 0 && gone != 0)
            continue;
        snprintf(ids + strlen(ids), idslen - strlen(ids), "%s%s", cancelled ? "," : "", id);
        cancelled++;
    }
    return cancelled;
}
