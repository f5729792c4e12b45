/* gpuaccept node-check. Without options: "[NODE] HOST gpus=N" and exit 0; what the preflight
 * (run/preflight.c) launches on every node, so that a node that cannot start a process, or hangs, is known
 * before any step.
 *
 * With --health (or --drain / --label): the fast node check of issue 41, for Slurm's HealthCheckProgram,
 * prolog and epilog and a Kubernetes CronJob/DaemonSet. It runs node_health on this node alone, as a
 * singleton (no mpirun, no MPI job: ga_launcher_detect says "no launcher: a single rank"), reads its report
 * and exits as LBNL NHC does: 0 healthy, 1 unhealthy, with one line saying why. Slurm ignores the exit code
 * of a HealthCheckProgram ("Any action to be taken must be explicitly performed by the program",
 * slurm.conf(5) HealthCheckProgram), so --drain drains the node itself (scontrol update ... State=DRAIN
 * Reason=...), and resumes a node it drained earlier once it passes, as NHC does for its own "NHC:" reasons.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_job.h"
#include "handoff.h"
#include "launch_plan.h"
#include "node_name.h"
#include "suite.h"
#include "suite_util.h"

extern char **environ;

/* slurm.conf(5): "This program will be killed if it does not terminate normally within 60 seconds." */
#define NC_DEFAULT_TIMEOUT_S 45
#define NC_REASON_MAX 200 /* a drain reason an operator reads in sinfo -R */
#define NC_DRAIN_PREFIX "gpuaccept:"

typedef struct {
    bool health, drain, label;
    const char *node;
    int timeout_s;
    int nh_argc;
    char **nh_argv; /* node_health's own options, after "--" */
} nc_opts;

typedef struct {
    char verdict[16]; /* pass, warn, fail, unchecked-xid (the kernel log was not read), error */
    char line[1024];  /* the one line printed */
    char reason[NC_REASON_MAX + 1];
    bool drain; /* a failure that takes the node out of service */
} nc_result;

static const char *plain_getenv(const char *name)
{
    return getenv(name);
}

static void usage(void)
{
    printf(
        "usage: gpuaccept node-check [--health] [--drain] [--label] [--node NAME] [--timeout S] "
        "[-- NODE_HEALTH_OPTIONS]\n"
        "Without options: prints \"[NODE] HOST gpus=N\" and exits 0 (what gpuaccept run's preflight "
        "launches on every node).\n"
        "--health       run node_health on this node alone (no MPI job), in a few seconds; exit 0 healthy, "
        "1 unhealthy, one line saying why (as NHC)\n"
        "--drain        Slurm: drain this node on a failure (scontrol update NodeName=$SLURMD_NODENAME "
        "State=DRAIN Reason=\"gpuaccept: ...\"); resume it on a pass if gpuaccept drained it\n"
        "--label        Kubernetes: label this node (NODE_NAME from the downward API) "
        "gpuaccept.io/verdict=pass|warn|fail|unchecked-xid\n"
        "--node NAME    the node's name for --drain / --label (default: SLURMD_NODENAME, NODE_NAME, the "
        "short host name)\n"
        "--timeout S    kill node_health after S seconds (default %d: Slurm kills a HealthCheckProgram at "
        "60)\n"
        "-- OPTIONS     passed to node_health, e.g. -- --expect-gpus 8 --kernel-log FILE\n",
        NC_DEFAULT_TIMEOUT_S);
}

static int parse(int argc, char **argv, nc_opts *o)
{
    static const struct option longs[] = {{"health", no_argument, NULL, 'H'},
                                          {"drain", no_argument, NULL, 'd'},
                                          {"label", no_argument, NULL, 'l'},
                                          {"node", required_argument, NULL, 'n'},
                                          {"timeout", required_argument, NULL, 't'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    *o = (nc_opts){.timeout_s = NC_DEFAULT_TIMEOUT_S};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+h", longs, NULL)) != -1) {
        switch (c) {
        case 'H':
            o->health = true;
            break;
        case 'd':
            o->drain = o->health = true;
            break;
        case 'l':
            o->label = o->health = true;
            break;
        case 'n':
            if (!*optarg)
                return suite_usage_error("node-check", "--node: an empty name");
            o->node = optarg;
            break;
        case 't': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 3600)
                return suite_usage_error("node-check", "--timeout: '%s' is not a number of seconds (1-3600)",
                                         optarg);
            o->timeout_s = (int)v;
            break;
        }
        case 'h':
            usage();
            return -1;
        default:
            return suite_bad_option("node-check", c, argv);
        }
    }
    if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
        return suite_usage_error("node-check", "unexpected argument '%s' (node_health's options go after --)",
                                 argv[optind]);
    if (optind < argc && !o->health)
        return suite_usage_error("node-check", "node_health options without --health");
    o->nh_argc = argc - optind;
    o->nh_argv = argv + optind;
    return 0;
}

/* The variables by which an MPI library would take node_health for a rank of the job node-check runs in
 * (srun, mpirun, a prolog inside an allocation): dropped, so that it starts as a singleton. */
static bool launch_variable(const char *kv)
{
    static const char *const prefixes[] = {"OMPI_",  "PMIX_",           "PMI_",
                                           "SLURM_", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"};
    if (strncmp(kv, "OMPI_ALLOW_RUN_AS_ROOT", 22) == 0)
        return false;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(kv, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

static void scrub_launch_environment(void)
{
    for (size_t i = 0; environ[i];) {
        if (!launch_variable(environ[i])) {
            i++;
            continue;
        }
        char name[256];
        const char *eq = strchr(environ[i], '=');
        size_t n = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), environ[i]);
        unsetenv(name); /* environ shifts: look at index i again */
    }
    /* Open MPI 4 starts a singleton by forking an orted, which needs PATH to find its rsh agent: slurmd runs
     * a HealthCheckProgram with no PATH at all (only SLURMD_NODENAME), and the singleton then fails in
     * MPI_Init ("plm_rsh_agent: ssh : rsh ... could not be found"). ess_singleton_isolated (ompi_info --param
     * ess singleton --level 9) starts it without an orted; Open MPI 5 has no orted to start. */
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 1);
}

static void bin_dir(char *dir, size_t len)
{
    const char *env_bin = getenv("GPUACCEPT_BIN_DIR");
    if (env_bin && *env_bin)
        snprintf(dir, len, "%s", env_bin);
    else if (suite_self_dir(dir, len) != 0)
        snprintf(dir, len, ".");
}

/* Runs node_health on this node alone, its output in DIR/node_health.log. Its exit code; -1 when it could
 * not be started, -2 when it ran past the timeout (and was killed). */
static int run_node_health(const nc_opts *o, const char *dir)
{
    char bin[4096], exe[4200], log[4200];
    bin_dir(bin, sizeof bin);
    snprintf(exe, sizeof exe, "%s/node_health", bin);
    snprintf(log, sizeof log, "%s/node_health.log", dir);
    char **argv = calloc((size_t)o->nh_argc + 4, sizeof *argv);
    if (!argv)
        return -1;
    int n = 0;
    argv[n++] = exe;
    argv[n++] = "--report-dir";
    argv[n++] = (char *)dir;
    for (int i = 0; i < o->nh_argc; i++)
        argv[n++] = o->nh_argv[i];
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* its own group: a timeout kills what it started too */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        scrub_launch_environment();
        execv(exe, argv);
        fprintf(stderr, "cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    free(argv);
    if (pid < 0)
        return -1;
    struct timespec start, now, nap = {0, 20 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int status;
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (w < 0 && errno != EINTR)
            return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= o->timeout_s) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -2;
        }
        nanosleep(&nap, NULL);
    }
}

/* The last non-empty line of FILE (what a program said last), into out. */
static void last_line(const char *file, char *out, size_t len)
{
    snprintf(out, len, "no output");
    FILE *f = fopen(file, "r");
    if (!f)
        return;
    char buf[1024];
    while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = '\0';
        if (buf[0])
            snprintf(out, len, "%s", buf);
    }
    fclose(f);
}

/* Copies s into out (len bytes), cut at a word boundary with "..." when longer: a reason never ends mid-word.
 */
static void cut_at_word(const char *s, char *out, size_t len)
{
    if (strlen(s) < len) {
        snprintf(out, len, "%s", s);
        return;
    }
    size_t keep = len - 4;
    while (keep > 0 && s[keep] != ' ')
        keep--;
    if (keep == 0)
        keep = len - 4;
    snprintf(out, len, "%.*s...", (int)keep, s);
}

/* Whether every node checker of the report read the kernel log; why not into why. */
static bool kernel_log_read(const json_t *report, char *why, size_t len)
{
    size_t i, j;
    json_t *node, *rank;
    json_array_foreach(json_object_get(report, "nodes"), i, node) {
        json_array_foreach(json_object_get(node, "ranks"), j, rank) {
            json_t *kl = json_object_get(json_object_get(rank, "node"), "kernel_log");
            if (kl && !json_is_true(json_object_get(kl, "read"))) {
                snprintf(why, len, "%s", json_string_value(json_object_get(kl, "why")) ?: "unreadable");
                return false;
            }
        }
    }
    return true;
}

/* The verdict of node_health's report in DIR. */
static void judge_report(const char *dir, const char *node, const char *said, nc_result *r)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/node_health.json", dir);
    json_error_t err;
    json_t *report = json_load_file(path, 0, &err);
    if (!report) {
        snprintf(r->verdict, sizeof r->verdict, "error");
        snprintf(r->line, sizeof r->line, "ERROR %s: node_health wrote no report (%s): %s", node, err.text,
                 said);
        return;
    }
    int fails = 0, warns = 0;
    const char *first_code = NULL, *first_msg = NULL;
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(report, "findings"), i, f) {
        const char *sev = json_string_value(json_object_get(f, "severity"));
        if (sev && strcmp(sev, "fail") == 0 && fails++ == 0) {
            first_code = json_string_value(json_object_get(f, "code"));
            first_msg = json_string_value(json_object_get(f, "message"));
        } else if (sev && strcmp(sev, "warn") == 0)
            warns++;
    }
    char why[512];
    bool klog = kernel_log_read(report, why, sizeof why);
    if (fails) {
        char text[1024];
        snprintf(text, sizeof text, "%s %s", first_code ? first_code : "?", first_msg ? first_msg : "");
        if (fails > 1) {
            char more[48];
            snprintf(more, sizeof more, " (and %d more failure%s)", fails - 1, fails - 1 == 1 ? "" : "s");
            cut_at_word(text, r->reason, sizeof r->reason - strlen(more) - strlen(NC_DRAIN_PREFIX) - 1);
            strncat(r->reason, more, sizeof r->reason - strlen(r->reason) - 1);
        } else
            cut_at_word(text, r->reason, sizeof r->reason - strlen(NC_DRAIN_PREFIX) - 1);
        snprintf(r->verdict, sizeof r->verdict, "fail");
        snprintf(r->line, sizeof r->line, "FAIL %s: %s", node, r->reason);
        r->drain = true;
    } else if (!klog) {
        /* Xid 79/48/95 are seen only in the kernel log: a node whose log was not read is not called checked
         */
        snprintf(r->verdict, sizeof r->verdict, "unchecked-xid");
        snprintf(r->line, sizeof r->line, "PASS %s, Xids not checked: kernel log unreadable (%s)", node, why);
    } else {
        snprintf(r->verdict, sizeof r->verdict, warns ? "warn" : "pass");
        snprintf(r->line, sizeof r->line, "PASS %s (%d warning%s)", node, warns, warns == 1 ? "" : "s");
    }
    json_decref(report);
}

/* Runs argv (no shell) and waits; its stdout into out when out is not NULL. Its exit code, or -1. */
static int run_tool(char *const argv[], char *out, size_t len)
{
    int fds[2] = {-1, -1};
    if (out && pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (out) {
            dup2(fds[1], STDOUT_FILENO);
            close(fds[0]);
            close(fds[1]);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "gpuaccept node-check: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (out) {
        close(fds[1]);
        size_t used = 0;
        ssize_t got;
        while (pid > 0 && used + 1 < len && (got = read(fds[0], out + used, len - 1 - used)) > 0)
            used += (size_t)got;
        out[used] = '\0';
        close(fds[0]);
    }
    if (pid < 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Slurm: drain on a failure; on a pass, resume the node only if gpuaccept drained it (another reason is an
 * operator's or another check's, and stays). */
static int slurm_act(const char *node, const nc_result *r)
{
    char name[300], reason[NC_REASON_MAX + 32];
    snprintf(name, sizeof name, "NodeName=%s", node);
    if (r->drain) {
        snprintf(reason, sizeof reason, "Reason=%s %s", NC_DRAIN_PREFIX, r->reason);
        char *argv[] = {"scontrol", "update", name, "State=DRAIN", reason, NULL};
        return run_tool(argv, NULL, 0);
    }
    if (strcmp(r->verdict, "error") == 0)
        return 0;
    char show[8192];
    char *sargv[] = {"scontrol", "-o", "show", "node", (char *)node, NULL};
    if (run_tool(sargv, show, sizeof show) != 0)
        return -1;
    if (!strstr(show, "DRAIN") || !strstr(show, " Reason=" NC_DRAIN_PREFIX))
        return 0;
    char *argv[] = {"scontrol", "update", name, "State=RESUME", NULL};
    return run_tool(argv, NULL, 0);
}

/* Kubernetes: the node's verdict label and when it was checked (as the DaemonSet's label container sets). */
static int k8s_label(const char *node, const nc_result *r)
{
    char verdict[64], checked[64], stamp[32];
    time_t t = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime(&t));
    snprintf(verdict, sizeof verdict, SUITE_K8S_KEY "=%s", strcmp(r->verdict, "error") ? r->verdict : "fail");
    snprintf(checked, sizeof checked, "gpuaccept.io/checked=%s", stamp);
    char *argv[] = {"kubectl", "label", "node", "--overwrite", (char *)node, verdict, checked, NULL};
    return run_tool(argv, NULL, 0);
}

static const char *node_name(const nc_opts *o, char *host, size_t len)
{
    if (o->node)
        return o->node;
    /* Kubernetes: GA_NODE_NAME or NODE_NAME (the downward API's spec.nodeName); Slurm: SLURMD_NODENAME */
    static const char *const k8s_first[] = {"GA_NODE_NAME", "NODE_NAME", "SLURMD_NODENAME"};
    static const char *const slurm_first[] = {"SLURMD_NODENAME", "GA_NODE_NAME", "NODE_NAME"};
    const char *const *order = o->label && !o->drain ? k8s_first : slurm_first;
    for (int i = 0; i < 3; i++) {
        const char *env = getenv(order[i]);
        if (env && *env)
            return env;
    }
    gethostname(host, len);
    host[len - 1] = '\0';
    host[strcspn(host, ".")] = '\0'; /* Slurm's NodeName is the short name by default */
    return host;
}

static int health_check(const nc_opts *o)
{
    /* slurmd gives a HealthCheckProgram no PATH: scontrol, kubectl and node_health's own children need one */
    setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 0);
    char host[256] = "?";
    const char *node = node_name(o, host, sizeof host);
    if (o->label && !o->node && !getenv("NODE_NAME") && !getenv("GA_NODE_NAME"))
        return suite_usage_error("node-check", "--label needs the node's name: NODE_NAME (the downward API's "
                                               "spec.nodeName) or --node");
    /* The name reaches scontrol and kubectl: ALL would drain every node, a host list several, "-x" is an
     * option (issue 45, item 1). Refused before anything runs. */
    if ((o->drain || o->label) && !suite_node_name_ok(node))
        return suite_usage_error("node-check", "the node's name (--node, SLURMD_NODENAME, NODE_NAME or the "
                                               "host name) is not a node name: ALL, a host list or an option "
                                               "would name other nodes");
    char dir[] = "/tmp/gpuaccept-node-check.XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "gpuaccept node-check: ERROR %s: cannot make a directory in /tmp: %s\n", node,
                strerror(errno));
        return GA_EXIT_CHECK_FAILED;
    }
    nc_result r = {0};
    int rc = run_node_health(o, dir);
    char log[4200], said[512];
    snprintf(log, sizeof log, "%s/node_health.log", dir);
    last_line(log, said, sizeof said);
    int exit_code = GA_EXIT_CHECK_FAILED;
    if (rc == GA_EXIT_USAGE) {
        fprintf(stderr, "gpuaccept node-check: node_health refused its options: %s\n", said);
        exit_code = GA_EXIT_USAGE;
    } else if (rc == -2) {
        /* a check that hangs is a node that hangs (NVML blocked on a GPU that fell off the bus) */
        snprintf(r.verdict, sizeof r.verdict, "fail");
        snprintf(r.reason, sizeof r.reason, "node_health did not finish in %d s", o->timeout_s);
        snprintf(r.line, sizeof r.line, "FAIL %s: %s", node, r.reason);
        r.drain = true;
    } else if (rc == GA_EXIT_PASS || rc == GA_EXIT_CHECK_FAILED) {
        judge_report(dir, node, said, &r);
        if (strcmp(r.verdict, "fail") != 0 && strcmp(r.verdict, "error") != 0)
            exit_code = GA_EXIT_PASS;
    } else {
        /* it could not measure (exit 3, 5, not started): said, never a drain for what may be our own mistake
         */
        snprintf(r.verdict, sizeof r.verdict, "error");
        snprintf(r.line, sizeof r.line, "ERROR %s: node_health exit %d: %s", node, rc, said);
    }
    if (exit_code != GA_EXIT_USAGE) {
        printf("gpuaccept node-check: %s\n", r.line);
        fflush(stdout);
        if (o->drain && slurm_act(node, &r) != 0)
            fprintf(stderr, "gpuaccept node-check: scontrol could not update node %s\n", node);
        if (o->label && k8s_label(node, &r) != 0)
            fprintf(stderr, "gpuaccept node-check: kubectl could not label node %s\n", node);
    }
    char rm[4300];
    snprintf(rm, sizeof rm, "%s/node_health.json", dir);
    unlink(rm);
    unlink(log);
    rmdir(dir);
    return exit_code;
}

int cmd_node_check(int argc, char **argv)
{
    nc_opts o;
    int rc = parse(argc, argv, &o);
    if (rc < 0)
        return GA_EXIT_PASS; /* --help */
    if (rc > 0)
        return rc;
    if (o.health)
        return health_check(&o);
    /* The machine's name, as the programs' records give it (ga_machine_name): the preflight keeps it beside
     * the hostfile's name, so that the summary names a machine one way (issue 41, item 8). */
    char hostname[GA_HOST_MAX] = "?", host[GA_HOST_MAX], pod[GA_HOST_MAX];
    gethostname(hostname, sizeof hostname);
    hostname[sizeof hostname - 1] = '\0';
    ga_machine_name(plain_getenv, hostname, host, sizeof host, pod, sizeof pod);
    printf("[NODE] %s gpus=%d\n", host, suite_local_gpu_count(plain_getenv));
    return GA_EXIT_PASS;
}
