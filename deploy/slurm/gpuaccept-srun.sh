#!/usr/bin/env bash
# Runs the gpuaccept programs inside a Slurm allocation, one `srun --mpi=pmix` step per program, every
# report in one shared directory. The sbatch scripts beside this file call it; it also works from salloc.
# Knobs (environment variables; sbatch passes the submitting shell's environment to the job):
#   GA_PREFIX          install prefix holding bin/<program>            [/opt/gpuaccept]
#   GA_BIN_DIR         where the programs are, e.g. a build tree's build/bin      [$GA_PREFIX/bin]
#   GA_PROGRAMS        programs to run, in order    [the suite's, in its order: gpuaccept run --list-programs]
#   GA_COMMAND         an MPI program to run per task instead of the programs (a site's own check); it
#                      gets --report-dir DIR and GA_ARGS appended                                  [unset]
#   GA_MERGE           merge the reports into summary.json/.md/.html with `gpuaccept merge` at the end
#                      (1), or not (0)                                                              [1]
#   GA_ARGS            extra arguments for every program, e.g. "--quick --timeout 600"              [none]
#   GA_REPORT_DIR      where reports go; must be on a file system every node shares
#                                                         [$SLURM_SUBMIT_DIR/gpuaccept-$SLURM_JOB_ID]
#   GA_MPI             srun's MPI plugin; the suite's Open MPI needs pmix                          [pmix]
#   GA_SRUN_ARGS       extra srun options, e.g. "--gpu-bind=closest --cpu-bind=cores"              [none]
#   GA_CONTAINER_IMAGE run the steps in this image through Pyxis (--container-image)               [unset]
#   GA_CONTAINER_MOUNTS extra Pyxis mounts, comma separated; the report directory is always mounted [none]
# Exit status: 0 when every step passed, else the exit status of the first step that failed
# (1 check failed, 3 environment, 4 timeout ...; see each program's --help); 3 when srun lacks the MPI
# plugin or a program is missing.
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
if [ -n "${GA_CONTAINER_IMAGE:-}" ]; then
    srun_opts+=(--container-image="$GA_CONTAINER_IMAGE"
        --container-mounts="$report_dir:$report_dir${GA_CONTAINER_MOUNTS:+,$GA_CONTAINER_MOUNTS}")
fi

if [ -n "${GA_COMMAND:-}" ]; then
    steps=("$GA_COMMAND")
else
    if [ -n "${GA_PROGRAMS:-}" ]; then
        read -r -a programs <<<"$GA_PROGRAMS"
    else
        # The suite's own list and order (launch/programs.c), from the front-end installed with the programs.
        list_programs=("$bin_dir/gpuaccept")
        [ -z "${GA_CONTAINER_IMAGE:-}" ] || list_programs=(srun --ntasks=1 --nodes=1
            --container-image="$GA_CONTAINER_IMAGE" gpuaccept)
        listing=$("${list_programs[@]}" run --list-programs) || {
            say "cannot list the suite's programs with ${list_programs[*]} run --list-programs: set GA_PROGRAMS" >&2
            exit 3
        }
        mapfile -t programs < <(cut -f2 <<<"$listing")
    fi
    steps=()
    for p in "${programs[@]}"; do
        # Inside a container image the programs are not on this host to look at.
        if [ -z "${GA_CONTAINER_IMAGE:-}" ] && [ ! -x "$bin_dir/$p" ]; then
            say "no program $bin_dir/$p: set GA_PREFIX or GA_BIN_DIR, or GA_PROGRAMS" >&2
            exit 3
        fi
        steps+=("$bin_dir/$p")
    done
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
# One verdict for people: the suite front-end merges the reports (it is no MPI program: one copy, on the
# batch host, or in the image through Pyxis).
if [ "${GA_MERGE:-1}" = 1 ]; then
    merge=()
    if [ -n "${GA_CONTAINER_IMAGE:-}" ]; then
        merge=(srun --ntasks=1 --nodes=1 --container-image="$GA_CONTAINER_IMAGE"
            --container-mounts="$report_dir:$report_dir${GA_CONTAINER_MOUNTS:+,$GA_CONTAINER_MOUNTS}" gpuaccept)
    elif [ -x "$bin_dir/gpuaccept" ]; then
        merge=("$bin_dir/gpuaccept")
    fi
    if [ ${#merge[@]} -gt 0 ]; then
        rc=0
        "${merge[@]}" merge --report-dir "$report_dir" || rc=$?
        say "gpuaccept merge: exit $rc; summary in $report_dir/summary.html"
    else
        say "no $bin_dir/gpuaccept: reports not merged (GA_MERGE=0 to silence)"
    fi
fi
say "done: exit $status; reports in $report_dir"
exit "$status"
