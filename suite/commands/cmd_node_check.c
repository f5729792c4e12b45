/* gpuaccept node-check: "[NODE] HOST gpus=N" and exit 0; what the preflight (run/preflight.c) launches on
 * every node, so that a node that cannot start a process, or hangs, is known before any step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ga_exit.h"
#include "launch_plan.h"
#include "suite.h"

static const char *plain_getenv(const char *name)
{
    return getenv(name);
}

int cmd_node_check(int argc, char **argv)
{
    /* It takes no option but --help: anything else is a command line this gpuaccept did not write. */
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: gpuaccept node-check\n"
               "Prints \"[NODE] HOST gpus=N\" for this node and exits 0: what gpuaccept run's preflight "
               "launches "
               "on every node.\n");
        return GA_EXIT_PASS;
    }
    if (argc > 1)
        return suite_usage_error("node-check", "unexpected argument '%s' (it takes none)", argv[1]);
    char host[256] = "?";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    printf("[NODE] %s gpus=%d\n", host, suite_local_gpu_count(plain_getenv));
    return GA_EXIT_PASS;
}
