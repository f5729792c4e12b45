/* drain.sh: the Slurm hand-off (docs/handoff.md). Pure. */
#include "handoff.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "finding_text.h"
#include "ga_str.h"
#include "links.h"
#include "merge.h"
#include "node_name.h"
#include "suite_util.h"

/* The name Slurm knows a node by: SLURMD_NODENAME as its ranks recorded it (a node whose NodeName is not
 * its host name), else the host name. */
static const char *slurm_name(const json_t *node)
{
    const char *s = sj_str(node, "slurm_node", NULL);
    return s && *s ? s : sj_str(node, "host", "");
}

/* " (mlx5_3, +1 more)": the parts the node's summary entry names for code (issue 46, item 4), short and in a
 * safe alphabet: the Reason is read by sinfo, split on '|' by resume_lines and quoted by sbuf_shq. */
static void append_parts(sbuf *b, const json_t *node, const char *code)
{
    enum { SHOWN = 2, PART_MAX = 32 };
    const json_t *list = json_object_get(json_object_get(node, "parts"), code);
    size_t i, n = json_array_size(list);
    json_t *p;
    json_array_foreach(list, i, p) {
        const char *t = json_string_value(p);
        if (i == SHOWN) {
            sbuf_printf(b, ", +%zu more", n - SHOWN);
            break;
        }
        sbuf_puts(b, i ? ", " : " (");
        for (size_t k = 0; t && t[k] && k < PART_MAX; k++) {
            char c = t[k];
            bool safe = isalnum((unsigned char)c) || strchr("._:-> ()/+", c);
            sbuf_printf(b, "%c", safe ? c : '_');
        }
    }
    if (n)
        sbuf_puts(b, ")");
}

/* The codes of a host's failures, not its warnings, once each in order, joined with commas, each with the
 * parts it names: NHC's Reason says why the node is out, nothing else. */
static void join_fail_codes(sbuf *b, const json_t *host_findings, const json_t *node)
{
    json_t *seen = json_object();
    size_t i;
    json_t *f;
    json_array_foreach(host_findings, i, f) {
        const char *code = sj_str(f, "code", "?");
        if (!ga_streq(sj_str(f, "severity", ""), "fail") || json_object_get(seen, code) ||
            json_object_get(f, "link")) /* a link's finding is no reason to drain its end */
            continue;
        sbuf_printf(b, "%s%s", json_object_size(seen) ? "," : "", code);
        append_parts(b, node, code);
        json_object_set_new(seen, code, json_true());
    }
    json_decref(seen);
}

/* The node's failing GPUs, by bus id with the index beside it (" on GPU 5 (0000:9a:00.0)"): the one name
 * an RMA or a hand-off to the vendor can act on when every GPU is CUDA device 0 (issue 40, finding 4). */
static void join_fail_gpus(sbuf *b, const json_t *node)
{
    size_t i, shown = 0;
    json_t *g;
    json_array_foreach(sj_arr(node, "gpus"), i, g) {
        char name[96];
        suite_gpu_name(g, name, sizeof name);
        if (!ga_streq(sj_str(g, "verdict", ""), "fail") || !name[0])
            continue;
        sbuf_printf(b, "%s%s", shown++ ? ", " : " on ", name);
    }
}

/* A failed node known only by an address (a hostfile of IPs, and no report gave its host or SLURMD_NODENAME
 * name): `scontrol update NodeName=10.0.0.5` would name no node, or worse a NodeName that happens to match,
 * so the script says so in a comment with the line to run by hand (issue 41, item 8). */
static void unknown_name_line(sbuf *b, const char *name, const char *reason)
{
    sbuf_printf(b,
                "# %s failed (%s) but is known here only by its address: its Slurm node name is unknown, "
                "so it is not drained.\n# Drain it by its NodeName: scontrol update NodeName=<NodeName> "
                "State=DRAIN Reason='" SUITE_DRAIN_REASON_PREFIX "%s'\n",
                name, reason, reason);
}

/* The reason, on one line and without a quote: it goes into a comment as well as into sbuf_shq. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\'')
            *s = ' ';
}

/* One `scontrol update ... State=DRAIN` per distinct set of failing codes and GPUs. Returns how many nodes
 * failed (drained, or named by address only and so left to a comment).
 */
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
        join_fail_codes(&r, json_object_get(by_host, sj_str(node, "host", "")), node);
        join_fail_gpus(&r, node);
        reasons[i] = r.failed ? NULL : strdup(sbuf_str(&r));
        sbuf_free(&r);
        if (reasons[i])
            one_line(reasons[i]);
        if (reasons[i] && suite_node_name_is_address(slurm_name(node))) {
            unknown_name_line(b, slurm_name(node), reasons[i]);
            drained++;
            free(reasons[i]);
            reasons[i] = NULL;
        }
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

/* The abnormal links, left to the fabric team in comments (issue 44, item 6): a slow link between two nodes
 * that are fine with their other partners is the link's or the path's, so neither end is drained for it,
 * and neither is resumed either (resume_lines): a cable or switch port is not mended by a re-check. */
static void link_lines(sbuf *b, const json_t *s)
{
    const json_t *links = sj_arr(s, "abnormal_links");
    if (json_array_size(links) == 0)
        return;
    sbuf_printf(b,
                "# Left to the fabric team: %zu abnormal link%s (the link or path, not a node); neither end "
                "is drained or resumed for it:\n",
                json_array_size(links), json_array_size(links) == 1 ? "" : "s");
    size_t i;
    json_t *l;
    json_array_foreach(links, i, l) {
        const json_t *hosts = json_object_get(l, "hosts");
        char text[1200];
        snprintf(text, sizeof text, "%s <-> %s: %s", json_string_value(json_array_get(hosts, 0)),
                 json_string_value(json_array_get(hosts, 1)), sj_str(l, "message", ""));
        one_line(text);
        sbuf_printf(b, "#   link %s\n", text);
    }
}

/* The nodes that passed (or warned) are resumed where gpuaccept drained them, as NHC resumes only the nodes
 * whose Reason it wrote: one sinfo for the drained nodes, then a RESUME for each of ours. A drained node
 * cannot run a Slurm job, so its re-check runs outside Slurm and knows only its host name: a node matches by
 * NodeName or NodeHostname. */
static void resume_lines(sbuf *b, const json_t *nodes, const json_t *link_ends)
{
    sbuf passed;
    sbuf_init(&passed);
    size_t i;
    json_t *node;
    json_array_foreach(nodes, i, node)
        if (!ga_streq(sj_str(node, "verdict", ""), "fail") && !suite_node_name_is_address(slurm_name(node)) &&
            !json_object_get(link_ends, sj_str(node, "host", "")))
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

bool suite_handoff_names_ok(const json_t *s, char *why, size_t len)
{
    static const char *const keys[] = {"host", "slurm_node", "pod"};
    size_t i;
    json_t *node;
    json_array_foreach(sj_arr(s, "nodes"), i, node)
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            json_t *v = json_object_get(node, keys[k]);
            bool absent = k > 0 && (!v || json_is_null(v) || (json_is_string(v) && !*json_string_value(v)));
            if (!absent && !(json_is_string(v) && suite_node_name_ok(json_string_value(v)))) {
                snprintf(why, len, "node %zu's %s is not a node name (ALL, a host list, an option, blanks?)",
                         i, keys[k]);
                return false;
            }
        }
    return true;
}

/* The whole script when a name breaks the rule: it names no node to scontrol at all. */
static void refusal(sbuf *b, const char *why)
{
    sbuf_puts(b, "echo ");
    char line[256];
    snprintf(line, sizeof line, "gpuaccept drain.sh: refused, drains nothing: %s", why);
    sbuf_shq(b, line);
    sbuf_puts(b, " >&2\nexit 2\n");
}

char *suite_handoff_drain(const json_t *s)
{
    sbuf b;
    sbuf_init(&b);
    sbuf_puts(&b,
              "#!/bin/sh\n# gpuaccept: drains the nodes that failed acceptance, one line per distinct set of "
              "failing fault codes,\n# and resumes the nodes that passed where gpuaccept had drained them.\n"
              "# Written by gpuaccept from summary.json; `gpuaccept run --drain` runs it.\nset -e\n");
    char why[200];
    if (!suite_handoff_names_ok(s, why, sizeof why)) {
        refusal(&b, why);
        return sbuf_finish(&b);
    }
    const json_t *nodes = sj_arr(s, "nodes");
    json_t *by_host = suite_findings_by_host(sj_arr(s, "findings"));
    json_t *link_ends = suite_link_ends_set(s);
    if (!drain_lines(&b, nodes, by_host))
        sbuf_puts(&b, "# no node failed: nothing to drain\n");
    link_lines(&b, s);
    resume_lines(&b, nodes, link_ends);
    json_decref(link_ends);
    json_decref(by_host);
    return sbuf_finish(&b);
}
