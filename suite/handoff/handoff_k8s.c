/* The Kubernetes hand-off: gpuaccept-k8s.sh and its patches, gpuaccept-k8s.json (docs/handoff.md). Pure. */
#include "handoff.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_str.h"
#include "kernel_log.h"
#include "merge.h"
#include "suite_util.h"

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
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node) {
        const char *host = sj_str(node, "host", ""), *v = suite_k8s_node_label(node);
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
        const char *v = suite_k8s_node_label(node);
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
