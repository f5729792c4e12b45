#include "ga_report.h"
#include "ga_text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_log.h"
#include "ga_time.h"
#include "ga_version.h"

void ga_report_run_id(const ga_common_opts *common, char *out, size_t len)
{
    const char *env = getenv("GPUACCEPT_RUN_ID"), *slurm = getenv("SLURM_JOB_ID");
    if (common && common->run_id[0]) {
        snprintf(out, len, "%s", common->run_id);
    } else if (env && ga_cli_valid_run_id(env)) {
        snprintf(out, len, "%s", env);
    } else if (slurm && *slurm && strlen(slurm) < 40 && strspn(slurm, "0123456789_") == strlen(slurm)) {
        /* Every step of one Slurm job is one run: the srun script needs no id of its own. */
        snprintf(out, len, "slurm-%s", slurm);
    } else {
        /* A program run alone: a run of its own, which `gpuaccept merge` will not mix with another. */
        char host[64] = "host";
        gethostname(host, sizeof host);
        host[sizeof host - 1] = '\0';
        for (char *c = host; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                  *c == '-'))
                *c = '-';
        snprintf(out, len, "%lld-%.24s-%ld", (long long)time(NULL), host, (long)getpid());
    }
}

json_t *ga_report_new(const ga_job *job, const char *program, const ga_common_opts *common)
{
    char now[32];
    ga_utc_timestamp(now, sizeof now);
    json_t *r = json_object();
    json_object_set_new(r, "schema", json_string("gpuaccept-report"));
    json_object_set_new(r, "schema_version", json_integer(GA_REPORT_SCHEMA_VERSION));
    json_object_set_new(r, "program", json_string(program));
    char run_id[GA_RUN_ID_MAX];
    ga_report_run_id(common, run_id, sizeof run_id);
    json_object_set_new(r, "run_id", json_string(run_id));
    json_object_set_new(r, "gpuaccept_version", json_string(ga_version()));
    json_object_set_new(r, "created_utc", json_string(now));
    json_object_set_new(r, "duration_s", json_real(ga_now() - job->start_time));

    json_t *cmd = json_array();
    for (int i = 0; i < job->argc && job->argv; i++)
        json_array_append_new(cmd, ga_json_text(job->argv[i]));
    json_object_set_new(r, "command_line", cmd);

    json_object_set_new(r, "launcher",
                        json_pack("{s:s, s:o}", "kind", ga_launcher_name(job->launcher.kind), "detail",
                                  ga_json_text(job->launcher.detail))); /* from the launcher's environment */
    json_object_set_new(r, "world_size", json_integer(job->world_size));
    json_object_set_new(r, "node_count", json_integer(job->node_count));
    json_object_set_new(r, "options",
                        json_pack("{s:o, s:b, s:b, s:f}", "report_dir", ga_json_text(common->report_dir),
                                  "quick", common->quick, "verbose", common->verbose, "timeout_s",
                                  common->timeout_s));
    return r;
}

json_t *ga_record_header_json(const ga_record_header *h)
{
    json_t *o = json_object();
    json_object_set_new(o, "rank", json_integer(h->world_rank));
    json_object_set_new(o, "local_rank", json_integer(h->local_rank));
    if (h->device_index >= 0) {
        /* node_index: NVML's numbering of the node's GPUs, null where this rank cannot know it; the suite's
         * merge takes it from node_health then (the GPU matched by pci_bus_id). */
        json_object_set_new(
            o, "device",
            json_pack("{s:i, s:o, s:o, s:o, s:o}", "index", h->device_index, "node_index",
                      h->device_node_index >= 0 ? json_integer(h->device_node_index) : json_null(), "name",
                      ga_json_text(h->device_name), "uuid", ga_json_text(h->device_uuid), "pci_bus_id",
                      ga_json_text(h->device_pci_bus_id)));
    } else {
        json_object_set_new(o, "device", json_null());
    }
    json_object_set_new(o, "status", json_string(ga_exit_code_name(h->status)));
    if (h->message[0])
        json_object_set_new(o, "message", ga_json_text(h->message));
    return o;
}

void ga_report_add_nodes(json_t *report, const void *records, int n, size_t record_size, ga_record_json_fn fn,
                         void *user)
{
    int node_count = 0;
    for (int i = 0; i < n; i++) {
        const ga_record_header *h = ga_record_at(records, record_size, i);
        if (h->node_index + 1 > node_count)
            node_count = h->node_index + 1;
    }
    json_t **nodes = calloc((size_t)node_count, sizeof *nodes);
    for (int i = 0; nodes && i < n; i++) {
        const void *rec = ga_record_at(records, record_size, i);
        const ga_record_header *h = rec;
        json_t *node = nodes[h->node_index];
        if (!node) {
            node = nodes[h->node_index] =
                json_pack("{s:o, s:i, s:i, s:[]}", "host", ga_json_text(h->host), "node_index", h->node_index,
                          "local_ranks", h->local_size, "ranks");
            if (node && h->slurm_node[0])
                json_object_set_new(node, "slurm_node", ga_json_text(h->slurm_node));
            if (node && h->pod[0]) /* the pod's name beside the machine's: the launcher's log names pods */
                json_object_set_new(node, "pod", ga_json_text(h->pod));
        }
        json_t *rank = ga_record_header_json(h);
        if (fn) {
            json_t *extra = fn(rec, user);
            if (extra) {
                json_object_update(rank, extra);
                json_decref(extra);
            }
        }
        json_array_append_new(json_object_get(node, "ranks"), rank);
    }
    json_t *arr = json_array();
    for (int i = 0; nodes && i < node_count; i++)
        if (nodes[i])
            json_array_append_new(arr, nodes[i]);
    free(nodes);
    json_object_set_new(report, "nodes", arr);
}

void ga_report_set_verdict(json_t *report, const ga_findings *f, int exit_code)
{
    json_object_set_new(report, "findings", ga_findings_to_json(f));
    json_t *reasons = json_array();
    for (size_t i = 0; i < f->count; i++)
        if (f->items[i].severity == GA_SEV_FAIL)
            json_array_append_new(reasons, ga_json_text(f->items[i].message));
    json_object_set_new(report, "verdict",
                        json_pack("{s:s, s:i, s:s, s:o, s:i}", "result",
                                  exit_code == GA_EXIT_PASS ? "pass" : "fail", "exit_code", exit_code,
                                  "exit_name", ga_exit_code_name(exit_code), "reasons", reasons, "warnings",
                                  (int)ga_findings_count(f, GA_SEV_WARN)));
}

static json_t *where_int(int v)
{
    return v < 0 ? json_null() : json_integer(v);
}

void ga_report_add_metric(json_t *report, const char *name, double value, const char *unit,
                          bool higher_is_better, ga_where where)
{
    json_t *metrics = json_object_get(report, "metrics");
    if (!metrics) {
        metrics = json_array();
        json_object_set_new(report, "metrics", metrics);
    }
    json_t *m = json_pack("{s:s, s:f, s:s, s:b}", "name", name, "value", value, "unit", unit,
                          "higher_is_better", higher_is_better);
    json_object_set_new(m, "host", where.host ? ga_json_text(where.host) : json_null());
    json_object_set_new(m, "node_index", where_int(where.node_index));
    json_object_set_new(m, "rank", where_int(where.world_rank));
    json_object_set_new(m, "gpu", where_int(where.gpu));
    char pci[GA_PCI_BUS_ID_LEN] = "";
    if (ga_pci_normalise(where.pci_bus_id, pci, sizeof pci) == 0)
        json_object_set_new(m, "pci_bus_id", json_string(pci));
    json_array_append_new(metrics, m);
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

static ga_report_commit_check commit_check;
/* The report written but not yet renamed into place ('\0': none), for the fatal path and the commit. One
 * writer per process. */
static char pending_tmp[GA_PATH_MAX + 128], pending_final[GA_PATH_MAX + 128];
static int pending_code;

void ga_report_set_commit_check(ga_report_commit_check check)
{
    commit_check = check;
}

void ga_report_abandon_pending(void)
{
    if (pending_tmp[0])
        unlink(pending_tmp);
}

/* A report is staged as .<program>.json.tmp.<host>.<pid>.XXXXXX: hidden from every reader, and named so that
 * a later run can tell whose it is. A writer killed midway (SIGKILL, a node lost) leaves it behind, and
 * nothing else would ever remove it (issue 45, item 9). */
#define TEMP_TAG ".json.tmp."
#define TEMP_FOREIGN_AGE_S (24 * 3600) /* a write takes seconds: a day-old temporary's writer is gone */

static time_t run_started; /* when this process first cleaned (ga_report_remove_stale_temps), else 0 */

static void this_host(char *host, size_t len)
{
    if (gethostname(host, len) != 0)
        snprintf(host, len, "unknown");
    host[len - 1] = '\0';
    host[strcspn(host, "/")] = '\0';
}

/* Whether the temporary named rest (what follows ".<program>.json.tmp.") belongs to a writer that is gone: a
 * dead process of this host; a writer on another host (a shared directory) is not asked, only aged. */
static bool writer_gone(const char *rest, time_t mtime, time_t started)
{
    const char *suffix = strrchr(rest, '.');
    if (!suffix || strlen(suffix + 1) != 6 || suffix == rest)
        return false;
    const char *p = suffix - 1;
    while (p > rest && *p >= '0' && *p <= '9')
        p--;
    if (*p != '.' || p + 1 == suffix)
        return false;
    char host[256], mine[256];
    snprintf(host, sizeof host, "%.*s", (int)(p - rest), rest);
    this_host(mine, sizeof mine);
    long pid = strtol(p + 1, NULL, 10);
    if (mtime < started - TEMP_FOREIGN_AGE_S)
        return true;
    if (strcmp(host, mine) != 0 || pid <= 0 || pid == (long)getpid())
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Whether a file of dir named name is a stale temporary of program's: of the unnamed form of earlier versions
 * (.<program>.json.XXXXXX, which no writer of this version makes), or older than the run and of a writer that
 * is gone. */
static bool stale_temp(int dir_fd, const char *name, const char *program, time_t started)
{
    size_t pl = strlen(program);
    if (name[0] != '.' || strncmp(name + 1, program, pl) != 0)
        return false;
    const char *tail = name + 1 + pl;
    bool legacy = strncmp(tail, ".json.", 6) == 0 && strlen(tail) == 12;
    bool named = strncmp(tail, TEMP_TAG, strlen(TEMP_TAG)) == 0;
    struct stat st;
    if ((!legacy && !named) || fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return false;
    return legacy || (st.st_mtime < started && writer_gone(tail + strlen(TEMP_TAG), st.st_mtime, started));
}

void ga_report_remove_stale_temps(const char *dir, const char *program)
{
    if (!run_started)
        run_started = time(NULL);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (stale_temp(dirfd(d), e->d_name, program, run_started))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

int ga_report_stage(const char *dir, const char *program, json_t *report, int exit_code, char *err,
                    size_t errlen)
{
    char final_path[GA_PATH_MAX + 128], tmp_path[GA_PATH_MAX + 128];
    snprintf(final_path, sizeof final_path, "%s/%s.json", dir, program);
    char host[256];
    this_host(host, sizeof host);
    snprintf(tmp_path, sizeof tmp_path, "%s/.%s" TEMP_TAG "%.64s.%ld.XXXXXX", dir, program, host,
             (long)getpid());
    ga_report_remove_stale_temps(dir, program);

    char *text = json_dumps(report, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    if (!text) {
        snprintf(err, errlen, "cannot serialise the report");
        return -1;
    }
    int fd = mkstemp(tmp_path);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a file in '%s': %s", dir, strerror(errno));
        free(text);
        return -1;
    }
    memcpy(pending_tmp, tmp_path, sizeof pending_tmp);
    memcpy(pending_final, final_path, sizeof pending_final);
    pending_code = exit_code;
    int rc = write_all(fd, text, strlen(text));
    rc = rc ? rc : write_all(fd, "\n", 1);
    rc = rc ? rc : fchmod(fd, 0644);
    rc = rc ? rc : fsync(fd);
    int saved = errno;
    free(text);
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0) {
        unlink(tmp_path);
        pending_tmp[0] = '\0';
        snprintf(err, errlen, "cannot write '%s': %s", final_path, strerror(saved));
    }
    return rc;
}

int ga_report_commit_staged(int agreed_exit_code, char *err, size_t errlen)
{
    if (!pending_tmp[0])
        return 0;
    int rc = 0;
    if (agreed_exit_code != pending_code) {
        snprintf(err, errlen, "'%s' not written: the job ended with exit %d, the report says %d",
                 pending_final, agreed_exit_code, pending_code);
        rc = 1;
    } else {
        if (commit_check)
            commit_check(pending_tmp);
        if (rename(pending_tmp, pending_final) != 0) {
            snprintf(err, errlen, "cannot write '%s': %s", pending_final, strerror(errno));
            rc = -1;
        }
    }
    if (rc != 0)
        unlink(pending_tmp);
    pending_tmp[0] = '\0';
    return rc;
}

int ga_report_write_atomic(const char *dir, const char *program, json_t *report, char *err, size_t errlen)
{
    if (ga_report_stage(dir, program, report, 0, err, errlen) != 0)
        return -1;
    return ga_report_commit_staged(0, err, errlen) == 0 ? 0 : -1;
}

int ga_report_finish(json_t *report, const ga_common_opts *common, const char *program, const char *tag,
                     const ga_findings *f, int exit_code)
{
    ga_report_set_verdict(report, f, exit_code);
    char err[GA_PATH_MAX + 256] = "";
    /* Renamed into place by ga_program_end once every rank has agreed on the exit code. */
    if (ga_report_stage(common->report_dir, program, report, exit_code, err, sizeof err) != 0)
        exit_code = GA_EXIT_ENV;
    else
        ga_log(tag, "report: %s/%s.json", common->report_dir, program);
    ga_result_print(f, exit_code, err);
    return exit_code;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char path[GA_PATH_MAX];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return (mkdir(path, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

int ga_report_dir_prepare(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (make_dirs(dir) != 0 || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--report-dir '%s': cannot create the directory: %s", dir,
                 strerror(errno ? errno : ENOTDIR));
        return -1;
    }
    char probe[GA_PATH_MAX + 64];
    snprintf(probe, sizeof probe, "%s/.gpuaccept-probe.XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0) {
        snprintf(err, errlen, "--report-dir '%s' is not writable: %s", dir, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(probe);
    return 0;
}
