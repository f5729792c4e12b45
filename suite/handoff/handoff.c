#include "handoff.h"
#include "merge.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "escape.h"
#include "ga_str.h"
#include "suite_util.h"

/* s in single quotes for a POSIX shell. */
static void sbuf_shq(sbuf *b, const char *s)
{
    sbuf_puts(b, "'");
    while (*s) {
        size_t run = strcspn(s, "'");
        if (run)
            sbuf_printf(b, "%.*s", (int)run, s);
        s += run;
        if (*s) {
            sbuf_puts(b, "'\\''");
            s++;
        }
    }
    sbuf_puts(b, "'");
}

/* The name Slurm knows a node by: SLURMD_NODENAME as its ranks recorded it (a node whose NodeName is not
 * its host name), else the host name. */
static const char *slurm_name(const json_t *node)
{
    const char *s = sj_str(node, "slurm_node", NULL);
    return s && *s ? s : sj_str(node, "host", "");
}

/* The codes of a host's failures, not its warnings, once each in order, joined with commas: NHC's Reason
 * says why the node is out, nothing else. */
static void join_fail_codes(sbuf *b, const json_t *host_findings)
{
    json_t *seen = json_object();
    size_t i;
    json_t *f;
    json_array_foreach(host_findings, i, f) {
        const char *code = sj_str(f, "code", "?");
        if (!ga_streq(sj_str(f, "severity", ""), "fail") || json_object_get(seen, code))
            continue;
        sbuf_printf(b, "%s%s", json_object_size(seen) ? "," : "", code);
        json_object_set_new(seen, code, json_true());
    }
    json_decref(seen);
}

/* ---- Slurm: drain.sh ---- */

/* One `scontrol update ... State=DRAIN` per distinct set of failing codes. Returns how many nodes. */
static size_t drain_lines(sbuf *b, const json_t *nodes, const json_t *by_host)
{
    size_t n = json_array_size(nodes), drained = 0;
    char **reasons = calloc(n ? n : 1, sizeof *reasons);
    const char **names = calloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; reasons && names && i < n; i++) {
        const json_t *node = json_array_get(nodes, i);
        if (!ga_streq(sj_str(node, "verdict", ""), "fail"))
            continue;
        sbuf r;
        sbuf_init(&r);
        join_fail_codes(&r, json_object_get(by_host, sj_str(node, "host", "")));
        reasons[i] = r.failed ? NULL : strdup(sbuf_str(&r));
        sbuf_free(&r);
    }
    for (size_t i = 0; reasons && names && i < n; i++) {
        if (!reasons[i])
            continue;
        size_t k = 0;
        for (size_t j = i; j < n; j++)
            if (reasons[j] && (j == i || strcmp(reasons[j], reasons[i]) == 0)) {
                names[k++] = slurm_name(json_array_get(nodes, j));
                if (j != i) {
                    free(reasons[j]);
                    reasons[j] = NULL;
                }
            }
        char *hl = suite_hostlist_compress(names, k);
        char why[1024];
        snprintf(why, sizeof why, SUITE_DRAIN_REASON_PREFIX "%s", reasons[i]);
        sbuf_puts(b, "scontrol update NodeName=");
        sbuf_shq(b, hl ? hl : "");
        sbuf_puts(b, " State=DRAIN Reason=");
        sbuf_shq(b, why);
        sbuf_puts(b, "\n");
        drained += k;
        free(hl);
        free(reasons[i]);
        reasons[i] = NULL;
    }
    if (!reasons || !names)
        b->failed = true;
    free(reasons);
    free(names);
    return drained;
}

/* The nodes that passed (or warned) are resumed where gpuaccept drained them, as NHC resumes only the nodes
 * whose Reason it wrote: one sinfo for the drained nodes, then a RESUME for each of ours. A drained node
 * cannot run a Slurm job, so its re-check runs outside Slurm and knows only its host name: a node matches by
 * NodeName or NodeHostname. */
static void resume_lines(sbuf *b, const json_t *nodes)
{
    sbuf passed;
    sbuf_init(&passed);
    size_t i;
    json_t *node;
    json_array_foreach(nodes, i, node)
        if (!ga_streq(sj_str(node, "verdict", ""), "fail"))
            sbuf_printf(&passed, " %s", slurm_name(node));
    if (passed.len == 0) {
        sbuf_free(&passed);
        return;
    }
    sbuf_puts(&passed, " ");
    sbuf_puts(
        b, "# Nodes that passed: resumed only where the Reason shows that gpuaccept drained them.\npassed=");
    sbuf_shq(b, sbuf_str(&passed));
    sbuf_puts(b, "\ndrained=$(sinfo -h -N -t drain -o '%N|%n|%E')\n"
                 "printf '%s\\n' \"$drained\" | sort -u | while IFS='|' read -r node host reason; do\n"
                 "    case \"$reason\" in \"" SUITE_DRAIN_REASON_PREFIX "\"*) ;; *) continue ;; esac\n"
                 "    case \"$passed\" in *\" $node \"* | *\" $host \"*) ;; *) continue ;; esac\n"
                 "    scontrol update NodeName=\"$node\" State=RESUME\n"
                 "done\n");
    b->failed |= passed.failed;
    sbuf_free(&passed);
}

char *suite_handoff_drain(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    sbuf_puts(&b,
              "#!/bin/sh\n# gpuaccept: drains the nodes that failed acceptance, one line per distinct set of "
              "failing fault codes,\n# and resumes the nodes that passed where gpuaccept had drained them.\n"
              "# Written by gpuaccept from summary.json; `gpuaccept run --drain` runs it.\nset -e\n");
    const json_t *nodes = sj_arr(s, "nodes");
    json_t *by_host = suite_findings_by_host(sj_arr(s, "findings"));
    if (!drain_lines(&b, nodes, by_host))
        sbuf_puts(&b, "# no node failed: nothing to drain\n");
    resume_lines(&b, nodes);
    json_decref(by_host);
    return sbuf_finish(&b);
}

/* ---- Kubernetes ---- */

char *suite_handoff_k8s_script(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    sbuf_puts(&b, "#!/bin/sh\n# gpuaccept: labels every node with its verdict (" SUITE_K8S_KEY
                  "=pass|warn|fail) and taints failed nodes NoSchedule;\n# a node that no longer fails loses "
                  "the taint. Written by gpuaccept from summary.json; `gpuaccept run --apply-k8s` runs it.\n"
                  "set -e\nKUBECTL=${KUBECTL:-kubectl}\n");
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *host = sj_str(node, "host", ""), *v = sj_str(node, "verdict", "fail");
        /* The name after "--": whatever it is, kubectl never reads it as an option (node_name.h). */
        sbuf_puts(&b, "\"$KUBECTL\" label node --overwrite -- ");
        sbuf_shq(&b, host);
        sbuf_printf(&b, " " SUITE_K8S_KEY "=%s\n", v);
        if (ga_streq(v, "fail")) {
            sbuf_puts(&b, "\"$KUBECTL\" taint node --overwrite -- ");
            sbuf_shq(&b, host);
            sbuf_puts(&b, " " SUITE_K8S_KEY "=fail:NoSchedule\n");
        } else {
            /* Removing a taint the node does not carry is an error to kubectl: not to us. */
            sbuf_puts(&b, "\"$KUBECTL\" taint node -- ");
            sbuf_shq(&b, host);
            sbuf_puts(&b, " " SUITE_K8S_KEY ":NoSchedule- 2>/dev/null || true\n");
        }
    }
    return sbuf_finish(&b);
}

json_t *suite_handoff_k8s_patches(const json_t *s)
{
    json_t *list = json_array();
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *v = sj_str(node, "verdict", "fail");
        /* RFC 6902: "~1" is the "/" of the label key. "add" replaces a label that exists. */
        json_t *patch = json_pack("[{s:s, s:s, s:s}]", "op", "add", "path",
                                  "/metadata/labels/gpuaccept.io~1verdict", "value", v);
        if (ga_streq(v, "fail"))
            json_array_append_new(patch, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "op", "add", "path",
                                                   "/spec/taints/-", "value", "key", SUITE_K8S_KEY, "value",
                                                   "fail", "effect", "NoSchedule"));
        json_array_append_new(list, json_pack("{s:s, s:s, s:o}", "node", sj_str(node, "host", ""), "verdict",
                                              v, "patch", patch));
    }
    return list;
}

/* ---- files and actions ---- */

/* A host as a file name: what a name may not hold ('/', a leading '.') becomes '_'. */
static void host_file_name(const char *host, char *out, size_t len)
{
    snprintf(out, len, "%s", *host ? host : "_");
    for (char *c = out; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '-' || *c == '_' || (*c == '.' && c != out)))
            *c = '_';
}

/* gpuaccept-nodes/<host>.prom for each node, and none left from an earlier run of other nodes. */
static int write_node_proms(const json_t *s, const char *dir, char *err, size_t errlen)
{
    char sub[4096], path[4400], file[200];
    snprintf(sub, sizeof sub, "%s/%s", dir, SUITE_PROM_NODE_DIR);
    if (mkdir(sub, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", sub, strerror(errno));
        return -1;
    }
    DIR *d = opendir(sub);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".prom") == 0) {
            snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *host = sj_str(node, "host", "");
        char *text = suite_handoff_prom_node(s, host);
        host_file_name(host, file, sizeof file);
        snprintf(path, sizeof path, "%s/%s.prom", sub, file);
        int rc = text ? suite_write_text_atomic(path, text, err, errlen) : -1;
        if (!text)
            snprintf(err, errlen, "out of memory writing %s", path);
        free(text);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int suite_handoff_write(const json_t *s, const char *dir, char *err, size_t errlen)
{
    json_t *patches = suite_handoff_k8s_patches(s);
    char *texts[4] = {suite_handoff_drain(s), suite_handoff_k8s_script(s), suite_handoff_prom(s),
                      suite_handoff_junit(s)};
    static const char *names[4] = {"drain.sh", "gpuaccept-k8s.sh", "gpuaccept.prom", "gpuaccept-junit.xml"};
    int rc = 0;
    char path[4096];
    for (int i = 0; i < 4 && rc == 0; i++) {
        if (!texts[i]) {
            snprintf(err, errlen, "out of memory writing %s", names[i]);
            rc = -1;
            break;
        }
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = suite_write_text_atomic(path, texts[i], err, errlen);
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, SUITE_HANDOFF_K8S_JSON);
        rc = patches ? suite_write_json_atomic(path, patches, err, errlen) : -1;
    }
    if (rc == 0)
        rc = write_node_proms(s, dir, err, errlen);
    for (int i = 0; i < 4; i++)
        free(texts[i]);
    json_decref(patches);
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
