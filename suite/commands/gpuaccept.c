/* gpuaccept: the front-end of the suite. One verb per file (cmd_<verb>.c), as git's builtin/. */
#include <stdio.h>
#include <string.h>

#include "ga_exit.h"
#include "suite.h"
#include "suite.h"
#include "ga_version.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} verbs[] = {
    {"run", cmd_run, "run every check under the launcher found and write the summary"},
    {"merge", cmd_merge, "merge the reports already in a directory into the summary"},
    {"baseline", cmd_baseline, "make a baseline from a healthy run's summary.json"},
    {"compare", cmd_compare, "compare two runs' metrics and flag regressions"},
    {"node-check", cmd_node_check, "print this node's name and GPU count (what run's preflight launches)"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gpuaccept <verb> [options]   (gpuaccept <verb> --help for its options)\n"
            "Cluster acceptance for distributed training: one command, one verdict, a report people read.\n\n"
            "Verbs:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(out, "  %-10s %s\n", verbs[i].name, verbs[i].help);
    fprintf(out,
            "\nExit codes: 0 pass, 1 check failed, 2 usage error, 3 environment error, 4 timeout, 5 internal "
            "error.\n");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) { /* one line, as every other usage error: the verbs are a --help away */
        fprintf(stderr, "gpuaccept: no verb given (see gpuaccept --help)\n");
        return GA_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return GA_EXIT_PASS;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("gpuaccept %s\n", ga_version());
        return GA_EXIT_PASS;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strcmp(argv[1], verbs[i].name) == 0)
            return verbs[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "gpuaccept: unknown verb '%s' (see gpuaccept --help)\n", argv[1]);
    return GA_EXIT_USAGE;
}
