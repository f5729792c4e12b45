#include "proc_tree.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "ga_time.h"

int suite_proc_become_subreaper(void)
{
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -1;
#else
    return -1;
#endif
}

typedef struct {
    pid_t pid, ppid, sid;
    bool zombie, mine;
} proc_entry;

/* pid, state, ppid and session from /proc/PID/stat; the command name may hold spaces and parentheses, so
 * the fields are read after its last ')'. */
static int read_stat(pid_t pid, proc_entry *e)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    char state;
    int ppid, pgrp, sid;
    if (!p || sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &sid) != 4)
        return -1;
    e->pid = pid;
    e->ppid = ppid;
    e->sid = sid;
    e->zombie = state == 'Z' || state == 'X';
    e->mine = false;
    return 0;
}

/* Every process, then the step's ones marked: its session, the orphans re-parented here, then the children of
 * marked processes until nothing changes. Returns the count of entries, -1 if /proc cannot be read. */
static int scan_step(pid_t leader, pid_t sid, proc_entry **out)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    size_t cap = 256, n = 0;
    proc_entry *v = malloc(cap * sizeof *v);
    if (!v) {
        closedir(d);
        return -1;
    }
    pid_t self = getpid();
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        if (n == cap) {
            proc_entry *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv)
                break;
            v = nv;
            cap *= 2;
        }
        if (read_stat((pid_t)pid, &v[n]) == 0)
            n++;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++)
        v[i].mine = v[i].pid == leader || (sid > 0 && v[i].sid == sid) || v[i].ppid == self;
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < n; i++) {
            if (v[i].mine)
                continue;
            for (size_t j = 0; j < n; j++)
                if (v[j].mine && v[j].pid == v[i].ppid) {
                    v[i].mine = changed = true;
                    break;
                }
        }
    }
    *out = v;
    return (int)n;
}

int suite_proc_signal_step(pid_t leader, pid_t sid, int sig)
{
    proc_entry *v;
    int n = scan_step(leader, sid, &v);
    if (n < 0)
        return -1;
    int signalled = 0;
    for (int i = 0; i < n; i++)
        if (v[i].mine && !v[i].zombie && v[i].pid != leader && kill(v[i].pid, sig) == 0)
            signalled++;
    for (int i = 0; i < n; i++)
        if (v[i].pid == leader && !v[i].zombie && kill(leader, sig) == 0)
            signalled++;
    free(v);
    return signalled;
}

/* Orphans re-parented here are ours to reap; the leader is left for the caller. */
static void reap_orphans(pid_t leader)
{
    proc_entry *v;
    int n = scan_step(leader, 0, &v);
    if (n < 0)
        return;
    pid_t self = getpid();
    for (int i = 0; i < n; i++)
        if (v[i].ppid == self && v[i].pid != leader && v[i].zombie)
            waitpid(v[i].pid, NULL, WNOHANG);
    free(v);
}

int suite_proc_kill_step(pid_t leader, pid_t sid, double limit_s)
{
    double until = ga_now() + limit_s;
    int left;
    while (true) {
        left = suite_proc_signal_step(leader, sid, SIGKILL);
        reap_orphans(leader);
        if (left <= 0 || ga_now() >= until)
            break;
        struct timespec nap = {0, 20 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return left < 0 ? 0 : left;
}
