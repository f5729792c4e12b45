#!/usr/bin/env bash
# drain.sh against a real Slurm (issue 14): the hostlists gpuaccept compresses are the ones
# `scontrol show hostlist` writes and expand to the same hosts; `gpuaccept run --drain` drains the node that
# failed on the local one-node Slurm, with the fault codes as the reason; without --drain nothing is drained.
# Usage: drain_slurm_test.sh BIN_DIR SOURCE_DIR PYTHON HOSTLIST_PRINT
set -u
bin=$1 src=$2 py=$3 hlp=$4
. "$src/ctest/deploy/local_slurm.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
ga_slurm_start || fail "local Slurm did not start"
trap ga_slurm_stop EXIT
work=$(mktemp -d "${TMPDIR:-/tmp}/ga-drain.XXXXXX")

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

# 2. A baseline far above what this machine reaches makes its node fail, deterministically.
node=$(hostname -s)
"$bin/gpuaccept" run --quick --np 2 --only gemm_flops --baseline none --report-dir "$work/r0" >"$work/r0.log" 2>&1
"$bin/gpuaccept" baseline --from "$work/r0/summary.json" -o "$work/b.json" --force >/dev/null || fail "baseline"
"$py" - "$work/b.json" <<'PY' || fail "inflating the baseline"
import json, sys
b = json.load(open(sys.argv[1]))
for m in b["metrics"]:
    m["value"] *= 100
json.dump(b, open(sys.argv[1], "w"))
PY
state() { sinfo -h -N -n "$node" -o '%T|%E'; } # "idle|none", "drained|gpuaccept: CODES"

# Without --drain the script is written, not run.
"$bin/gpuaccept" run --quick --np 2 --only gemm_flops --baseline "$work/b.json" --report-dir "$work/r1" \
    >"$work/r1.log" 2>&1
[ $? -eq 1 ] || { cat "$work/r1.log"; fail "a run below the baseline should exit 1"; }
grep -q "^scontrol update NodeName='$node' State=DRAIN Reason='gpuaccept: [A-Z_,]*BASELINE_REGRESSION" "$work/r1/drain.sh" ||
    { cat "$work/r1/drain.sh"; fail "drain.sh does not drain $node with its fault codes"; }
state | grep -qi drain && fail "the node was drained without --drain: $(state)"

"$bin/gpuaccept" run --quick --np 2 --only gemm_flops --baseline "$work/b.json" --report-dir "$work/r2" \
    --drain >"$work/r2.log" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/r2.log"; fail "--drain: exit $rc, not the verdict's 1"; }
s=$(state)
echo "after --drain: $s"
case "$s" in
drain*"|gpuaccept: "*BASELINE_*) ;;
*) fail "node $node not drained by gpuaccept: $s" ;;
esac
scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1
rm -rf "$work"
echo "PASS"
