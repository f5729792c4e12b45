#include "preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_str.h"
#include "ga_time.h"
#include "mpirun_session.h"
#include "node_name.h"
#include "proc_tree.h"

#define PF_ARGV_MAX (SUITE_LAUNCH_MAX_WORDS + 8)
/* The pause before a node whose launch failed is launched again: a launcher's transient failure (a loaded
 * launcher pod, an sshd at its MaxStartups) must not become a node fault (issue 41, item 7). */
#define PF_RETRY_BACKOFF_S 2.0

typedef struct {
    char host[128];
    char log[4200]; /* work_dir/<host>.log, for the record */
    int log_fd;     /* this run's own log file, open until the node's command has it */
    pid_t pid;
    int attempts;        /* launches: a launch that failed is tried once more */
    char first_why[300]; /* the first launch's reason, when it was retried */
    bool done, timed_out;
    int status;
    char session[300]; /* mpirun's private session base for this launch ("" none: srun) */
    int gpus;          /* from its answer, -1 none */
    char self[96];     /* the name it answered with, its reports' ("" none): the summary maps host to it */
    const char *code;  /* NULL: passed */
    char why[300];
} pf_node;

/* `scontrol show hostnames -- LIST`, run without a shell (the list is the environment's, not ours to quote):
 * its output, or NULL. */
static FILE *scontrol_hostnames(const char *list, pid_t *pid)
{
    int fds[2];
    if (pipe(fds) != 0)
        return NULL;
    fflush(stdout);
    fflush(stderr);
    *pid = fork();
    if (*pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execlp("scontrol", "scontrol", "show", "hostnames", "--", list, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = *pid > 0 ? fdopen(fds[0], "r") : NULL;
    if (!f)
        close(fds[0]);
    return f;
}

/* The node list of the Slurm allocation, from scontrol's expansion of SLURM_JOB_NODELIST. Every name must be
 * a node name (node_name.h): it becomes a file name and an srun -w argument. */
static int slurm_nodes(pf_node **out, size_t *n, char *err, size_t errlen)
{
    const char *list = getenv("SLURM_JOB_NODELIST");
    if (!list || !*list) {
        snprintf(err, errlen, "preflight: SLURM_JOB_NODELIST is not set: no node list");
        return -1;
    }
    pid_t pid = -1;
    FILE *p = scontrol_hostnames(list, &pid);
    if (!p) {
        snprintf(err, errlen, "preflight: cannot run scontrol");
        return -1;
    }
    size_t cap = 16;
    *out = calloc(cap, sizeof **out);
    *n = 0;
    char line[512];
    bool bad = false;
    while (*out && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!*line)
            continue;
        if (!suite_node_name_ok(line) || strlen(line) >= sizeof(*out)->host) {
            snprintf(err, errlen,
                     "preflight: scontrol show hostnames gave '%.200s', which is not a node name", line);
            bad = true;
            break;
        }
        if (*n == cap) {
            pf_node *nv = realloc(*out, 2 * cap * sizeof **out);
            if (!nv)
                break;
            memset(nv + cap, 0, cap * sizeof *nv);
            *out = nv;
            cap *= 2;
        }
        snprintf((*out)[(*n)++].host, sizeof(*out)->host, "%s", line);
    }
    fclose(p);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (bad || !*out || *n == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (!bad)
            snprintf(err, errlen, "preflight: scontrol show hostnames -- '%.200s' gave no node", list);
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* One node's command: the plan's launcher narrowed to that node and one rank, running cmd (NULL-ended). */
static int node_argv(const suite_launch *plan, const char *host, const char *const *cmd, char **argv)
{
    int n = 0;
    if (plan->kind == SUITE_LAUNCH_SLURM) {
        argv[n++] = "srun";
        argv[n++] = "-N1";
        argv[n++] = "-n1";
        argv[n++] = "-w";
        argv[n++] = (char *)host;
        /* The operator's srun options and container image: node-check must start where the steps will. */
        for (int i = 0; i < plan->extra_n; i++)
            argv[n++] = (char *)plan->argv[plan->extra_first + i];
    } else {
        for (int i = 0; i < plan->argc; i++) {
            const char *w = plan->argv[i];
            if (strcmp(w, "--hostfile") == 0 || strcmp(w, "-np") == 0) {
                i++; /* and its value */
                continue;
            }
            argv[n++] = (char *)w;
        }
        argv[n++] = "--host";
        argv[n++] = (char *)host;
        argv[n++] = "-np";
        argv[n++] = "1";
    }
    for (; *cmd; cmd++)
        argv[n++] = (char *)*cmd;
    argv[n] = NULL;
    return n;
}

static pid_t start_node(const suite_launch *plan, const char *const *cmd, pf_node *node)
{
    char *argv[PF_ARGV_MAX];
    node_argv(plan, node->host, cmd, argv);
    /* one mpirun per node starts at once here: each gets a session tree of its own (mpirun_session.h) */
    node->session[0] = '\0';
    if (plan->kind != SUITE_LAUNCH_SLURM)
        suite_mpirun_session_make(node->session, sizeof node->session);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setsid(); /* its own session: a node that hangs is killed whole (proc_tree.h) */
    int fd = node->log_fd;
    int devnull = open("/dev/null", O_RDONLY);
    if (fd < 0 || devnull < 0)
        _exit(127);
    dup2(devnull, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    close(devnull);
    suite_mpirun_session_use(node->session);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* The preflight's directory, made by this run: whatever else sits at its path (a symlink, a file) is removed,
 * never followed, and the directory is opened without following a link, so that the logs below are created
 * in it and nowhere else. A descriptor, or -1 with a message. */
static int open_work_dir(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        unlink(path);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "preflight: cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        snprintf(err, errlen, "preflight: cannot use %s as a directory: %s", path, strerror(errno));
    return fd;
}

/* A node's log, new: an older file or link of that name is removed first, and the file is created only if
 * nothing took its place meanwhile (O_EXCL | O_NOFOLLOW), so a planted link can never be written through. */
static int create_log(int dir_fd, const char *host)
{
    char name[160];
    snprintf(name, sizeof name, "%s.log", host);
    unlinkat(dir_fd, name, 0);
    return openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

/* Waits for every node until the bound; what has not answered then is killed, session and all. */
static void wait_nodes(pf_node *nodes, size_t n, double limit_s)
{
    double deadline = ga_now() + limit_s;
    size_t left = 0;
    for (size_t i = 0; i < n; i++)
        left += !nodes[i].done;
    while (left && ga_now() < deadline) {
        for (size_t i = 0; i < n; i++)
            if (!nodes[i].done && waitpid(nodes[i].pid, &nodes[i].status, WNOHANG) == nodes[i].pid) {
                nodes[i].done = true;
                left--;
            }
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    for (size_t i = 0; i < n; i++)
        if (!nodes[i].done) {
            nodes[i].timed_out = true;
            kill(-nodes[i].pid, SIGTERM); /* the launcher's grace to stop what it started remotely */
        }
    for (size_t i = 0; i < n; i++)
        if (!nodes[i].done) {
            double until = ga_now() + 2;
            while (ga_now() < until && waitpid(nodes[i].pid, &nodes[i].status, WNOHANG) != nodes[i].pid) {
                struct timespec nap = {0, 50 * 1000 * 1000};
                nanosleep(&nap, NULL);
            }
            suite_proc_kill_step(nodes[i].pid, nodes[i].pid, 2.0);
            waitpid(nodes[i].pid, &nodes[i].status, 0);
            nodes[i].done = true;
        }
    for (size_t i = 0; i < n; i++) {
        suite_mpirun_session_remove(nodes[i].session);
        nodes[i].session[0] = '\0';
    }
}

/* A line of the launcher's own about why it could not reach a node (ssh's, the resolver's, srun's), which
 * Open MPI prints before its banner ("ORTE was unable to reliably start one or more daemons ... and network
 * routing requirements)."): the banner's last line explains nothing, this one does (issue 41, observation
 * 10). */
static bool launcher_line(const char *line)
{
    static const char *const says[] = {"ssh:",
                                       "Permission denied",
                                       "Could not resolve",
                                       "Name or service not known",
                                       "Connection refused",
                                       "Connection timed out",
                                       "Connection closed",
                                       "No route to host",
                                       "Host key verification failed",
                                       "srun: error:",
                                       "cannot run ",
                                       "command not found",
                                       "No such file or directory"};
    for (size_t i = 0; i < sizeof says / sizeof *says; i++)
        if (strstr(line, says[i]))
            return true;
    return false;
}

/* The node's answer ("[NODE] HOST gpus=N") and, failing that, the reason: the launcher's first line that says
 * why (launcher_line), else the last line. */
static void read_answer(int dir_fd, const char *log_name, pf_node *node)
{
    node->gpus = -1;
    node->why[0] = '\0';
    node->self[0] = '\0';
    char name[160];
    snprintf(name, sizeof name, "%s.log", log_name);
    int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return;
    }
    char line[512];
    bool quoted = false;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        const char *g = strstr(line, " gpus=");
        if (strncmp(line, "[NODE] ", 7) == 0 && g) {
            node->gpus = atoi(g + 6);
            int len = (int)(g - (line + 7));
            if (suite_node_name_ok_n(line + 7, (size_t)len) && (size_t)len < sizeof node->self)
                snprintf(node->self, sizeof node->self, "%.*s", len, line + 7);
        } else if (!quoted && line[strspn(line, " -")]) {
            const char *text = line + strspn(line, " ");
            snprintf(node->why, sizeof node->why, "%s", text);
            quoted = launcher_line(text);
        }
    }
    fclose(f);
}

static void classify(int dir_fd, pf_node *nodes, size_t n, double limit_s)
{
    int most = 0;
    for (size_t i = 0; i < n; i++) {
        read_answer(dir_fd, nodes[i].host, &nodes[i]);
        bool ok = !nodes[i].timed_out && WIFEXITED(nodes[i].status) && WEXITSTATUS(nodes[i].status) == 0;
        if (ok && nodes[i].gpus > most)
            most = nodes[i].gpus;
    }
    for (size_t i = 0; i < n; i++) {
        pf_node *d = &nodes[i];
        char last[300];
        snprintf(last, sizeof last, "%s", d->why);
        if (d->timed_out) {
            d->code = "PREFLIGHT_NODE_UNREACHABLE";
            snprintf(d->why, sizeof d->why, "did not answer within %.0f s", limit_s);
        } else if (!WIFEXITED(d->status) || WEXITSTATUS(d->status) != 0 || d->gpus < 0) {
            d->code = "PREFLIGHT_LAUNCH_FAILED";
            snprintf(d->why, sizeof d->why, "could not be launched on (%s %d)%s%.200s",
                     WIFEXITED(d->status) ? "exit" : "signal",
                     WIFEXITED(d->status) ? WEXITSTATUS(d->status) : WTERMSIG(d->status), last[0] ? ": " : "",
                     last);
        } else if (d->gpus < most) {
            d->code = "PREFLIGHT_GPU_MISSING";
            snprintf(d->why, sizeof d->why, "sees %d GPUs, other nodes %d", d->gpus, most);
        } else {
            d->code = NULL;
            d->why[0] = '\0';
        }
    }
}

/* The steps' launcher narrowed to the nodes that passed: a hostfile of those, or srun with the others
 * excluded. */
static int narrow_plan(suite_launch *plan, const suite_preflight_in *in, const pf_node *nodes, size_t n,
                       size_t passed, char *err, size_t errlen)
{
    if (passed == n || passed == 0)
        return 0;
    if (plan->kind == SUITE_LAUNCH_SLURM) {
        char excl[SUITE_LAUNCH_WORD_MAX] = "--exclude=";
        for (size_t i = 0; i < n; i++)
            if (nodes[i].code)
                snprintf(excl + strlen(excl), sizeof excl - strlen(excl), "%s%s",
                         excl[strlen(excl) - 1] == '=' ? "" : ",", nodes[i].host);
        if (plan->argc + 2 > SUITE_LAUNCH_MAX_WORDS) {
            snprintf(err, errlen, "preflight: launcher command too long");
            return -1;
        }
        snprintf(plan->argv[plan->argc++], SUITE_LAUNCH_WORD_MAX, "%s", excl);
        snprintf(plan->argv[plan->argc++], SUITE_LAUNCH_WORD_MAX, "--nodes=%zu", passed);
        return 0;
    }
    bool keep[SUITE_HOSTS_MAX];
    for (size_t i = 0; i < n; i++)
        keep[i] = nodes[i].code == NULL;
    char path[SUITE_LAUNCH_WORD_MAX];
    snprintf(path, sizeof path, "%s/hostfile.passed", in->work_dir);
    if (suite_hostfile_write(path, in->hosts, keep, err, errlen) != 0)
        return -1;
    for (int i = 0; i + 1 < plan->argc; i++)
        if (strcmp(plan->argv[i], "--hostfile") == 0)
            snprintf(plan->argv[i + 1], SUITE_LAUNCH_WORD_MAX, "%s", path);
    return 0;
}

/* Launches cmd on the nodes of which (all when NULL), each into a new log of its own. */
static void launch_nodes(const suite_launch *plan, const char *const *cmd, int dir_fd, const char *work_dir,
                         pf_node *nodes, size_t n, const bool *which)
{
    for (size_t i = 0; i < n; i++) {
        if (which && !which[i])
            continue;
        pf_node *d = &nodes[i];
        d->done = d->timed_out = false;
        d->status = 0;
        d->attempts++;
        snprintf(d->log, sizeof d->log, "%s/%s.log", work_dir, d->host);
        d->log_fd = create_log(dir_fd, d->host);
        d->pid = d->log_fd >= 0 ? start_node(plan, cmd, d) : -1;
        if (d->log_fd >= 0)
            close(d->log_fd);
        if (d->pid < 0) {
            d->done = true;
            d->status = 127 << 8;
        }
    }
}

/* The nodes whose launch failed, launched once more after a short pause (their first log kept as
 * HOST.first.log); then every node classified again. */
static void retry_failed(const suite_launch *plan, const char *const *cmd, int dir_fd, const char *work_dir,
                         pf_node *nodes, size_t n, double limit_s)
{
    bool *again = calloc(n ? n : 1, sizeof *again);
    size_t count = 0;
    for (size_t i = 0; again && i < n; i++)
        if (ga_streq(nodes[i].code, "PREFLIGHT_LAUNCH_FAILED")) {
            again[i] = true;
            count++;
            snprintf(nodes[i].first_why, sizeof nodes[i].first_why, "%s", nodes[i].why);
            char from[160], to[170];
            snprintf(from, sizeof from, "%s.log", nodes[i].host);
            snprintf(to, sizeof to, "%s.first.log", nodes[i].host);
            renameat(dir_fd, from, dir_fd, to);
        }
    if (count) {
        printf("[SUITE] preflight: %zu node%s could not be launched on; trying again in %.0f s\n", count,
               count == 1 ? "" : "s", PF_RETRY_BACKOFF_S);
        fflush(stdout);
        struct timespec nap = {(time_t)PF_RETRY_BACKOFF_S, 0};
        nanosleep(&nap, NULL);
        launch_nodes(plan, cmd, dir_fd, work_dir, nodes, n, again);
        wait_nodes(nodes, n, limit_s);
        classify(dir_fd, nodes, n, limit_s);
        for (size_t i = 0; i < n; i++)
            if (again[i] && !nodes[i].code)
                printf("[SUITE] preflight: %s answered when launched again (first: %s)\n", nodes[i].host,
                       nodes[i].first_why);
    }
    free(again);
}

/* Whether the report directory here is the one the node of every step's rank 0 writes to (issue 41, item 3: a
 * directory that node does not share left every step "crashed (exit 0)" with no report, verdict exit 5). That
 * node (the first that passed: mpirun's default mapping puts rank 0 on the hostfile's first host, srun on the
 * allocation's first node) creates a file in it through the steps' launcher; the file must appear here. 0, or
 * -2 with one line saying what to do. */
static int check_report_dir_shared(const suite_launch *plan, const suite_preflight_in *in, int dir_fd,
                                   const char *host, char *err, size_t errlen)
{
    char token[4300];
    snprintf(token, sizeof token, "%s/.gpuaccept-shared-%ld", in->report_dir, (long)getpid());
    unlink(token);
    const char *cmd[] = {"touch", token, NULL};
    pf_node probe;
    memset(&probe, 0, sizeof probe);
    snprintf(probe.host, sizeof probe.host, "%s", host);
    probe.log_fd = create_log(dir_fd, "report-dir-check");
    probe.pid = probe.log_fd >= 0 ? start_node(plan, cmd, &probe) : -1;
    if (probe.log_fd >= 0)
        close(probe.log_fd);
    if (probe.pid < 0) {
        snprintf(err, errlen, "preflight: cannot start the report directory's check");
        return -1;
    }
    wait_nodes(&probe, 1, in->limit_s);
    bool seen = access(token, F_OK) == 0;
    unlink(token);
    if (seen)
        return 0;
    read_answer(dir_fd, "report-dir-check", &probe);
    if (probe.timed_out)
        snprintf(probe.why, sizeof probe.why, "no answer within %.0f s", in->limit_s);
    bool wrote = !probe.timed_out && WIFEXITED(probe.status) && WEXITSTATUS(probe.status) == 0;
    snprintf(
        err, errlen,
        "the report directory %.300s is not shared with %s, where every step's rank 0 writes its report (a "
        "file %s%.200s): give --report-dir a directory of a file system both see at the same path, or run "
        "gpuaccept on %s",
        in->report_dir, host, wrote ? "made there did not appear here" : "could not be made there: ",
        wrote ? "" : (probe.why[0] ? probe.why : "the launch failed"), host);
    return -2;
}

int suite_preflight_run(suite_launch *plan, const suite_preflight_in *in, json_t **record, size_t *passed,
                        char *err, size_t errlen)
{
    *record = NULL;
    *passed = 0;
    if (plan->kind == SUITE_LAUNCH_LOCAL)
        return 0;
    pf_node *nodes = NULL;
    size_t n = 0;
    if (plan->kind == SUITE_LAUNCH_SLURM) {
        if (slurm_nodes(&nodes, &n, err, errlen) != 0)
            return -1;
    } else {
        n = in->hosts ? in->hosts->n : 0;
        nodes = calloc(n ? n : 1, sizeof *nodes);
        if (!nodes) {
            snprintf(err, errlen, "preflight: out of memory");
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            snprintf(nodes[i].host, sizeof nodes[i].host, "%s", in->hosts->host[i].name);
    }
    int dir_fd = open_work_dir(in->work_dir, err, errlen);
    if (dir_fd < 0) {
        free(nodes);
        return -1;
    }
    suite_proc_become_subreaper();
    printf("[SUITE] preflight: %zu node%s, each alone, at most %.0f s\n", n, n == 1 ? "" : "s", in->limit_s);
    const char *node_check[] = {in->gpuaccept, "node-check", NULL};
    launch_nodes(plan, node_check, dir_fd, in->work_dir, nodes, n, NULL);
    wait_nodes(nodes, n, in->limit_s);
    classify(dir_fd, nodes, n, in->limit_s);
    retry_failed(plan, node_check, dir_fd, in->work_dir, nodes, n, in->limit_s);
    json_t *list = json_array();
    const char *first = NULL;
    for (size_t i = 0; i < n; i++) {
        const pf_node *d = &nodes[i];
        *passed += d->code == NULL;
        if (!d->code && !first)
            first = d->host;
        json_array_append_new(list, json_pack("{s:s, s:s, s:s?, s:o, s:s?, s:i, s:s, s:s?}", "host", d->host,
                                              "status", d->code ? "excluded" : "pass", "code", d->code,
                                              "gpus", d->gpus >= 0 ? json_integer(d->gpus) : json_null(),
                                              "why", d->code ? d->why : NULL, "attempts", d->attempts, "log",
                                              d->log, "machine", d->self[0] ? d->self : NULL));
        if (d->code)
            printf("[SUITE] preflight: %s excluded, %s: %s\n", d->host, d->code, d->why);
    }
    printf("[SUITE] preflight: %zu of %zu node%s passed%s\n", *passed, n, n == 1 ? "" : "s",
           *passed == n ? "" : "; the steps run on those");
    int rc = first && in->report_dir ? check_report_dir_shared(plan, in, dir_fd, first, err, errlen) : 0;
    close(dir_fd);
    if (rc == 0)
        rc = narrow_plan(plan, in, nodes, n, *passed, err, errlen);
    *record =
        json_pack("{s:f, s:I, s:o}", "limit_s", in->limit_s, "passed", (json_int_t)*passed, "nodes", list);
    free(nodes);
    return rc;
}
