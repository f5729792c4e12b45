#!/usr/bin/env bash
# Runs the gpuaccept suite inside a Slurm allocation through `gpuaccept run`, the one runner: the same
# program order, step timeouts, per-node preflight, suite_run.json and merged summary as everywhere else,
# and the job's exit status is the merged verdict (sacct shows a baseline regression as exit 1). The
# sbatch scripts beside this file call it; it also works from salloc.
# Knobs (environment variables; sbatch passes the submitting shell's environment to the job):
#   GA_PREFIX          install prefix holding bin/gpuaccept and bin/<program>   [/opt/gpuaccept]
#   GA_BIN_DIR         where they are, e.g. a build tree's build/bin            [$GA_PREFIX/bin]
#   GA_PROGRAMS        programs to run (gpuaccept run --only), space or comma separated   [the suite's]
#   GA_ARGS            extra arguments for gpuaccept run, e.g. "--quick --step-timeout 900"   [none]
#   GA_REPORT_DIR      where reports go; must be on a file system every node shares
#                                                         [$SLURM_SUBMIT_DIR/gpuaccept-$SLURM_JOB_ID]
#   GA_MPI             srun's MPI plugin, checked before anything runs; gpuaccept run uses pmix   [pmix]
#   GA_COMMAND         an MPI program to run per task instead of the suite (a site's own check), one srun
#                      step; it gets --report-dir DIR and GA_ARGS appended, GA_SRUN_ARGS apply   [unset]
#   GA_SRUN_ARGS       extra srun options for every srun (gpuaccept run --srun-args; split at blanks)   [none]
#   GA_CONTAINER_IMAGE Pyxis image every srun runs in (--container-image); the report directory is mounted
#                      at the same path, plus GA_CONTAINER_MOUNTS (src:dst,...). The image must hold the
#                      programs and gpuaccept at GA_BIN_DIR, as this host does                          [unset]
#   GA_MERGE           after GA_COMMAND, `gpuaccept merge` the reports (1) or not (0)                [1]
# Exit status: gpuaccept run's, the verdict (0 pass, 1 a check failed, 2 usage, 3 environment, 4 timeout,
# 5 crash); 3 when srun lacks the MPI plugin; 2 outside an allocation.
set -euo pipefail

say() { echo "gpuaccept-srun: $*"; }
[ -n "${SLURM_JOB_ID:-}" ] || {
    say "not inside a Slurm allocation: submit one of the sbatch scripts, or use salloc" >&2
    exit 2
}
bin_dir=${GA_BIN_DIR:-${GA_PREFIX:-/opt/gpuaccept}/bin}
report_dir=${GA_REPORT_DIR:-${SLURM_SUBMIT_DIR:-$PWD}/gpuaccept-$SLURM_JOB_ID}
mpi=${GA_MPI:-pmix}
read -r -a args <<<"${GA_ARGS:-}"
read -r -a srun_opts <<<"${GA_SRUN_ARGS:-}"

# Without the plugin the tasks cannot form one MPI job: Open MPI stops in MPI_Init, other builds start N
# singletons that each believe they are rank 0 of 1. The programs refuse those too; this names the fix.
if ! srun --mpi=list 2>&1 | grep -qw -- "$mpi"; then
    say "srun has no '$mpi' MPI plugin (srun --mpi=list); on Debian/Ubuntu install libpmix-dev" >&2
    exit 3
fi

# --kill-on-bad-exit: one rank dying ends the step instead of leaving the others in a collective.
srun_opts=(--mpi="$mpi" --kill-on-bad-exit=1 "${srun_opts[@]}")
# The container writes its reports where this host merges them: the report directory, at the same path.
mounts=()
if [ -n "${GA_CONTAINER_IMAGE:-}" ]; then
    mounts=(--container-mounts="$report_dir:$report_dir${GA_CONTAINER_MOUNTS:+,$GA_CONTAINER_MOUNTS}")
    srun_opts+=(--container-image="$GA_CONTAINER_IMAGE" "${mounts[@]}")
fi

if [ -z "${GA_COMMAND:-}" ]; then
    [ -x "$bin_dir/gpuaccept" ] || {
        say "no $bin_dir/gpuaccept: set GA_PREFIX or GA_BIN_DIR" >&2
        exit 3
    }
    run=("$bin_dir/gpuaccept" run --report-dir "$report_dir")
    [ -z "${GA_PROGRAMS:-}" ] || run+=(--only "$(tr ' ' ',' <<<"$GA_PROGRAMS")")
    # gpuaccept run starts every srun itself (preflight and steps): it gets the options to add to each.
    extra="${GA_SRUN_ARGS:-}${mounts:+ ${mounts[*]}}"
    extra=${extra# }
    [ -z "$extra" ] || run+=(--srun-args "$extra")
    [ -z "${GA_CONTAINER_IMAGE:-}" ] || run+=(--container-image "$GA_CONTAINER_IMAGE")
    # The report directory must exist on this host before Pyxis can mount it.
    [ -z "${GA_CONTAINER_IMAGE:-}" ] || mkdir -p "$report_dir"
    say "job $SLURM_JOB_ID: ${SLURM_JOB_NUM_NODES:-?} node(s), ${SLURM_NTASKS:-?} task(s): ${run[*]} ${args[*]}"
    # The programs beside gpuaccept; the exit status is the verdict.
    GPUACCEPT_BIN_DIR=$bin_dir exec "${run[@]}" "${args[@]}"
fi
steps=("$GA_COMMAND")

# CPUs for each task (issue 40, finding 6): Slurm gives a task of --ntasks-per-node=8 one CPU unless asked,
# and NCCL's proxy thread, which posts every network transfer, would share it with the main thread. Each task
# gets its share of the node's CPUs, unbound inside the step so that NCCL binds its threads to its GPU's
# local CPUs (src/graph/topo.cc, ncclTopoGetCpuAffinity). srun does not inherit the job's --cpus-per-task
# since Slurm 22.05 (sbatch(1)). gpuaccept run adds the same to the sruns it starts (suite/run/launch_plan.c);
# GA_SRUN_ARGS with -c, --cpus-per-task or --cpu-bind replaces it.
cpus=${SLURM_CPUS_PER_TASK:-0}
if [ "$cpus" -lt 2 ]; then
    tasks=${SLURM_NTASKS_PER_NODE:-${SLURM_TASKS_PER_NODE:-0}}
    tasks=${tasks%%[!0-9]*}
    cpus=0
    [ "${tasks:-0}" -gt 0 ] && cpus=$((${SLURM_CPUS_ON_NODE:-0} / tasks))
fi
if [ "$cpus" -ge 2 ] && ! grep -qE '(^| )(-c|-c[0-9]+|--cpus-per-task[= ]?.*|--cpu-bind.*)( |$)' <<<"${GA_SRUN_ARGS:-}"; then
    srun_opts+=(--cpus-per-task="$cpus" --cpu-bind=none)
fi

mkdir -p "$report_dir"
say "job $SLURM_JOB_ID: ${SLURM_JOB_NUM_NODES:-?} node(s), ${SLURM_NTASKS:-?} task(s), reports in $report_dir"
status=0
for step in "${steps[@]}"; do
    read -r -a cmd <<<"$step"
    say "srun ${srun_opts[*]} ${cmd[*]} --report-dir $report_dir ${args[*]}"
    rc=0
    srun "${srun_opts[@]}" "${cmd[@]}" --report-dir "$report_dir" "${args[@]}" || rc=$?
    say "${cmd[0]##*/}: exit $rc"
    [ "$status" -ne 0 ] || status=$rc
done
# The site's own check's reports, merged by the front-end (no MPI program: one copy, on the batch host).
if [ "${GA_MERGE:-1}" = 1 ]; then
    if [ -x "$bin_dir/gpuaccept" ]; then
        rc=0
        "$bin_dir/gpuaccept" merge --report-dir "$report_dir" || rc=$?
        say "gpuaccept merge: exit $rc; summary in $report_dir/summary.html"
    else
        say "no $bin_dir/gpuaccept: reports not merged (GA_MERGE=0 to silence)"
    fi
fi
say "done: exit $status; reports in $report_dir"
exit "$status"
