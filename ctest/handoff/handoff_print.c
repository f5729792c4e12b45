/* Prints one hand-off file written from a summary.json as it stands, with no merge before it: the tests hold
 * the writers' own rules (names, line lengths, escaping; issue 45) with summaries no merge would pass.
 * Usage: handoff_print drain|k8s|k8s-json|prom|prom-node:HOST SUMMARY */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handoff.h"
#include "suite_util.h"

static char *render(const char *what, const json_t *summary)
{
    if (strcmp(what, "drain") == 0)
        return suite_handoff_drain(summary);
    if (strcmp(what, "k8s") == 0)
        return suite_handoff_k8s_script(summary);
    if (strcmp(what, "prom") == 0)
        return suite_handoff_prom(summary);
    if (strncmp(what, "prom-node:", 10) == 0)
        return suite_handoff_prom_node(summary, what + 10);
    if (strcmp(what, "k8s-json") == 0) {
        json_t *patches = suite_handoff_k8s_patches(summary);
        char *text = patches ? suite_json_text(patches) : NULL;
        json_decref(patches);
        return text;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    char err[512];
    if (argc != 3) {
        fprintf(stderr, "usage: handoff_print drain|k8s|k8s-json|prom|prom-node:HOST SUMMARY\n");
        return 2;
    }
    json_t *summary = suite_load_json(argv[2], err, sizeof err);
    if (!summary) {
        fprintf(stderr, "handoff_print: %s\n", err);
        return 2;
    }
    char *text = render(argv[1], summary);
    json_decref(summary);
    if (!text) {
        fprintf(stderr, "handoff_print: nothing written for %s\n", argv[1]);
        return 1;
    }
    fputs(text, stdout);
    free(text);
    return 0;
}
