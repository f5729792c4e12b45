#!/usr/bin/env bash
# drain.sh against a real Slurm (issues 14, 26): the hostlists gpuaccept compresses are the ones
# `scontrol show hostlist` writes and expand to the same hosts. On the local one-node Slurm, whose NodeName is
# not the host name: `gpuaccept run --drain` in a batch job drains the node that failed, by the name its
# ranks got from SLURMD_NODENAME, with its failing codes (no warning) as the reason; without --drain nothing
# is drained; a passing re-check outside Slurm resumes the node gpuaccept drained, and leaves alone a node an
# administrator drained.
# 5. (issue 45, item 1) drain.sh holds names to the node-name rule on its own, whatever summary it is written
#    from: a node named ALL (scontrol's every node), all, a host list or an option is refused, nothing drained.
# Usage: check_drain_slurm.sh BIN_DIR SOURCE_DIR PYTHON HOSTLIST_PRINT HANDOFF_PRINT
set -u
bin=$1 src=$2 py=$3 hlp=$4 hop=$5
. "$src/ctest/deploy/local_slurm.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
export GA_SLURM_NODENAME=ga-slurm-node1
ga_slurm_start || fail "local Slurm did not start"
trap ga_slurm_stop EXIT
work=$(mktemp -d "${TMPDIR:-/tmp}/ga-drain.XXXXXX")

# 5 first (it needs no job): a summary no merge would pass, written into drain.sh and gpuaccept-k8s.sh as is.
state0() { sinfo -h -N -n "$GA_SLURM_NODENAME" -o '%T|%E' | head -n1; }
for bad in ALL all "ga-slurm-node[1-9]" "ga-slurm-node1,x" "ga-slurm-node*" "-ga-slurm-node1" "ga slurm"; do
    for key in slurm_node host; do
        "$py" - "$work/bad.json" "$key" "$bad" <<'PY' || fail "writing the hostile summary"
import json, sys
node = {"host": "ga-host", "verdict": "fail", "fault_codes": ["GEMM_LOW"]}
node[sys.argv[2]] = sys.argv[3]
json.dump({"nodes": [node], "findings": [{"severity": "fail", "code": "GEMM_LOW", "host": node["host"]}]},
          open(sys.argv[1], "w"))
PY
        "$hop" drain "$work/bad.json" >"$work/bad-drain.sh" || fail "handoff_print drain"
        grep -q scontrol "$work/bad-drain.sh" && { cat "$work/bad-drain.sh"; fail "$key '$bad': drain.sh names it to scontrol"; }
        sh "$work/bad-drain.sh" 2>"$work/bad-drain.err"
        rc=$?
        [ $rc -eq 2 ] && [ "$(wc -l <"$work/bad-drain.err")" -eq 1 ] && grep -q "refused, drains nothing" "$work/bad-drain.err" ||
            fail "$key '$bad': drain.sh exit $rc, not 2 with one line: $(cat "$work/bad-drain.err")"
        case "$(state0)" in idle* | mixed* | allocated*) ;; *) fail "$key '$bad': the node was touched: $(state0)" ;; esac
        "$hop" k8s "$work/bad.json" >"$work/bad-k8s.sh" || fail "handoff_print k8s"
        KUBECTL="$work/no-kubectl" sh "$work/bad-k8s.sh" 2>/dev/null
        rc=$?
        [ $rc -eq 2 ] && ! grep -q KUBECTL\" "$work/bad-k8s.sh" || fail "$key '$bad': gpuaccept-k8s.sh exit $rc: $(cat "$work/bad-k8s.sh")"
        [ "$("$hop" k8s-json "$work/bad.json")" = "[]" ] || fail "$key '$bad': gpuaccept-k8s.json is not empty"
    done
done
echo "hostile names refused by drain.sh and gpuaccept-k8s.sh, nothing drained: $(state0)"

# 1. Hostlists: each case as gpuaccept writes it equals scontrol's compression of the sorted hosts, and
#    scontrol expands it back to exactly those hosts.
cases=(
    "gpu-node-02 gpu-node-03 gpu-node-17"
    "gpu-node-17 gpu-node-03 gpu-node-02 gpu-node-03"
    "n9 n10 n11 n13"
    "n09 n10 n11"
    "a1 a3 b2 c"
    "rack1-node001 rack1-node002 rack2-node001"
    "single"
    "x007"
)
for c in "${cases[@]}"; do
    read -ra hosts <<<"$c"
    mine=$("$hlp" "${hosts[@]}") || fail "hostlist_print failed on '$c'"
    sorted=$(printf '%s\n' "${hosts[@]}" | sort -u | sort -V | paste -sd,)
    theirs=$(scontrol show hostlist "$sorted") || fail "scontrol show hostlist '$sorted'"
    [ "$mine" = "$theirs" ] || fail "'$c': gpuaccept wrote '$mine', scontrol '$theirs'"
    back=$(scontrol show hostnames "$mine" | sort -u | paste -sd,)
    want=$(printf '%s\n' "${hosts[@]}" | sort -u | paste -sd,)
    [ "$back" = "$want" ] || fail "'$mine' expands to '$back', not '$want'"
    echo "hostlist ok: $c -> $mine"
done

# 2. A baseline far above what this machine reaches makes its node fail, deterministically. node_health adds
#    warnings (no NVML, no InfiniBand here) that must not reach the Reason.
host=$(hostname -s) node=$GA_SLURM_NODENAME
run() { "$bin/gpuaccept" run --quick --np 2 "$@"; }
run --only gemm_flops --baseline none --report-dir "$work/r0" >"$work/r0.log" 2>&1
"$bin/gpuaccept" baseline --from "$work/r0/summary.json" -o "$work/b.json" --force >/dev/null || fail "baseline"
"$py" - "$work/b.json" <<'PY' || fail "inflating the baseline"
import json, sys
b = json.load(open(sys.argv[1]))
for m in b["metrics"]:
    m["value"] *= 100
json.dump(b, open(sys.argv[1], "w"))
PY
state() { sinfo -h -N -n "$node" -o '%T|%E' | head -n1; } # "idle|none", "drained|gpuaccept: CODES"
# A batch job on the node: `gpuaccept run` launches its steps with srun, so each rank has SLURMD_NODENAME.
job() { # job NAME ARGS...: runs `gpuaccept run ARGS` in a batch job, returns its exit status
    local name=$1
    shift
    printf '#!/bin/sh\nexec %q run --quick --np 2 --only node_health,gemm_flops --report-dir %q' "$bin/gpuaccept" \
        "$work/$name" >"$work/$name.sbatch"
    printf ' %q' "$@" >>"$work/$name.sbatch"
    timeout 200 sbatch --wait --quiet --ntasks=2 --time=5 --output="$work/$name.log" "$work/$name.sbatch"
}

# Without --drain the script is written, not run.
job r1 --baseline "$work/b.json"
rc=$?
[ $rc -eq 1 ] || { cat "$work/r1.log"; fail "a run below the baseline should exit 1, not $rc"; }
# The reason NHC would write: the node's failing codes, in the order found, and no warning's.
reason() {
    "$py" - "$1" "$node" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert [n.get("slurm_node") for n in s["nodes"]] == [sys.argv[2]], s["nodes"]
assert any(f["code"].startswith("HEALTH_") and f["severity"] == "warn" for f in s["findings"]), "no warning"
codes = []
for f in s["findings"]:
    if f["severity"] == "fail" and f["code"] not in codes:
        codes.append(f["code"])
assert "BASELINE_REGRESSION" in codes and not any(c.startswith("HEALTH_") for c in codes), codes
print("gpuaccept: " + ",".join(codes))
PY
}
want=$(reason "$work/r1/summary.json") || fail "the summary does not carry the Slurm node name and a warning"
grep -qxF "scontrol update NodeName='$node' State=DRAIN Reason='$want'" "$work/r1/drain.sh" ||
    { cat "$work/r1/drain.sh"; fail "drain.sh does not drain $node with its failing codes alone ($want)"; }
state | grep -qi drain && fail "the node was drained without --drain: $(state)"

job r2 --baseline "$work/b.json" --drain
rc=$?
[ $rc -eq 1 ] || { cat "$work/r2.log"; fail "--drain: exit $rc, not the verdict's 1"; }
s=$(state)
echo "after --drain: $s"
want=$(reason "$work/r2/summary.json") || fail "r2: no summary"
[ "${s#*|}" = "$want" ] || fail "reason '${s#*|}', not '$want'"
case "${s%%|*}" in drain*) ;; *) fail "node $node not drained by gpuaccept: $s" ;; esac

# 3. A drained node runs no job: its re-check runs outside Slurm (mpirun), names the host, and drain.sh
#    resumes the node because its Reason is gpuaccept's.
for i in $(seq 30); do state | grep -q '^drained|' && break; sleep 1; done
run --only env_audit --baseline none --report-dir "$work/r3" --drain >"$work/r3.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$work/r3.log"; fail "passing re-check: exit $rc"; }
s=$(state)
echo "after a passing re-check: $s"
case "$s" in idle* | mixed* | allocated*) ;; *) fail "node $node not resumed: $s" ;; esac

# 4. A node an administrator drained stays drained, whatever gpuaccept finds.
scontrol update NodeName="$node" State=DRAIN Reason="fan 3 replaced, burn-in pending" || fail "scontrol drain"
run --only env_audit --baseline none --report-dir "$work/r4" --drain >"$work/r4.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$work/r4.log"; fail "re-check of the admin-drained node: exit $rc"; }
s=$(state)
echo "admin-drained node after a passing re-check: $s"
case "$s" in drain*"|fan 3 replaced, burn-in pending") ;; *) fail "the administrator's drain was undone: $s" ;; esac
scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1
rm -rf "$work"
echo "PASS"
