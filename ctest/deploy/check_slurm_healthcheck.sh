#!/usr/bin/env bash
# Issue 41, item 5: `gpuaccept node-check --drain` as a real Slurm's HealthCheckProgram. A private one-node
# Slurm (local_slurm.sh) runs the shipped deploy/slurm/gpuaccept-healthcheck.sh every few seconds
# (HealthCheckInterval), given node_health's replay options: a healthy sysfs tree and kernel log while $state/case says "pass", a DGX tree
# with a compute port down and a log with Xid 79 once the test writes "fail". The node must stay idle, then
# be DRAINED with a "gpuaccept: HEALTH_..." reason, then be resumed by node-check once healthy again (only
# a reason gpuaccept set is lifted). Slurm ignores the program's exit code: the program drains the node
# itself (slurm.conf(5), HealthCheckProgram).
#   check_slurm_healthcheck.sh BIN_DIR SOURCE_DIR
set -uo pipefail
bin_dir=$1 src=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/local_slurm.sh"

fails=0
check() { # check "what" command...
    local what=$1
    shift
    if "$@"; then echo "ok  : $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

state=$(mktemp -d "${TMPDIR:-/tmp}/ga-healthcheck.XXXXXX") || exit 1
echo pass >"$state/case"
trees=$src/ctest/node_health/data/trees logs=$src/ctest/node_health/data/logs
cat >"$state/healthcheck.sh" <<SH
#!/bin/sh
# The shipped wrapper, with replayed state instead of the live node's.
if [ "\$(cat $state/case)" = fail ]; then tree=$trees/dgx_port_down log=$logs/xid79.log
else tree=$trees/healthy log=$logs/healthy.log; fi
echo "node=\${SLURMD_NODENAME:-unset}" >>$state/runs.log
# This test's private Slurm (a site's scontrol reads /etc/slurm/slurm.conf): slurmd passes no SLURM_CONF on.
[ ! -r $state/slurm_conf ] || export SLURM_CONF="\$(cat $state/slurm_conf)"
GA_HEALTHCHECK_CONF=/dev/null GA_BIN_DIR=$bin_dir GA_NODE_HEALTH_ARGS="--sysfs-root \$tree --kernel-log \$log" \
    exec $src/deploy/slurm/gpuaccept-healthcheck.sh >>$state/runs.log 2>&1
SH
chmod 755 "$state/healthcheck.sh"

cleanup() {
    ga_slurm_stop
    rm -rf "$state"
}
trap cleanup EXIT
export GA_SLURM_EXTRA_CONF="HealthCheckProgram=$state/healthcheck.sh
HealthCheckInterval=2"
GA_SLURM_WAIT=40 ga_slurm_start || exit 1
echo "$SLURM_CONF" >"$state/slurm_conf"

node_state() { sinfo -h -N -o %T | head -n 1; }
drained() { node_state | grep -Eq '^drain'; }
idle() { [ "$(node_state)" = idle ]; }
verdicts() { grep -E '^gpuaccept node-check: (PASS|FAIL|ERROR) ' "$state/runs.log" 2>/dev/null; }
runs() { verdicts | wc -l; }
export state
export -f verdicts

# Two runs of the program on the healthy state (the one before registration, then a periodic one).
two_runs() { [ "$(runs)" -ge 2 ]; }
GA_SLURM_WAIT=20 ga_slurm_wait_for two_runs
check "the health check ran at least twice on the healthy state ($(runs) runs)" test "$(runs)" -ge 2
check "each run printed PASS" bash -c "! verdicts | grep -v ' PASS '"
check "the healthy node stays idle (state $(node_state))" idle

echo fail >"$state/case"
t0=$SECONDS
GA_SLURM_WAIT=30 ga_slurm_wait_for drained
echo "drained after $((SECONDS - t0)) s; state $(node_state); reason: $(sinfo -h -R -o %E)"
check "the failing node is drained" drained
check "the reason names gpuaccept and the failure" bash -c "sinfo -h -R -o %E | grep -q '^gpuaccept: HEALTH_'"
check "the failing run printed one FAIL line" grep -q '^gpuaccept node-check: FAIL .*HEALTH_' "$state/runs.log"

echo pass >"$state/case"
GA_SLURM_WAIT=30 ga_slurm_wait_for idle
check "healthy again, the node gpuaccept drained is resumed (state $(node_state))" idle

echo "--- health check runs:"
cat "$state/runs.log"
[ "$fails" -eq 0 ] && echo "slurm_healthcheck: all checks passed" || echo "slurm_healthcheck: $fails failed"
exit $((fails > 0))
