#!/usr/bin/env bash
# Runs the launcher command of a rendered MPIJob the way the mpi-operator's launcher pod runs it: the
# command and env taken from the YAML (not retyped), a hostfile in the operator's format, and `gpuaccept run`
# finding it through OMPI_MCA_orte_default_hostfile. The launcher's exit status (the pod's, the Kubernetes
# job's) must be the merged verdict: a passing env_audit exits 0, a gemm_flops run held to a baseline far above
# this machine exits 1 (before issue 13 the launcher exited 0 for it).
#   check_mpijob_launcher.sh BIN_DIR SOURCE_DIR PYTHON(with PyYAML)
# What differs from a cluster, and why: the operator's hostfile (runLauncherAsWorker) is
#   <job>-launcher.<job>.<namespace>.svc slots=4
#   <job>-worker-0.<job>.<namespace>.svc slots=4 ...
# and here it is "localhost slots=N", the launcher alone, since there is no cluster DNS and no worker sshd; the
# install prefix and report directory are rendered to point at the build tree and a temporary directory; and
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

# render NAME ARGS...: the job's launcher command (NUL-separated) and env (NAME=VALUE lines), from the YAML.
render() {
    local name=$1
    shift
    "$python" "$src/deploy/mpijob/render.py" --nodes 1 --prefix "$(dirname "$bin_dir")" \
        --report-dir "$tmp/$name/reports" "$@" >"$tmp/$name.yaml" || return 1
    mkdir -p "$tmp/$name/reports" # the pod's volume
    "$python" - "$tmp/$name.yaml" "$tmp/$name.cmd" "$tmp/$name.env" <<'PY'
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
assert job["spec"]["runLauncherAsWorker"] is True, "rank 0 must run in the launcher pod"
c = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
open(sys.argv[2], "w").write("".join(a + "\0" for a in c["command"]))
# The kubelet's part: the downward API gives spec.nodeName, a name unlike this host's (the pod's).
def value(e):
    return "ga-kubelet-node" if e.get("valueFrom") == {"fieldRef": {"fieldPath": "spec.nodeName"}} else e["value"]
open(sys.argv[3], "w").write("".join("{}={}\n".format(e["name"], value(e)) for e in c["env"]))
PY
}

# A pod's environment is the image's plus the manifest's plus the operator's; nothing from this shell (a
# test runner's OMPI_MCA_rmaps_base_oversubscribe would hide the slot check below).
run_launcher() { # run_launcher NAME HOSTFILE_LINE: the launcher's output into NAME.log; returns its status
    local name=$1 cmd envs
    echo "$2" >"$tmp/$name.hostfile"
    mapfile -d '' -t cmd <"$tmp/$name.cmd"
    mapfile -t envs <"$tmp/$name.env"
    env -i PATH="$PATH" HOME="$tmp" "${envs[@]}" OMPI_MCA_orte_default_hostfile="$tmp/$name.hostfile" \
        OMPI_MCA_orte_keep_fqdn_hostnames=true KUBERNETES_SERVICE_HOST=kubernetes.default.svc \
        OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 240 "${cmd[@]}" >"$tmp/$name.log" 2>&1
}
show() { sed '/^=== gpuaccept report/,/^=== end/d' "$tmp/$1.log"; }

# The exit status and summary.json's verdict agree, the launcher ran the suite's runner (suite_run.json), and
# summary.md, alone, is printed into the log.
verdict_check() { # verdict_check NAME RC PROGRAM RESULT
    "$python" - "$tmp/$1/reports" "$tmp/$1.log" "$2" "$3" "$4" <<'PY'
import json, os, sys
rd, log, rc, program, result = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3]), sys.argv[4], sys.argv[5]
s = json.load(open(os.path.join(rd, "summary.json")))
v = s["verdict"]
print("summary verdict:", {k: v.get(k) for k in ("result", "exit_code", "fault_codes")}, "launcher exit:", rc)
assert v["result"] == result and v["exit_code"] == rc, "launcher exit differs from the verdict"
run = json.load(open(os.path.join(rd, "suite_run.json")))
assert [st["program"] for st in run["steps"] if st["status"] != "skipped"] == [program], run["steps"]
r = json.load(open(os.path.join(rd, program + ".json")))
assert r["launcher"]["kind"] == "mpijob" and r["world_size"] == 2, (r["launcher"], r["world_size"])
# The ranks name the node (GA_NODE_NAME from the downward API), the pod beside it (issue 41, item 1).
import socket
assert [(n["host"], n.get("pod")) for n in r["nodes"]] == [("ga-kubelet-node", socket.gethostname())], r["nodes"]
assert [n["host"] for n in s["nodes"]] == ["ga-kubelet-node"], s["nodes"]
# Only summary.md goes into the log, whole; the reports stay in the volume: at 512 nodes they would pass the
# kubelet's 10 MiB log rotation (issue 41, observation 10: 0.45 MB of log at 2 ranks).
path = os.path.join(rd, "summary.md")
start = log.index("=== gpuaccept report {}\n".format(path))
assert log[log.index("\n", start) + 1:log.index("=== end", start)] == open(path).read(), "summary.md copy differs"
copied = [l.split()[3] for l in log.splitlines() if l.startswith("=== gpuaccept report ")]
assert copied == [path], "reports copied into the log: %s" % copied
assert len(log.encode()) < 64 * 1024, "the launcher's log is %d bytes" % len(log.encode())
PY
}

# 1. A passing run: exit 0.
render pass --program env_audit --gpus-per-node 2 --cpu-only --args="--quick --step-timeout 120" || exit 1
rc=0
run_launcher pass "localhost slots=2" || rc=$?
show pass
check "passing env_audit: launcher exits 0 (got $rc)" test "$rc" -eq 0
check "passing env_audit: exit status = summary verdict, summary.md alone printed into the log" verdict_check pass "$rc" env_audit pass

# 2. A failing verdict: gemm_flops measured once, then held to a baseline 100x above it. The launcher's exit
# status must be the verdict's 1, where the old launcher loop exited 0.
# (Under load its ranks may differ enough to fail their own median check: the figures are what matters.)
"$bin_dir/gpuaccept" run --quick --np 2 --only gemm_flops --baseline none --report-dir "$tmp/r0" \
    >"$tmp/r0.log" 2>&1
[ -s "$tmp/r0/summary.json" ] || { cat "$tmp/r0.log"; echo "FAIL: measuring gemm_flops"; exit 1; }
"$bin_dir/gpuaccept" baseline --from "$tmp/r0/summary.json" -o "$tmp/b.json" --force >/dev/null || exit 1
"$python" - "$tmp/b.json" <<'PY' || exit 1
import json, sys
b = json.load(open(sys.argv[1]))
for m in b["metrics"]:
    m["value"] *= 100
json.dump(b, open(sys.argv[1], "w"))
PY
# The baseline path has a space and the args a quote: --args is split and quoted as a shell would.
mkdir -p "$tmp/base line" && mv "$tmp/b.json" "$tmp/base line/b.json"
render fail --program gemm_flops --gpus-per-node 2 --cpu-only \
    --args="--quick --step-timeout 120 --baseline '$tmp/base line/b.json'" || exit 1
rc=0
run_launcher fail "localhost slots=2" || rc=$?
show fail
check "gemm_flops below the baseline: launcher exits 1 (got $rc)" test "$rc" -eq 1
check "below the baseline: exit status = summary verdict (fail)" verdict_check fail "$rc" gemm_flops fail
check "below the baseline: BASELINE_ fault in the summary" grep -q '"BASELINE_' "$tmp/fail/reports/summary.json"

# 3. The operator wrote fewer slots than the job's ranks (--np 4 on 2 slots): gpuaccept run refuses before
# launching anything, and the launcher exits with its status, not 0.
render slots --program env_audit --gpus-per-node 2 --cpu-only --args="--quick --np 4" || exit 1
rc=0
run_launcher slots "localhost slots=2" || rc=$?
show slots
check "more ranks than slots: launcher fails (got $rc)" test "$rc" -ne 0
check "more ranks than slots: no report" test ! -e "$tmp/slots/reports/env_audit.json"

exit $((fails != 0))
