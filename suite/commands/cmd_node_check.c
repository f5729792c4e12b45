/* gpuaccept node-check: "[NODE] HOST gpus=N" and exit 0; what the preflight (run/preflight.c) launches on
 * every node, so that a node that cannot start a process, or hangs, is known before any step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ga_exit.h"
#include "ga_job.h"
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
    /* The machine's name, as the programs' records give it (ga_machine_name): the preflight keeps it beside
     * the hostfile's name, so that the summary names a machine one way (issue 41, item 8). */
    char hostname[GA_HOST_MAX] = "?", host[GA_HOST_MAX], pod[GA_HOST_MAX];
    gethostname(hostname, sizeof hostname);
    hostname[sizeof hostname - 1] = '\0';
    ga_machine_name(plain_getenv, hostname, host, sizeof host, pod, sizeof pod);
    printf("[NODE] %s gpus=%d\n", host, suite_local_gpu_count(plain_getenv));
    return GA_EXIT_PASS;
}
