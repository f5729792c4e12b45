#include "launch_plan.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The operator of Kubeflow's MPIJob mounts the hostfile here and points Open MPI at it. */
#define MPIJOB_HOSTFILE "/etc/mpi/hostfile"

const char *suite_launch_kind_name(suite_launch_kind kind)
{
    switch (kind) {
    case SUITE_LAUNCH_SLURM:
        return "srun";
    case SUITE_LAUNCH_MPIJOB:
        return "mpijob";
    case SUITE_LAUNCH_HOSTFILE:
        return "mpirun-hostfile";
    default:
        return "mpirun";
    }
}

static int add_word(suite_launch *out, char *err, size_t errlen, const char *fmt, const char *a, int n)
{
    if (out->argc >= SUITE_LAUNCH_MAX_WORDS) {
        snprintf(err, errlen, "launcher command too long (more than %d words)", SUITE_LAUNCH_MAX_WORDS);
        return -1;
    }
    int w = snprintf(out->argv[out->argc], SUITE_LAUNCH_WORD_MAX, fmt, a ? a : "", n);
    if (w < 0 || w >= SUITE_LAUNCH_WORD_MAX) {
        snprintf(err, errlen, "launcher argument too long: %.60s...", a ? a : "");
        return -1;
    }
    out->argc++;
    return 0;
}
#define WORD(s) add_word(out, err, errlen, "%s", (s), 0)

static bool nonempty(const char *s)
{
    return s && *s;
}

/* Variables the ranks on other nodes need: mpirun starts them through ssh without the launcher's
 * environment. Secrets are never in this list. */
static bool forwarded(const char *entry)
{
    static const char *const prefixes[] = {"NCCL_", "UCX_", "GPUACCEPT_"};
    static const char *const names[] = {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "LD_LIBRARY_PATH"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(entry, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(entry, names[i], n) == 0 && entry[n] == '=')
            return true;
    }
    return false;
}

/* Where the ranks may run (issue 40, finding 6). NCCL binds its own threads, the proxy thread that posts
 * every network transfer among them, to the CPUs local to the rank's GPU that are also in the rank's CPU mask
 * (src/graph/topo.cc, ncclTopoGetCpuAffinity: "Use a subset of the GPU affinity set", CPU_AND of the
 * process's sched_getaffinity and the GPU's CPUs; an empty intersection leaves the mask as it was). Open
 * MPI's default binding without directives is to one core when there are at most 2 processes and to a
 * socket (package) otherwise, mapped round-robin across sockets (mpirun(1), Open MPI 4.1, "Mapping, Ranking,
 * and Binding"): a rank of a 2-GPU machine then has one core for itself and NCCL's threads, and every other
 * rank of an 8-GPU node sits on the socket away from its GPU, where NCCL finds no CPU of its GPU's to move
 * its threads to. --bind-to none leaves each rank the whole node, so that NCCL's intersection is its GPU's
 * local CPUs: NCCL's threads run next to the GPU, and no rank is held to one CPU whatever the remote nodes'
 * core counts (which the launcher cannot know). Host-path runs on this machine keep Open MPI's default: their
 * figures are per core (ga_time's CPU clocks). */
static bool mpirun_unbound(const suite_launch_in *in, const char *hostfile)
{
    return hostfile != NULL || in->local_gpus > 0;
}

static int add_mpirun(const suite_launch_in *in, suite_launch *out, const char *hostfile, char *err,
                      size_t errlen)
{
    if (WORD("mpirun"))
        return -1;
    if (in->as_root && WORD("--allow-run-as-root"))
        return -1;
    if (hostfile && (WORD("--hostfile") || WORD(hostfile)))
        return -1;
    if (out->np > 0 && (WORD("-np") || add_word(out, err, errlen, "%s%d", "", out->np)))
        return -1;
    if (!hostfile && out->np > in->local_cores && WORD("--oversubscribe"))
        return -1;
    if (mpirun_unbound(in, hostfile) && (WORD("--bind-to") || WORD("none")))
        return -1;
    if (hostfile) {
        for (char *const *e = in->envp; e && *e; e++) {
            if (!forwarded(*e))
                continue;
            char name[SUITE_LAUNCH_WORD_MAX];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
            if (WORD("-x") || WORD(name))
                return -1;
        }
    }
    return 0;
}

static long env_long(const char *v)
{
    char *end = NULL;
    long n = v && *v ? strtol(v, &end, 10) : 0;
    return end && end != v ? n : 0;
}

/* The CPUs each task of a step may have: the job's --cpus-per-task when it gave one (srun does not inherit
 * it since Slurm 22.05: sbatch(1), --cpus-per-task, "NOTE: Beginning with 22.05, srun will not inherit the
 * --cpus-per-task value requested by salloc or sbatch"), else the CPUs Slurm allocated on the node
 * (SLURM_CPUS_ON_NODE) shared among its tasks (SLURM_NTASKS_PER_NODE, or the first count of
 * SLURM_TASKS_PER_NODE, "8(x2)"). 0 when unknown. */
static long slurm_cpus_per_task(ga_getenv_fn get)
{
    long given = env_long(get("SLURM_CPUS_PER_TASK"));
    if (given >= 2)
        return given;
    long on_node = env_long(get("SLURM_CPUS_ON_NODE"));
    long tasks = env_long(get("SLURM_NTASKS_PER_NODE"));
    if (tasks <= 0)
        tasks = env_long(get("SLURM_TASKS_PER_NODE"));
    return on_node > 0 && tasks > 0 ? on_node / tasks : 0;
}

/* Whether --srun-args sets the CPUs of a task or their binding: a word "-c", "-cN", "--cpus-per-task..." or
 * "--cpu-bind...". */
static bool sets_cpus(const char *args)
{
    for (const char *w = args; w && *w;) {
        w += strspn(w, " \t");
        size_t n = strcspn(w, " \t");
        if ((n >= 2 && strncmp(w, "-c", 2) == 0 && (n == 2 || (w[2] >= '0' && w[2] <= '9'))) ||
            strncmp(w, "--cpus-per-task", 15) == 0 || strncmp(w, "--cpu-bind", 10) == 0)
            return true;
        w += n;
    }
    return false;
}

/* Slurm binds each task of `--ntasks-per-node=8` to one CPU by default (the step allocates one CPU per task):
 * NCCL's proxy thread then shares it with the main thread (issue 40, finding 6). Each task asks for its
 * share of the node's CPUs (--cpus-per-task, computed above) and is not bound inside the step
 * (--cpu-bind=none: srun(1)), so that NCCL binds its threads to its GPU's local CPUs among them
 * (mpirun_unbound says why). Left to the operator when --srun-args sets either, and left out where no more
 * than one CPU per task is known (the programs then say ENV_CPU_MASK_NARROW). */
static int add_srun_binding(ga_getenv_fn get, const suite_launch_in *in, suite_launch *out, char *err,
                            size_t errlen)
{
    long cpus = slurm_cpus_per_task(get);
    if (cpus < 2 || sets_cpus(in->srun_args))
        return 0;
    if (add_word(out, err, errlen, "--cpus-per-task=%s%d", "", (int)cpus) || WORD("--cpu-bind=none"))
        return -1;
    return 0;
}

/* --srun-args is split at blanks, as a shell would without quotes; quotes and backslashes are refused rather
 * than passed on literally to srun, where they would mean something else than the operator typed. */
static int add_srun_extras(const suite_launch_in *in, suite_launch *out, char *err, size_t errlen)
{
    out->extra_first = out->argc;
    if (in->srun_args) {
        if (strpbrk(in->srun_args, "'\"\\")) {
            snprintf(err, errlen,
                     "--srun-args: quotes and backslashes are not interpreted; give options "
                     "without them (it is split at blanks)");
            return -2;
        }
        char buf[4096];
        if (strlen(in->srun_args) >= sizeof buf) {
            snprintf(err, errlen, "--srun-args: longer than %zu characters", sizeof buf - 1);
            return -2;
        }
        snprintf(buf, sizeof buf, "%s", in->srun_args);
        char *save = NULL;
        for (char *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
            if (WORD(w))
                return -1;
    }
    if (in->container_image) {
        if (!*in->container_image || strpbrk(in->container_image, " \t\n")) {
            snprintf(err, errlen, "--container-image: '%s' is not an image name", in->container_image);
            return -2;
        }
        if (add_word(out, err, errlen, "--container-image=%s", in->container_image, 0))
            return -1;
    }
    out->extra_n = out->argc - out->extra_first;
    return 0;
}

int suite_launch_plan(ga_getenv_fn get, const suite_launch_in *in, suite_launch *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->np = in->np;
    const char *slurm_job = get("SLURM_JOB_ID");
    const char *op_hostfile = get("OMPI_MCA_orte_default_hostfile");

    if ((in->srun_args || in->container_image) && !nonempty(in->hostfile) && !nonempty(slurm_job)) {
        snprintf(err, errlen, "--%s applies to srun, and this is not a Slurm allocation (no SLURM_JOB_ID)",
                 in->srun_args ? "srun-args" : "container-image");
        return -2;
    }
    if ((in->srun_args || in->container_image) && nonempty(in->hostfile)) {
        snprintf(err, errlen, "--%s applies to srun, and --hostfile launches with mpirun",
                 in->srun_args ? "srun-args" : "container-image");
        return -2;
    }
    if (nonempty(in->hostfile)) {
        out->kind = SUITE_LAUNCH_HOSTFILE;
        snprintf(out->detail, sizeof out->detail, "mpirun with hostfile %s%s", in->hostfile,
                 in->np ? "" : ", one rank per slot");
        return add_mpirun(in, out, in->hostfile, err, errlen);
    }
    if (nonempty(slurm_job)) {
        out->kind = SUITE_LAUNCH_SLURM;
        snprintf(out->detail, sizeof out->detail, "srun --mpi=pmix in Slurm allocation %s%s", slurm_job,
                 in->np ? "" : ", the allocation's tasks");
        /* --kill-on-bad-exit: one rank dying ends the step instead of leaving the others in a collective. */
        if (WORD("srun") || WORD("--mpi=pmix") || WORD("--kill-on-bad-exit=1"))
            return -1;
        if (in->np > 0 && add_word(out, err, errlen, "--ntasks=%s%d", "", in->np))
            return -1;
        if (add_srun_binding(get, in, out, err, errlen))
            return -1;
        return add_srun_extras(in, out, err, errlen);
    }
    if (nonempty(op_hostfile) &&
        (strcmp(op_hostfile, MPIJOB_HOSTFILE) == 0 || nonempty(get("KUBERNETES_SERVICE_HOST")))) {
        out->kind = SUITE_LAUNCH_MPIJOB;
        snprintf(out->detail, sizeof out->detail, "mpirun in an MPIJob launcher, hostfile %s%s", op_hostfile,
                 in->np ? "" : ", one rank per slot");
        return add_mpirun(in, out, op_hostfile, err, errlen);
    }
    out->kind = SUITE_LAUNCH_LOCAL;
    if (out->np <= 0)
        out->np = in->local_gpus > 0 ? in->local_gpus : 2;
    snprintf(out->detail, sizeof out->detail, "mpirun on this machine, %d ranks (%s)", out->np,
             in->np               ? "--np"
             : in->local_gpus > 0 ? "one per GPU"
                                  : "no GPU: host paths");
    return add_mpirun(in, out, NULL, err, errlen);
}

int suite_local_gpu_count(ga_getenv_fn get)
{
    const char *visible = get("CUDA_VISIBLE_DEVICES");
    if (visible) {
        /* Set but empty, or "-1"/"none"-style values, hide every GPU. */
        int n = 0;
        bool in_item = false;
        for (const char *p = visible; *p; p++) {
            if (*p == ',')
                in_item = false;
            else if (*p != ' ' && !in_item) {
                in_item = true;
                n++;
            }
        }
        if (n == 1 && (strcmp(visible, "-1") == 0 || strcmp(visible, "none") == 0 ||
                       strcmp(visible, "NoDevFiles") == 0))
            n = 0;
        return n;
    }
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}
