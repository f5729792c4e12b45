/* The Kubernetes hand-off: gpuaccept-k8s.sh and its patches, gpuaccept-k8s.json (docs/handoff.md). Pure. */
#include "handoff.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_str.h"
#include "kernel_log.h"
#include "links.h"
#include "merge.h"
#include "suite_util.h"

/* The node's parts as the annotation's value into buf: "CODE: part, part; CODE: part", cut at len. */
static void parts_text(const json_t *node, char *buf, size_t len)
{
    const char *code;
    json_t *list, *p;
    size_t used = 0, i;
    buf[0] = '\0';
    json_object_foreach(json_object_get(node, "parts"), code, list) {
        int w = snprintf(buf + used, len - used, "%s%s:", used ? "; " : "", code);
        used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
        json_array_foreach(list, i, p) {
            w = snprintf(buf + used, len - used, "%s %s", i ? "," : "",
                         json_string_value(p) ? json_string_value(p) : "?");
            used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
        }
    }
}

char *suite_handoff_k8s_script(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    sbuf_puts(&b,
              "#!/bin/sh\n# gpuaccept: labels every node with its verdict (" SUITE_K8S_KEY
              "=pass|warn|fail|unchecked-xid) and taints failed nodes NoSchedule;\n# a node that no longer "
              "fails loses the taint. Written by gpuaccept from summary.json; `gpuaccept run --apply-k8s` "
              "runs it.\n"
              "set -e\nKUBECTL=${KUBECTL:-kubectl}\n");
    char why[200], line[256];
    if (!suite_handoff_names_ok(s, why, sizeof why)) { /* no kubectl line at all */
        snprintf(line, sizeof line, "gpuaccept-k8s.sh: refused, labels and taints nothing: %s", why);
        sbuf_puts(&b, "echo ");
        sbuf_shq(&b, line);
        sbuf_puts(&b, " >&2\nexit 2\n");
        return sbuf_finish(&b);
    }
    size_t i;
    json_t *node, *ends = suite_link_ends_set(s);
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *host = sj_str(node, "host", ""), *v = suite_k8s_node_label(node);
        /* The name after "--": whatever it is, kubectl never reads it as an option (node_name.h). */
        sbuf_puts(&b, "\"$KUBECTL\" label node --overwrite -- ");
        sbuf_shq(&b, host);
        sbuf_printf(&b, " " SUITE_K8S_KEY "=%s\n", v);
        /* An end of an abnormal link: labelled so, never tainted for it (the link's, issue 44, item 6). */
        sbuf_puts(&b, "\"$KUBECTL\" label node --overwrite -- ");
        sbuf_shq(&b, host);
        sbuf_printf(&b, " " SUITE_K8S_LINK_KEY "=%s\n", json_object_get(ends, host) ? "abnormal" : "none");
        char parts[1024], arg[1100]; /* "" overwrites an earlier run's parts */
        parts_text(node, parts, sizeof parts);
        snprintf(arg, sizeof arg, SUITE_K8S_PARTS_KEY "=%s", parts);
        sbuf_puts(&b, "\"$KUBECTL\" annotate node --overwrite -- ");
        sbuf_shq(&b, host);
        sbuf_puts(&b, " ");
        sbuf_shq(&b, arg);
        sbuf_puts(&b, "\n");
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
    json_decref(ends);
    return sbuf_finish(&b);
}

/* Per node: the label as an RFC 6902 patch, and the taint as the state the node must end in. A JSON Patch
 * cannot say "remove the taint with this key wherever it is" or "add it unless present" (RFC 6902 section 4
 * addresses array members by index, and "add /spec/taints/-" appends a duplicate every time it is applied,
 * which the API server refuses: Taint keys and effects are unique per node). spec.taints is an atomic list
 * (k8s.io/api core/v1 NodeSpec, +listType=atomic), so a merge or strategic merge patch would replace every
 * other taint. So, as `kubectl taint` does, the consumer reads the node and writes the list back: drop every
 * taint with our key, append "taint" where "tainted" (docs/handoff.md gives the command). Applying an entry
 * twice leaves the node as once; a node that passes loses the taint, as in gpuaccept-k8s.sh. */
json_t *suite_handoff_k8s_patches(const json_t *s)
{
    json_t *list = json_array();
    char why[200];
    if (!suite_handoff_names_ok(s, why, sizeof why)) /* nothing to apply: see gpuaccept-k8s.sh */
        return list;
    size_t i;
    json_t *node, *ends = suite_link_ends_set(s);
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *v = suite_k8s_node_label(node);
        /* RFC 6902: "~1" is the "/" of the label key. "add" replaces a label that exists: idempotent. */
        json_t *patch = json_pack("[{s:s, s:s, s:s}]", "op", "add", "path",
                                  "/metadata/labels/gpuaccept.io~1verdict", "value", v);
        /* whether it is an end of an abnormal link: "add" again, so that a later run's "none" replaces it */
        json_array_append_new(
            patch, json_pack("{s:s, s:s, s:s}", "op", "add", "path", "/metadata/labels/gpuaccept.io~1link",
                             "value", json_object_get(ends, sj_str(node, "host", "")) ? "abnormal" : "none"));
        json_t *entry = json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}, s:b}", "node", sj_str(node, "host", ""),
                                  "verdict", v, "patch", patch, "taint", "key", SUITE_K8S_KEY, "value",
                                  "fail", "effect", "NoSchedule", "tainted", ga_streq(v, "fail"));
        /* The parts as a JSON merge patch (RFC 7386) of metadata.annotations: an RFC 6902 "add" under
         * /metadata/annotations fails on a node without annotations, and adding that object would drop
         * others. */
        char parts[1024];
        parts_text(node, parts, sizeof parts);
        json_t *text = json_string(parts); /* NULL where the cut split a UTF-8 character */
        if (entry)
            json_object_set_new(entry, "annotations",
                                json_pack("{s:o}", SUITE_K8S_PARTS_KEY, text ? text : json_string("")));
        if (entry && sj_str(node, "pod", NULL)) /* the pod that ran on it, for the launcher's log */
            json_object_set_new(entry, "pod", json_string(sj_str(node, "pod", NULL)));
        json_array_append_new(list, entry);
    }
    json_decref(ends);
    return list;
}
