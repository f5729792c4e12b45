/* The launcher rules of `gpuaccept run`, from fixture environments. */
#include <stdio.h>
#include <string.h>

#include "allocation.h"
#include "launch_plan.h"
#include "step_runner.h"

static const char *const *fixture_env;

static const char *fixture_getenv(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = fixture_env; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static int failures;

/* The plan's words joined by spaces must equal want. */
static void expect(const char *label, const char *const *env, suite_launch_in in, const char *want,
                   suite_launch_kind kind)
{
    fixture_env = env;
    suite_launch plan;
    char err[256], got[4096] = "";
    if (suite_launch_plan(fixture_getenv, &in, &plan, err, sizeof err) != 0) {
        printf("FAIL %s: %s\n", label, err);
        failures++;
        return;
    }
    for (int i = 0; i < plan.argc; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", plan.argv[i]);
    bool ok = strcmp(got, want) == 0 && plan.kind == kind;
    printf("%s %s: [%s] (%s)%s%s\n", ok ? "ok  " : "FAIL", label, got, plan.detail,
           ok ? "" : " want: ", ok ? "" : want);
    failures += !ok;
}

/* The plan must be refused as a usage error (-2), with a message naming want_in_err. */
static void expect_usage(const char *label, const char *const *env, suite_launch_in in,
                         const char *want_in_err)
{
    fixture_env = env;
    suite_launch plan;
    char err[256] = "";
    int rc = suite_launch_plan(fixture_getenv, &in, &plan, err, sizeof err);
    bool ok = rc == -2 && strstr(err, want_in_err) != NULL;
    printf("%s %s: rc %d, '%s'\n", ok ? "ok  " : "FAIL", label, rc, err);
    failures += !ok;
}

static void expect_status(const char *label, suite_step_result r, bool found, bool report, const char *want)
{
    suite_step_end end = suite_step_end_of(&r);
    const char *got = suite_step_status(&end, found, report);
    bool ok = strcmp(got, want) == 0;
    printf("%s classify %s: %s%s%s\n", ok ? "ok  " : "FAIL", label, got, ok ? "" : " want ", ok ? "" : want);
    failures += !ok;
}

int main(void)
{
    const char *none[] = {NULL};
    const char *slurm[] = {"SLURM_JOB_ID=4242", "SLURM_NTASKS=16", NULL};
    const char *mpijob[] = {"OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile",
                            "NCCL_DEBUG=WARN",
                            "NCCL_SOCKET_IFNAME=eth0",
                            "AWS_SECRET_ACCESS_KEY=x",
                            "OMP_NUM_THREADS=4",
                            NULL};
    const char *cvd[] = {"CUDA_VISIBLE_DEVICES=0,1,2,3", NULL};
    const char *cvd_empty[] = {"CUDA_VISIBLE_DEVICES=", NULL};
    char *const menv[] = {"OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile",
                          "NCCL_DEBUG=WARN",
                          "NCCL_SOCKET_IFNAME=eth0",
                          "AWS_SECRET_ACCESS_KEY=x",
                          "OMP_NUM_THREADS=4",
                          NULL};

    expect("no GPU, 2 cores, root", none, (suite_launch_in){.local_cores = 2, .as_root = true},
           "mpirun --allow-run-as-root -np 2", SUITE_LAUNCH_LOCAL);
    expect("no GPU, 1 core: oversubscribe", none, (suite_launch_in){.local_cores = 1},
           "mpirun -np 2 --oversubscribe", SUITE_LAUNCH_LOCAL);
    expect("8 GPUs, 64 cores", none, (suite_launch_in){.local_gpus = 8, .local_cores = 64},
           "mpirun -np 8 --bind-to none", SUITE_LAUNCH_LOCAL);
    expect("--np 4 beats the GPU count", none, (suite_launch_in){.np = 4, .local_gpus = 8, .local_cores = 64},
           "mpirun -np 4 --bind-to none", SUITE_LAUNCH_LOCAL);
    expect("Slurm allocation", slurm, (suite_launch_in){.local_gpus = 8, .local_cores = 64, .as_root = true},
           "srun --mpi=pmix --kill-on-bad-exit=1", SUITE_LAUNCH_SLURM);
    expect("Slurm with --np", slurm, (suite_launch_in){.np = 16, .local_cores = 64},
           "srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=16", SUITE_LAUNCH_SLURM);
    expect("MPIJob launcher: operator hostfile, NCCL_* and OMP_NUM_THREADS forwarded, secrets not", mpijob,
           (suite_launch_in){.local_cores = 2, .as_root = true, .envp = menv},
           "mpirun --allow-run-as-root --hostfile /etc/mpi/hostfile --bind-to none -x NCCL_DEBUG -x "
           "NCCL_SOCKET_IFNAME -x OMP_NUM_THREADS",
           SUITE_LAUNCH_MPIJOB);
    expect("--hostfile wins over Slurm", slurm,
           (suite_launch_in){.np = 16, .hostfile = "/tmp/hosts", .local_cores = 2},
           "mpirun --hostfile /tmp/hosts -np 16 --bind-to none", SUITE_LAUNCH_HOSTFILE);
    /* Every srun gets the operator's options and the Pyxis image, after the suite's own; the preflight
     * copies them from extra_first/extra_n. */
    expect("Slurm with --srun-args and --container-image", slurm,
           (suite_launch_in){.np = 8,
                             .local_cores = 2,
                             .srun_args = " --cpu-bind=none\t--gpus-per-task=1 ",
                             .container_image = "nvcr.io/nvidia/pytorch:25.01-py3"},
           "srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=8 --cpu-bind=none --gpus-per-task=1 "
           "--container-image=nvcr.io/nvidia/pytorch:25.01-py3",
           SUITE_LAUNCH_SLURM);
    fixture_env = slurm;
    suite_launch pl;
    char perr[256];
    int prc = suite_launch_plan(
        fixture_getenv, &(suite_launch_in){.srun_args = "-A x", .container_image = "img", .local_cores = 2},
        &pl, perr, sizeof perr);
    bool extra_ok = prc == 0 && pl.extra_n == 3 && strcmp(pl.argv[pl.extra_first], "-A") == 0 &&
                    strcmp(pl.argv[pl.extra_first + 2], "--container-image=img") == 0;
    printf("%s the srun extras are marked for the preflight (first %d, %d words)\n",
           extra_ok ? "ok  " : "FAIL", pl.extra_first, pl.extra_n);
    failures += !extra_ok;
    expect_usage("--srun-args outside Slurm", none, (suite_launch_in){.local_cores = 2, .srun_args = "-A x"},
                 "not a Slurm allocation");
    expect_usage("--container-image with a hostfile", slurm,
                 (suite_launch_in){.hostfile = "/tmp/hosts", .local_cores = 2, .container_image = "img"},
                 "--hostfile launches with mpirun");
    expect_usage("quotes in --srun-args", slurm,
                 (suite_launch_in){.local_cores = 2, .srun_args = "--export='A B'"}, "quotes");
    expect_usage("an image name with a blank", slurm,
                 (suite_launch_in){.local_cores = 2, .container_image = "a b"}, "not an image name");

    /* Issue 40, finding 6: a rank is never held to one CPU that NCCL's proxy thread must share. Slurm gives
     * each task its share of the node's CPUs, unbound inside the step, so that NCCL binds its threads to the
     * GPU's local CPUs; mpirun leaves GPU ranks unbound for the same reason (Open MPI binds 2 ranks to a core
     * each and more to alternate sockets). (Before the fix: srun with no --cpus-per-task, mpirun with its
     * default binding.) */
    const char *dgx[] = {"SLURM_JOB_ID=4242", "SLURM_CPUS_ON_NODE=224", "SLURM_NTASKS_PER_NODE=8",
                         "SLURM_TASKS_PER_NODE=8(x2)", NULL};
    const char *dgx_tpn[] = {"SLURM_JOB_ID=4242", "SLURM_CPUS_ON_NODE=224", "SLURM_TASKS_PER_NODE=8(x64)",
                             NULL};
    const char *dgx_cpt[] = {"SLURM_JOB_ID=4242", "SLURM_CPUS_ON_NODE=224", "SLURM_NTASKS_PER_NODE=8",
                             "SLURM_CPUS_PER_TASK=16", NULL};
    const char *narrow[] = {"SLURM_JOB_ID=4242", "SLURM_CPUS_ON_NODE=8", "SLURM_NTASKS_PER_NODE=8", NULL};
    expect("Slurm, 8 tasks on a 224-CPU node: 28 CPUs each, unbound in the step", dgx,
           (suite_launch_in){.local_cores = 224},
           "srun --mpi=pmix --kill-on-bad-exit=1 --cpus-per-task=28 --cpu-bind=none", SUITE_LAUNCH_SLURM);
    expect("Slurm, tasks per node from SLURM_TASKS_PER_NODE", dgx_tpn, (suite_launch_in){.local_cores = 224},
           "srun --mpi=pmix --kill-on-bad-exit=1 --cpus-per-task=28 --cpu-bind=none", SUITE_LAUNCH_SLURM);
    expect("Slurm, the job's own --cpus-per-task (srun does not inherit it)", dgx_cpt,
           (suite_launch_in){.np = 16, .local_cores = 224},
           "srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=16 --cpus-per-task=16 --cpu-bind=none",
           SUITE_LAUNCH_SLURM);
    expect("Slurm, one CPU per task allocated: nothing to give", narrow, (suite_launch_in){.local_cores = 8},
           "srun --mpi=pmix --kill-on-bad-exit=1", SUITE_LAUNCH_SLURM);
    expect("Slurm, the operator's -c wins", dgx, (suite_launch_in){.local_cores = 224, .srun_args = "-c 4"},
           "srun --mpi=pmix --kill-on-bad-exit=1 -c 4", SUITE_LAUNCH_SLURM);
    expect("Slurm, the operator's --cpu-bind wins", dgx,
           (suite_launch_in){.local_cores = 224, .srun_args = "--cpu-bind=cores --container-mounts=/a:/a"},
           "srun --mpi=pmix --kill-on-bad-exit=1 --cpu-bind=cores --container-mounts=/a:/a",
           SUITE_LAUNCH_SLURM);
    expect("Slurm, --container-mounts is not -c", dgx,
           (suite_launch_in){.local_cores = 224, .srun_args = "--container-mounts=/a:/a"},
           "srun --mpi=pmix --kill-on-bad-exit=1 --cpus-per-task=28 --cpu-bind=none --container-mounts=/a:/a",
           SUITE_LAUNCH_SLURM);
    expect("8 GPUs here: ranks unbound, NCCL binds its threads near each GPU", none,
           (suite_launch_in){.local_gpus = 8, .local_cores = 224}, "mpirun -np 8 --bind-to none",
           SUITE_LAUNCH_LOCAL);
    expect("2 GPUs here: not one core each (Open MPI's default for 2 ranks)", none,
           (suite_launch_in){.local_gpus = 2, .local_cores = 64}, "mpirun -np 2 --bind-to none",
           SUITE_LAUNCH_LOCAL);
    char *const no_env[] = {NULL};
    expect("a hostfile: unbound on every node", none,
           (suite_launch_in){.hostfile = "/tmp/hosts", .local_cores = 2, .envp = no_env},
           "mpirun --hostfile /tmp/hosts --bind-to none", SUITE_LAUNCH_HOSTFILE);

    fixture_env = cvd;
    int n = suite_local_gpu_count(fixture_getenv);
    printf("%s CUDA_VISIBLE_DEVICES=0,1,2,3 -> %d GPUs\n", n == 4 ? "ok  " : "FAIL", n);
    failures += n != 4;
    fixture_env = cvd_empty;
    n = suite_local_gpu_count(fixture_getenv);
    printf("%s CUDA_VISIBLE_DEVICES= -> %d GPUs\n", n == 0 ? "ok  " : "FAIL", n);
    failures += n != 0;

    suite_step_result r = {.started = true, .exit_code = 0};
    expect_status("exit 0 with report", r, true, true, "pass");
    expect_status("exit 0 without report", r, true, false, "crashed");
    r.exit_code = 1;
    expect_status("exit 1 with report", r, true, true, "fail");
    r.exit_code = 3;
    expect_status("exit 3", r, true, false, "env_error");
    r.exit_code = 4;
    expect_status("exit 4 (the program's watchdog)", r, true, false, "timeout");
    r.exit_code = 139;
    expect_status("exit 139 (mpirun: a rank got SIGSEGV)", r, true, false, "crashed");
    r.exit_code = -1;
    r.signal = 9;
    expect_status("killed by a signal", r, true, false, "crashed");
    r.timed_out = true;
    expect_status("killed at the deadline", r, true, false, "timeout");
    expect_status("no program", r, false, false, "missing");
    /* squeue's %L (squeue(1): days-hours:minutes:seconds; NOT_SET, UNLIMITED): the time left in seconds */
    static const struct {
        const char *text;
        double want;
    } left[] = {{"4:00", 240},     {"1:02:03", 3723}, {"2-00:00:01", 172801}, {"45", 45},
                {"UNLIMITED", -1}, {"NOT_SET", -1},   {"1:xx", -1},           {"", -1}};
    for (size_t i = 0; i < sizeof left / sizeof *left; i++)
        if (suite_alloc_parse_left(left[i].text) != left[i].want) {
            printf("FAIL time left '%s': %g, want %g\n", left[i].text, suite_alloc_parse_left(left[i].text),
                   left[i].want);
            failures++;
        }
    return failures ? 1 : 0;
}
