#!/usr/bin/env bash
# Issue 41, item 5: `gpuaccept node-check --health` checks this node alone, with no MPI job, in seconds, and
# exits as NHC does: 0 healthy, 1 unhealthy, with one line saying why; its own bad options and node_health's
# are exit 2. It must work in slurmd's HealthCheckProgram environment, which has no PATH at all (an Open MPI
# 4 singleton then failed in MPI_Init). Without options it still answers the preflight's "[NODE]" line.
#   check_node_check.sh BIN_DIR SOURCE_DIR
set -uo pipefail
bin_dir=$1 src=$2
ga=$bin_dir/gpuaccept
trees=$src/ctest/node_health/data/trees logs=$src/ctest/node_health/data/logs
fails=0
check() { # check "what" command...
    local what=$1
    shift
    if "$@"; then echo "ok  : $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# run ENV... -- ARGS: node-check under `env -i ENV`, rc and the seconds it took in $rc and $took
run() {
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local t0=$SECONDS
    rc=0
    env -i GPUACCEPT_BIN_DIR="$bin_dir" "${envs[@]}" "$ga" node-check "$@" >"$out" 2>"$err" || rc=$?
    took=$((SECONDS - t0))
    echo "  node-check $*: exit $rc in ${took}s: $(cat "$out") $(cat "$err")"
}
one_line() { [ "$(wc -l <"$1")" -eq 1 ]; }

run -- --health -- --sysfs-root "$trees/healthy" --kernel-log "$logs/healthy.log"
check "a healthy node: exit 0 (got $rc)" test "$rc" -eq 0
check "in under 10 s (${took}s), with no PATH (slurmd's HealthCheckProgram environment)" test "$took" -lt 10
check "one line: PASS" bash -c "grep -q '^gpuaccept node-check: PASS ' '$out' && [ \$(wc -l <'$out') -eq 1 ]"

run PATH=/usr/bin:/bin -- --health -- --sysfs-root "$trees/dgx_port_down" --kernel-log "$logs/xid79.log"
check "Xid 79 and a compute port down: exit 1 (got $rc)" test "$rc" -eq 1
check "in under 10 s (${took}s)" test "$took" -lt 10
check "one line naming the first failure and the count of the others" \
    grep -q '^gpuaccept node-check: FAIL .*: HEALTH_XID Xid 79 .*(and 1 more failure)$' "$out"
check "only that line on stdout" one_line "$out"

# Inside a job step, node_health must still start alone (the step's launch variables are dropped).
run PATH=/usr/bin:/bin SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_JOB_ID=7 OMPI_COMM_WORLD_SIZE=4 -- \
    --health -- --sysfs-root "$trees/healthy" --kernel-log "$logs/healthy.log"
check "inside a job step's environment: exit 0 (got $rc)" test "$rc" -eq 0

run PATH=/usr/bin:/bin -- --health -- --bogus
check "a bad node_health option: exit 2 (got $rc), one line" bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$err') -eq 1 ]"
run PATH=/usr/bin:/bin -- --label -- --sysfs-root "$trees/healthy"
check "--label without NODE_NAME or --node: exit 2 (got $rc)" test "$rc" -eq 2
run PATH=/usr/bin:/bin -- --bogus x
check "a bad option: exit 2 (got $rc)" test "$rc" -eq 2
run PATH=/usr/bin:/bin --
check "no option: the preflight's [NODE] line, exit 0" bash -c "[ $rc -eq 0 ] && grep -q '^\[NODE\] .* gpus=' '$out'"

[ "$fails" -eq 0 ] && echo "node_check: all checks passed" || echo "node_check: $fails failed"
exit $((fails > 0))
