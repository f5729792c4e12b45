/* The front-end's output files, written as one set: summary.json, .md and .html, then the hand-off files
 * (docs/handoff.md).
 */
#include "outputs_write.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "handoff.h"
#include "render.h"
#include "suite_util.h"

/* Temporary files a merge killed midway left behind (summary.json.tmp.XXXXXX and the like). */
static void remove_stale_temps(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4200];
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "summary.", 8) == 0 && strstr(e->d_name, ".tmp.")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
}

static char *summary_json(const json_t *summary)
{
    return suite_json_text(summary);
}

static char *k8s_patches_json(const json_t *summary)
{
    json_t *patches = suite_handoff_k8s_patches(summary);
    char *text = patches ? suite_json_text(patches) : NULL;
    json_decref(patches);
    return text;
}

/* Every file the front-end writes beside the reports, in the order they are written. The summary set is
 * rendered and written beside the old versions first, then renamed, summary.json last, so that a kill leaves
 * the old set or the new one, never this run's json beside the last run's html; the hand-off files follow,
 * each atomically (docs/handoff.md), then the per-node Prometheus files. */
static const struct {
    const char *name;
    char *(*render)(const json_t *summary); /* a new string, NULL when out of memory */
    bool summary_set;
} outputs[] = {
    {"summary.html", suite_render_html, true},
    {"summary.md", suite_render_md, true},
    {"summary.json", summary_json, true},
    {"drain.sh", suite_handoff_drain, false},
    {"gpuaccept-k8s.sh", suite_handoff_k8s_script, false},
    {SUITE_HANDOFF_K8S_JSON, k8s_patches_json, false},
    {"gpuaccept.prom", suite_handoff_prom, false},
    {"gpuaccept-junit.xml", suite_handoff_junit, false},
};
enum { N_OUTPUTS = sizeof outputs / sizeof outputs[0] };

/* The summary set: temporary files first, then renamed in order. */
static int write_summary_set(char *const *texts, const char *dir, char *err, size_t errlen)
{
    char tmps[N_OUTPUTS][4200] = {{0}}, path[4096];
    int rc = 0;
    for (size_t i = 0; i < N_OUTPUTS && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, outputs[i].name);
        if (outputs[i].summary_set)
            rc = suite_write_text_temp(path, texts[i], tmps[i], sizeof tmps[i], err, errlen);
    }
    for (size_t i = 0; i < N_OUTPUTS && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, outputs[i].name);
        if (outputs[i].summary_set && rename(tmps[i], path) != 0) {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
            rc = -1;
        }
    }
    for (size_t i = 0; i < N_OUTPUTS; i++)
        if (tmps[i][0])
            unlink(tmps[i]); /* gone after a rename; what a failure left behind */
    return rc;
}

int suite_outputs_write(const json_t *summary, const char *dir, char *err, size_t errlen)
{
    remove_stale_temps(dir);
    char *texts[N_OUTPUTS] = {0};
    int rc = 0;
    for (size_t i = 0; i < N_OUTPUTS && rc == 0; i++)
        if (!(texts[i] = outputs[i].render(summary))) {
            snprintf(err, errlen, "out of memory rendering %s", outputs[i].name);
            rc = -1;
        }
    size_t json_bytes = rc == 0 ? strlen(texts[2]) : 0; /* summary.json */
    if (rc == 0 && json_bytes > SUITE_MAX_INPUT_BYTES) {
        /* A summary compare and baseline would refuse to read is not written (issue 27). */
        snprintf(err, errlen,
                 "summary.json would be %.1f MiB, more than the %d MiB gpuaccept reads back (compare, "
                 "baseline): the reports are too large to merge",
                 (double)json_bytes / (1 << 20), SUITE_MAX_INPUT_BYTES >> 20);
        rc = SUITE_OUTPUTS_TOO_LARGE;
    }
    if (rc == 0)
        rc = write_summary_set(texts, dir, err, errlen);
    char path[4096];
    for (size_t i = 0; i < N_OUTPUTS && rc == 0; i++)
        if (!outputs[i].summary_set) {
            snprintf(path, sizeof path, "%s/%s", dir, outputs[i].name);
            rc = suite_write_text_atomic(path, texts[i], err, errlen);
        }
    if (rc == 0)
        rc = suite_handoff_prom_nodes_write(summary, dir, err, errlen);
    for (size_t i = 0; i < N_OUTPUTS; i++)
        free(texts[i]);
    return rc;
}

int suite_handoff_exec(const char *dir, const char *script)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, script);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execlp("sh", "sh", path, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
