#!/usr/bin/env bash
# Runs the launcher command of a rendered MPIJob the way the mpi-operator's launcher pod runs it: the
# command and env taken from the YAML (not retyped), a hostfile in the operator's format, and mpirun
# finding it through OMPI_MCA_orte_default_hostfile. env_audit runs in host mode with 4 ranks.
#   mpijob_launcher_test.sh BIN_DIR SOURCE_DIR PYTHON(with PyYAML)
# What differs from a cluster, and why: the operator's hostfile line is
#   <job>-worker-0.<job>.<namespace>.svc slots=4
# and here it is "localhost slots=4", since there is no cluster DNS and no worker sshd; the install prefix
# and report directory are rendered to point at the build tree and a temporary directory; and
# KUBERNETES_SERVICE_HOST, which the kubelet sets in every pod, is set to a name nothing connects to.
set -uo pipefail
bin_dir=$1 src=$2 python=$3
[ "$(basename "$bin_dir")" = bin ] || { echo "FAIL: $bin_dir is not a <prefix>/bin directory"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ga-mpijob.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {
    local what=$1
    shift
    if "$@"; then echo "ok  : $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

"$python" "$src/deploy/mpijob/render.py" --program env_audit --nodes 1 --gpus-per-node 4 \
    --prefix "$(dirname "$bin_dir")" --report-dir "$tmp/reports" --args="--quick --timeout 60" >"$tmp/job.yaml" || exit 1
mkdir -p "$tmp/reports" # the pod's volume

# The launcher container's command (NUL-separated) and env (NAME=VALUE lines), straight from the YAML.
"$python" - "$tmp/job.yaml" "$tmp/cmd" "$tmp/env" <<'PY' || exit 1
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
c = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
open(sys.argv[2], "w").write("".join(a + "\0" for a in c["command"]))
open(sys.argv[3], "w").write("".join("{}={}\n".format(e["name"], e["value"]) for e in c["env"]))
PY
mapfile -d '' -t cmd <"$tmp/cmd"
mapfile -t envs <"$tmp/env"

# A pod's environment is the image's plus the manifest's plus the operator's; nothing from this shell (a
# test runner's OMPI_MCA_rmaps_base_oversubscribe would hide the slot check below).
run_launcher() { # run_launcher HOSTFILE_LINE: prints the launcher's output, returns its status
    echo "$1" >"$tmp/hostfile"
    env -i PATH="$PATH" HOME="$tmp" "${envs[@]}" OMPI_MCA_orte_default_hostfile="$tmp/hostfile" \
        OMPI_MCA_orte_keep_fqdn_hostnames=true KUBERNETES_SERVICE_HOST=kubernetes.default.svc \
        timeout 120 "${cmd[@]}" 2>&1
}

rc=0
out=$(run_launcher "localhost slots=4") || rc=$?
printf '%s\n' "$out" >"$tmp/launcher.log"
sed '/^=== gpuaccept report/,/^=== end/d' "$tmp/launcher.log"
check "launcher command exits 0 (got $rc)" test "$rc" -eq 0
check "env_audit.json: 4 ranks, launcher kind mpijob, verdict pass; the log carries the same report" \
    "$python" - "$tmp/reports/env_audit.json" "$tmp/launcher.log" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print({k: r.get(k) for k in ("world_size", "launcher", "verdict")})
assert r["world_size"] == 4 and r["launcher"]["kind"] == "mpijob" and r["verdict"]["result"] == "pass"
log = open(sys.argv[2]).read()
start = log.index("=== gpuaccept report {}\n".format(sys.argv[1]))
printed = log[log.index("\n", start) + 1:log.index("=== end", start)]
assert json.loads(printed) == r, "the report printed into the launcher log differs from the file"
PY

check "the launcher merged the reports on the first worker and printed the summary" "$python" - \
    "$tmp/reports/summary.json" "$tmp/launcher.log" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert {st["program"]: st["status"] for st in s["steps"]}["env_audit"] == "pass"
assert "=== gpuaccept report {}".format(sys.argv[1]) in open(sys.argv[2]).read()
PY

# The operator wrote fewer slots than the job's ranks: mpirun must fail and the launcher must say so,
# not hide it behind the report-printing step that follows.
rm -f "$tmp/reports"/*
rc=0
out=$(run_launcher "localhost slots=2") || rc=$?
check "too few slots in the hostfile: launcher fails (got $rc)" test "$rc" -ne 0
check "too few slots in the hostfile: no report" test ! -e "$tmp/reports/env_audit.json"

exit $((fails != 0))
