#!/usr/bin/env bash
# End to end on a real (private, one-node) Slurm: the shipped sbatch script runs `gpuaccept run`, which runs
# env_audit in host mode with 4 tasks through srun --mpi=pmix and its report must say so; without
# GA_PROGRAMS it runs the suite's programs in the registry's order; a task that fails on one node gets that
# node named and the job's exit status is the verdict; srun without PMIx must be refused.
#   check_slurm_sbatch.sh BIN_DIR SOURCE_DIR PYTHON
set -uo pipefail
bin_dir=$1 src=$2 python=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/local_slurm.sh"

fails=0
check() { # check "what" command...
    local what=$1
    shift
    if "$@"; then echo "ok  : $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

no_passing_report() { ! grep -qs '"result": *"pass"' "$1"; }

trap ga_slurm_stop EXIT
ga_slurm_start || exit 1
work=$GA_SLURM_DIR/submit
mkdir -p "$work" && cd "$work" || exit 1

check "srun --mpi=list offers pmix (Debian: libpmix-dev)" bash -c 'srun --mpi=list 2>&1 | grep -qw pmix'

# Host mode: no GPUs requested, 4 tasks on the one node. sbatch --wait returns the job's exit status;
# timeout bounds it (ga_slurm_stop cancels whatever is left).
rc=0
GA_BIN_DIR=$bin_dir GA_PROGRAMS=env_audit GA_ARGS="--quick --step-timeout 90" GA_REPORT_DIR=$work/reports \
    timeout 120 sbatch --wait --quiet --ntasks-per-node=4 --gpus-per-node=0 --time=5 \
    --output="$work/job-%j.out" "$src/deploy/slurm/one-node.sbatch" || rc=$?
cat "$work"/job-*.out
check "one-node.sbatch exits 0 (got $rc)" test "$rc" -eq 0
check "the job log ends in [RESULT] SUCCESS" grep -q '^\[RESULT\] SUCCESS' "$work"/job-*.out
check "env_audit.json: 4 ranks on 1 node, launched by srun --mpi=pmix, verdict pass" "$python" - \
    "$work/reports/env_audit.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print({k: r.get(k) for k in ("world_size", "node_count", "launcher", "verdict")})
assert r["world_size"] == 4 and r["node_count"] == 1
assert r["launcher"]["kind"] == "srun" and "pmix" in r["launcher"]["detail"]
assert sorted(x["rank"] for x in r["nodes"][0]["ranks"]) == [0, 1, 2, 3]
assert r["verdict"]["result"] == "pass"
PY

# Issue 40, finding 6: each task has its share of the node's CPUs (8 CPUs in local_slurm.sh's node, 4 tasks:
# 2 each), unbound inside the step, so that NCCL's proxy thread does not share one CPU with the rank. (Before
# the fix: srun had neither option, and each task one CPU.)
check "the step's srun gives each task 2 CPUs, unbound in the step" "$python" - "$work/reports/suite_run.json" <<'PY'
import json, sys
st = next(x for x in json.load(open(sys.argv[1]))["steps"] if x["program"] == "env_audit")
print(st.get("command"))
assert "--cpus-per-task=2 --cpu-bind=none" in " ".join(st["command"])
PY

check "the reports were merged into summary.json with env_audit's pass" "$python" - \
    "$work/reports/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
steps = {st["program"]: st for st in s["steps"]}
print({k: v.get("status") for k, v in steps.items()})
assert steps["env_audit"]["status"] == "pass"
PY

# Without GA_PROGRAMS gpuaccept run takes the suite's programs in the registry's order (suite/summary/programs.c);
# --dry-run prints each step without running it. The standard profile's plan on the host paths needs more
# than half an hour: the job asks for an hour (issue 41, item 4: a plan longer than the job is refused).
rc=0
GA_BIN_DIR=$bin_dir GA_ARGS="--dry-run" GA_REPORT_DIR=$work/listed timeout 120 sbatch --wait --quiet \
    --ntasks-per-node=1 --gpus-per-node=0 --time=60 --output="$work/listed-%j.out" \
    "$src/deploy/slurm/one-node.sbatch" || rc=$?
cat "$work"/listed-*.out
check "default programs: the job exits 0 (got $rc)" test "$rc" -eq 0
want=$("$bin_dir/gpuaccept" run --list-programs | cut -f2 | tr '\n' ' ')
got=$(sed -n 's/^\[SUITE\] step [0-9]*\/[0-9]* \([a-z0-9_]*\): starting.*/\1/p' "$work"/listed-*.out | tr '\n' ' ')
check "dry run: each step under srun --mpi=pmix" grep -q '^\[SUITE\]   srun --mpi=pmix' "$work"/listed-*.out
check "default programs: the registry's, in its order ('$got' = '$want')" test -n "$want" -a "$got" = "$want"

# The same plan in a job of 1 minute: the time left comes from the real squeue (%L), and the plan is refused
# before anything launches, exit 3, with the line that says what to do (issue 41, item 4).
rc=0
GA_BIN_DIR=$bin_dir GA_ARGS="--dry-run" GA_REPORT_DIR=$work/short timeout 120 sbatch --wait --quiet \
    --ntasks-per-node=1 --gpus-per-node=0 --time=1 --output="$work/short-%j.out" \
    "$src/deploy/slurm/one-node.sbatch" || rc=$?
cat "$work"/short-*.out
check "a plan longer than the job's time left: exit 3 (got $rc)" test "$rc" -eq 3
check "and the line says the time left, from squeue %L, and what to do" grep -qE \
    'gpuaccept run: the plan needs about [0-9]+ s .* has [0-9]+ s left \(squeue -o %L\): ask for more time' \
    "$work"/short-*.out
check "no step was started" bash -c "! grep -q '^\[SUITE\] step' '$work'/short-*.out"

# One task's program exits non-zero on one node: srun names the node and task, gpuaccept run marks that node
# abnormal, and the job's exit status (what sacct shows) is the merged verdict (srun reports the others'
# kill, so the step counts as crashed: 5).
fail_bin=$work/failbin
mkdir -p "$fail_bin"
ln -sf "$bin_dir/gpuaccept" "$fail_bin/gpuaccept"
printf '#!/bin/sh\nif [ "$SLURM_PROCID" = 1 ]; then echo "task 1 gives up" >&2; exit 3; fi\nexec %s "$@"\n' \
    "$bin_dir/env_audit" >"$fail_bin/env_audit"
chmod +x "$fail_bin/env_audit"
rc=0
GA_BIN_DIR=$fail_bin GA_PROGRAMS=env_audit GA_ARGS="--quick --step-timeout 60" GA_REPORT_DIR=$work/onefail \
    timeout 120 sbatch --wait --quiet --nodes=1 --ntasks-per-node=4 --gpus-per-node=0 --time=5 \
    --output="$work/onefail-%j.out" "$src/deploy/slurm/multi-node.sbatch" || rc=$?
cat "$work"/onefail-*.out
node=$(sinfo -h -o %N | head -1)
check "one task fails: the job fails (got $rc)" test "$rc" -ne 0
check "one task fails: $node and task 1 are named, the node is abnormal, the verdict is the exit status" \
    "$python" - "$work/onefail/summary.json" "$node" "$rc" <<'PY'
import json, sys
s, node, rc = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
st = next(x for x in s["steps"] if x["program"] == "env_audit")
print(st["status"], st.get("node"), s["abnormal_nodes"], s["verdict"]["exit_code"])
assert st["status"] in ("env_error", "crashed")
assert st["node"]["host"] == node and st["node"]["rank"] == 1 and st["node"]["source"] == "srun"
assert [a["host"] for a in s["abnormal_nodes"]] == [node]
assert s["verdict"]["exit_code"] == rc and rc in (3, 5)
PY

# Extra srun options and a Pyxis image reach every srun gpuaccept run starts (GA_SRUN_ARGS, GA_CONTAINER_IMAGE
# in the batch script). Pyxis is not installed here: the image is checked on the dry run's command line, the
# options on a real run too.
rc=0
GA_BIN_DIR=$bin_dir GA_PROGRAMS=env_audit GA_ARGS="--dry-run" GA_SRUN_ARGS="--cpu-bind=none" \
    GA_CONTAINER_IMAGE=example.org/gpuaccept:1 GA_REPORT_DIR=$work/pyxis timeout 120 sbatch --wait --quiet \
    --ntasks-per-node=2 --gpus-per-node=0 --time=5 --output="$work/pyxis-%j.out" \
    "$src/deploy/slurm/one-node.sbatch" || rc=$?
cat "$work"/pyxis-*.out
check "GA_CONTAINER_IMAGE with the suite: the job exits 0 (got $rc)" test "$rc" -eq 0
check "the step's srun gets the options, the report directory mounted and the image" grep -qF -- \
    "--kill-on-bad-exit=1 --cpu-bind=none --container-mounts=$work/pyxis:$work/pyxis --container-image=example.org/gpuaccept:1 $bin_dir/env_audit" \
    "$work"/pyxis-*.out
rc=0
GA_BIN_DIR=$bin_dir GA_PROGRAMS=env_audit GA_ARGS="--quick --step-timeout 90" GA_SRUN_ARGS="--cpu-bind=none" \
    GA_REPORT_DIR=$work/srunargs timeout 120 sbatch --wait --quiet --ntasks-per-node=2 --gpus-per-node=0 \
    --time=5 --output="$work/srunargs-%j.out" "$src/deploy/slurm/one-node.sbatch" || rc=$?
check "GA_SRUN_ARGS with the suite: a real run passes (got $rc)" test "$rc" -eq 0
check "and its srun had the option" "$python" - "$work/srunargs/suite_run.json" <<'PY'
import json, sys
st = next(x for x in json.load(open(sys.argv[1]))["steps"] if x["program"] == "env_audit")
print(st.get("command"))
assert st["status"] == "pass" and "--cpu-bind=none" in st["command"]
PY

# A step that hangs past its limit with tasks that ignore SIGTERM: killing srun on this host does not end
# them (slurmstepd started them, not srun), so gpuaccept run scancels the step. The next step lists the
# job's steps: the hung one must be gone, and nothing of it may be left on the machine after the job.
hang_bin=$work/hangbin
mkdir -p "$hang_bin"
ln -sf "$bin_dir/gpuaccept" "$hang_bin/gpuaccept"
cp "$(command -v sleep)" "$hang_bin/hang-$$"
printf '#!/bin/sh\ntrap "" TERM\nexec %s 300\n' "$hang_bin/hang-$$" >"$hang_bin/env_audit"
printf '#!/bin/sh\n[ "$SLURM_PROCID" = 0 ] && squeue -h -s -j "$SLURM_JOB_ID" -o "%%i %%j" >%s\nexit 3\n' \
    "$work/steps-after-hang" >"$hang_bin/mem_bw"
chmod +x "$hang_bin/env_audit" "$hang_bin/mem_bw"
rc=0
GA_BIN_DIR=$hang_bin GA_PROGRAMS="env_audit mem_bw" GA_ARGS="--step-timeout 10 --preflight-timeout 0" \
    GA_REPORT_DIR=$work/hang timeout 150 sbatch --wait --quiet --ntasks-per-node=2 --gpus-per-node=0 --time=5 \
    --output="$work/hang-%j.out" "$src/deploy/slurm/one-node.sbatch" || rc=$?
cat "$work"/hang-*.out
echo "steps while the next step ran:"; cat "$work/steps-after-hang"
check "the hung step timed out: the job exits 4 (got $rc)" test "$rc" -eq 4
check "gpuaccept run scancelled it" grep -q 'env_audit: scancel [0-9]*\.[0-9]' "$work"/hang-*.out
check "no step of the hung program is left in squeue -s" bash -c "[ -s '$work/steps-after-hang' ] && ! grep -q ' env_audit\$' '$work/steps-after-hang'"
check "nothing of the hung step is left on the machine" bash -c "! ps -eo args | grep -q '^$hang_bin/hang-$$ '"

# srun without PMIx. Debian's Open MPI 4.1 knows it was direct-launched and stops in MPI_Init itself.
rc=0
out=$(timeout 60 srun --mpi=none --ntasks=4 "$bin_dir/env_audit" --report-dir "$work/none" 2>&1) || rc=$?
check "srun --mpi=none: fails (got $rc)" test "$rc" -ne 0
check "srun --mpi=none: writes no report" test ! -e "$work/none/env_audit.json"
# An MPI that does not recognise the Slurm step (built without Slurm support, or a container that hides
# it) instead starts every task as a singleton: rank 0 of 1. Hiding the node list from Open MPI makes it
# do exactly that; the common library must then refuse to run 4 copies of rank 0 (exit 3).
rc=0
out=$(timeout 60 srun --mpi=none --ntasks=4 env -u SLURM_NODELIST -u SLURM_JOB_NODELIST \
    "$bin_dir/env_audit" --report-dir "$work/singletons" 2>&1) || rc=$?
echo "$out" | grep FATAL
check "singletons under srun: refused with exit 3 (got $rc)" test "$rc" -eq 3
check "singletons under srun: the message names the cause" grep -q 'copies of rank 0' <<<"$out"
check "singletons under srun: writes no passing report" no_passing_report "$work/singletons/env_audit.json"

# The runner names a missing MPI plugin itself rather than starting singletons (multi-node.sbatch on 1 node).
rc=0
GA_BIN_DIR=$bin_dir GA_PROGRAMS=env_audit GA_MPI=nosuch GA_REPORT_DIR=$work/nosuch timeout 60 sbatch --wait \
    --quiet --nodes=1 --ntasks-per-node=2 --gpus-per-node=0 --time=5 --output="$work/nosuch-%j.out" \
    "$src/deploy/slurm/multi-node.sbatch" || rc=$?
check "multi-node.sbatch with a missing plugin exits 3 (got $rc)" test "$rc" -eq 3
check "and says which plugin" grep -q "no 'nosuch' MPI plugin" "$work"/nosuch-*.out

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed; Slurm logs:"; tail -n 20 "$GA_SLURM_DIR"/log/*.log; }
exit $((fails != 0))
