/* The NCCL debug capture (common/runtime/ga_transport_capture.c) against what another user of the host can
 * plant in the world-writable $TMPDIR (issue 45, item 3): a FIFO at the name the debug file once had must not
 * block ga_nccl_debug_comm_begin, and a symlink there must not make NCCL's write land in the file it points
 * to. Each case runs in a child of its own (the capture is once per process), under an alarm; NCCL is played
 * by a fopen(..., "w") of NCCL_DEBUG_FILE expanded as NCCL 2.28 expands it (src/debug.cc), which follows
 * symlinks. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ga_nccl_log.h"
#include "ga_transport_capture.h"

#define VICTIM_TEXT "the victim's own contents\n"
#define MARK "test-capture-was-read"

static int fail(const char *what)
{
    printf("FAIL: %s\n", what); /* stdout: stderr may be the capture's while a case runs */
    return 1;
}

static void expand(const char *pattern, char *out, size_t len)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (ga_nccl_debug_file_expand(pattern, host, (long)getpid(), out, len) != 0)
        out[0] = '\0';
}

static int file_is(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

/* NCCL's side: its debug file opened for writing, one warning line in it (printed on stderr once read). */
static int nccl_writes(void)
{
    const char *pattern = getenv("NCCL_DEBUG_FILE");
    if (!pattern)
        return fail("NCCL_DEBUG_FILE was not set");
    char path[1024];
    expand(pattern, path, sizeof path);
    FILE *f = fopen(path, "w");
    if (!f)
        return fail("NCCL could not open its debug file");
    fprintf(f, "host:1:1 [0] NCCL WARN " MARK "\n");
    fclose(f);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 077) != 0 || st.st_uid != geteuid())
        return fail("the debug file is not in a private directory (mode 0700, ours)");
    return 0;
}

/* A private directory as a capture of process pid of this host leaves it when killed: with its debug file. */
static void plant_dir(const char *tmp, long pid, const char *suffix, char *dir, size_t len)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(dir, len, "%s/gpuaccept-nccl.%.*s.%ld.%s", tmp, (int)strcspn(host, "."), host, pid, suffix);
    char file[1100];
    snprintf(file, sizeof file, "%s/nccl.log", dir);
    FILE *f = mkdir(dir, 0700) == 0 ? fopen(file, "w") : NULL;
    if (f)
        fclose(f);
}

static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return (long)p;
}

/* What a killed capture left: the next one removes a dead process's directory and keeps a live one's. */
static int left_by_killed(const char *dead, const char *live)
{
    struct stat st;
    if (lstat(dead, &st) == 0)
        return fail("the private directory of a dead process was not removed");
    if (lstat(live, &st) != 0)
        return fail("the private directory of a live process was removed");
    return 0;
}

/* One case in this child: plant (a FIFO or a symlink) at the old name in tmp, then a communicator's life. */
static int run_case(const char *tmp, const char *plant)
{
    char old_name[1024], victim[1024], log[1024];
    snprintf(victim, sizeof victim, "%s/victim", tmp);
    snprintf(log, sizeof log, "%s/stderr", tmp);
    char pattern[1024];
    snprintf(pattern, sizeof pattern, "%s/gpuaccept-nccl.%%h.%%p.log", tmp);
    expand(pattern, old_name, sizeof old_name);
    FILE *v = fopen(victim, "w");
    if (!v || fputs(VICTIM_TEXT, v) < 0 || fclose(v) != 0)
        return fail("cannot write the victim file");
    if (strcmp(plant, "fifo") == 0 ? mkfifo(old_name, 0666) : symlink(victim, old_name))
        return fail("cannot plant at the old name");
    char dead[1100], live[1100];
    plant_dir(tmp, dead_pid(), "aB3dE6", dead, sizeof dead);
    plant_dir(tmp, (long)getppid(), "kL9mN0", live, sizeof live);
    setenv("TMPDIR", tmp, 1);
    unsetenv("NCCL_DEBUG_FILE");
    unsetenv("NCCL_DEBUG");
    alarm(10); /* a FIFO opened for reading blocks until a writer comes: the old capture never returned */
    int saved_stderr = dup(STDERR_FILENO);
    if (saved_stderr < 0 || !freopen(log, "w", stderr))
        return 1;
    ga_nccl_debug_comm_begin("planted");
    int rc = nccl_writes();
    ga_nccl_debug_comm_end("planted");
    alarm(0);
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    struct stat st;
    rc = rc || left_by_killed(dead, live);
    rc = rc || (lstat(old_name, &st) == 0 && strcmp(plant, "fifo") == 0 && !S_ISFIFO(st.st_mode));
    if (!file_is(victim, VICTIM_TEXT))
        return fail("NCCL's write followed the planted symlink into the victim");
    FILE *f = fopen(log, "r");
    char line[512];
    int seen = 0;
    while (f && fgets(line, sizeof line, f))
        seen |= strstr(line, MARK) != NULL;
    if (f)
        fclose(f);
    if (!seen)
        return fail("the capture did not read NCCL's line");
    return rc;
}

static int one(const char *plant)
{
    char tmp[] = "/tmp/ga-test-capture.XXXXXX";
    if (!mkdtemp(tmp) || chmod(tmp, 01777) != 0)
        return fail("cannot make the test's $TMPDIR");
    fflush(stdout); /* a child would print what is buffered again */
    pid_t child = fork();
    if (child == 0) {
        int rc = run_case(tmp, plant);
        fflush(stdout);
        _exit(rc);
    }
    int status = 0;
    waitpid(child, &status, 0);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "FAIL (%s at the old name): the capture blocked (signal %d)\n", plant,
                WTERMSIG(status));
        return 1;
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    printf("%s %s at the old debug-file name\n", rc ? "FAIL:" : "ok:", plant);
    return rc;
}

int main(void)
{
    int failed = one("fifo");
    failed |= one("symlink");
    return failed ? 1 : 0;
}
