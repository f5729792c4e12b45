#include "kernel_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_str.h"
#include "suite_util.h"

#define KL_HOSTS_SHOWN 8 /* a line an operator reads: the first nodes, then how many more */

void suite_kernel_log_not_covered(json_t *summary, const json_t *reports)
{
    size_t i, j;
    json_t *r, *f;
    json_array_foreach(reports, i, r) {
        if (!ga_streq(sj_str(r, "program", NULL), "node_health"))
            continue;
        sbuf hosts;
        sbuf_init(&hosts);
        int n = 0;
        json_array_foreach(sj_arr(r, "findings"), j, f) {
            if (!ga_streq(sj_str(f, "code", NULL), SUITE_KERNEL_LOG_CODE))
                continue;
            if (n < KL_HOSTS_SHOWN)
                sbuf_printf(&hosts, "%s%s", n ? ", " : "", sj_str(f, "host", "?"));
            n++;
        }
        char *list = sbuf_finish(&hosts);
        if (n > 0) {
            char line[768];
            /* each node's reason is its finding; this line says what was not covered and how to cover it */
            snprintf(line, sizeof line,
                     "Xids (kernel log) not checked on %d node%s: %s%s (no CAP_SYSLOG, or not root, under "
                     "kernel.dmesg_restrict=1: docs/deployment.md, \"The kernel log\")",
                     n, n == 1 ? "" : "s", list, n > KL_HOSTS_SHOWN ? " and more" : "");
            json_t *profile = json_object_get(summary, "profile");
            if (!json_is_object(profile)) {
                profile = json_pack("{s:s, s:s, s:[]}", "name", "?", "source", "the reports", "not_covered");
                json_object_set_new(summary, "profile", profile);
            }
            json_t *nc = json_object_get(profile, "not_covered");
            if (!json_is_array(nc)) {
                nc = json_array();
                json_object_set_new(profile, "not_covered", nc);
            }
            json_array_append_new(nc, json_string(line));
        }
        free(list);
    }
}

const char *suite_k8s_node_label(const json_t *node)
{
    const char *v = sj_str(node, "verdict", "fail");
    if (ga_streq(v, "fail"))
        return v;
    size_t i;
    json_t *code;
    json_array_foreach(sj_arr(node, "fault_codes"), i, code)
        if (ga_streq(json_string_value(code), SUITE_KERNEL_LOG_CODE))
            return SUITE_LABEL_UNCHECKED_XID;
    return v;
}
