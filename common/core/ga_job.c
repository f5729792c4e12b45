#include "ga_job.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ga_launcher_name(ga_launcher_kind kind)
{
    switch (kind) {
    case GA_LAUNCHER_MPIRUN:
        return "mpirun";
    case GA_LAUNCHER_SRUN:
        return "srun";
    case GA_LAUNCHER_MPIJOB:
        return "mpijob";
    default:
        return "singleton";
    }
}

const char *ga_process_getenv(const char *name)
{
    return getenv(name);
}

static bool env_set(ga_getenv_fn get, const char *name)
{
    const char *v = get(name);
    return v && *v;
}

void ga_launcher_detect(ga_getenv_fn get, ga_launcher *out)
{
    memset(out, 0, sizeof *out);
    /* Open MPI's own variables come first: mpirun inside a Slurm allocation also sees SLURM_*, and Open MPI 4
     * sets PMIX_RANK for its ranks too. */
    if (env_set(get, "OMPI_COMM_WORLD_SIZE")) {
        const char *hostfile = get("OMPI_MCA_orte_default_hostfile");
        if (env_set(get, "KUBERNETES_SERVICE_HOST") ||
            (hostfile && strcmp(hostfile, "/etc/mpi/hostfile") == 0)) {
            out->kind = GA_LAUNCHER_MPIJOB;
            snprintf(out->detail, sizeof out->detail, "mpirun in an MPIJob launcher (hostfile %s)",
                     hostfile ? hostfile : "unset");
        } else {
            out->kind = GA_LAUNCHER_MPIRUN;
            snprintf(out->detail, sizeof out->detail, "mpirun%s%s", hostfile ? " with hostfile " : "",
                     hostfile ? hostfile : "");
        }
        return;
    }
    if (env_set(get, "SLURM_PROCID") && env_set(get, "SLURM_STEP_ID")) {
        const char *mpi = get("SLURM_MPI_TYPE");
        const char *job = get("SLURM_JOB_ID");
        out->kind = GA_LAUNCHER_SRUN;
        snprintf(out->detail, sizeof out->detail, "srun --mpi=%s (SLURM_JOB_ID=%s)", mpi ? mpi : "?",
                 job ? job : "?");
        return;
    }
    out->kind = GA_LAUNCHER_SINGLETON;
    snprintf(out->detail, sizeof out->detail, "no launcher: a single rank");
}

int ga_launcher_expected_tasks(ga_getenv_fn get)
{
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = get(names[i]);
        if (v && *v && (i == 0 || env_set(get, "SLURM_PROCID")))
            return atoi(v);
    }
    return 0;
}

/* A name fit to be a file name and a command word: what the downward API gives is a DNS subdomain. */
static bool plain_name(const char *s)
{
    if (!s || !*s || strlen(s) >= GA_HOST_MAX)
        return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '-' || *c == '_'))
            return false;
    return true;
}

void ga_machine_name(ga_getenv_fn get, const char *hostname, char *machine, size_t machine_len, char *pod,
                     size_t pod_len)
{
    const char *node = get(GA_NODE_NAME_ENV);
    const char *host = hostname && *hostname ? hostname : "unknown";
    if (plain_name(node) && strcmp(node, host) != 0) {
        snprintf(machine, machine_len, "%s", node);
        snprintf(pod, pod_len, "%s", host);
    } else {
        snprintf(machine, machine_len, "%s", host);
        if (pod_len)
            pod[0] = '\0';
    }
}
