#include "allocation.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ga_time.h"

double suite_alloc_parse_left(const char *s)
{
    long days = 0, part[3];
    int n = 0;
    const char *dash = strchr(s, '-');
    char *end;
    if (dash) {
        days = strtol(s, &end, 10);
        if (end != dash || days < 0)
            return -1;
        s = dash + 1;
    }
    while (n < 3) {
        if (*s < '0' || *s > '9')
            return -1;
        part[n++] = strtol(s, &end, 10);
        if (*end != ':')
            break;
        s = end + 1;
    }
    if (*end != '\0' && *end != '\n')
        return -1;
    double secs = n == 3   ? part[0] * 3600.0 + part[1] * 60.0 + part[2]
                  : n == 2 ? part[0] * 60.0 + part[1]
                           : (double)part[0];
    return days * 86400.0 + secs;
}

/* squeue's one line for the job, run without a shell and bounded (a controller that does not answer must not
 * hold the run): 0 with the line, or -1. */
static int squeue_time_left(const char *job, char *line, size_t len)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDERR_FILENO);
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execlp("squeue", "squeue", "-h", "-j", job, "-o", "%L", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    double deadline = ga_now() + 10;
    size_t got = 0;
    int st = 0;
    bool ended = false;
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    while (!ended && ga_now() < deadline) {
        ssize_t r = read(fds[0], line + got, len - 1 - got);
        if (r > 0)
            got += (size_t)r;
        ended = waitpid(pid, &st, WNOHANG) == pid;
        if (!ended && r <= 0)
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    if (!ended) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    ssize_t r;
    while (got < len - 1 && (r = read(fds[0], line + got, len - 1 - got)) > 0)
        got += (size_t)r;
    close(fds[0]);
    line[got] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    return ended && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int suite_alloc_time_left(double *left_s, char *source, size_t len)
{
    const char *job = getenv("SLURM_JOB_ID");
    *left_s = 0;
    if (!job || !*job) {
        snprintf(source, len, "not in a Slurm allocation");
        return -1;
    }
    /* the job's end as a UNIX time, in the job's environment where the Slurm release sets it */
    const char *end = getenv("SLURM_JOB_END_TIME");
    char *tail;
    if (end && *end) {
        long long t = strtoll(end, &tail, 10);
        if (*tail == '\0' && t > 0) {
            *left_s = (double)t - (double)time(NULL);
            snprintf(source, len, "SLURM_JOB_END_TIME");
            return 0;
        }
    }
    char line[128];
    if (squeue_time_left(job, line, sizeof line) != 0) {
        snprintf(source, len, "squeue -h -j %.40s -o %%L did not answer", job);
        return -1;
    }
    double v = suite_alloc_parse_left(line);
    if (v < 0) {
        snprintf(source, len, "squeue -h -j %.40s -o %%L: '%.40s' (no limit)", job, line);
        return -1;
    }
    *left_s = v;
    snprintf(source, len, "squeue -o %%L");
    return 0;
}
