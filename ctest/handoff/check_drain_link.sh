#!/usr/bin/env bash
# drain.sh on an abnormal link, against a real Slurm (issue 44, item 6): a slow link between two nodes fine
# with their other partners is the link's, so drain.sh drains neither end, resumes neither (an end that an
# earlier run drained stays drained: a re-check mends no cable), and says what it left to the fabric team.
# The merge fixture slow_link (gpu-node-01 <-> gpu-node-04) with the local Slurm node standing in for each
# end in turn. Usage: check_drain_link.sh GPUACCEPT SOURCE_DIR PYTHON FIXTURE_CASES
set -u
gpuaccept=$1 src=$2 py=$3 cases=$4
. "$src/ctest/deploy/local_slurm.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
export GA_SLURM_NODENAME=ga-slurm-node1
node=$GA_SLURM_NODENAME
ga_slurm_start || fail "local Slurm did not start"
trap ga_slurm_stop EXIT
work=$(mktemp -d "${TMPDIR:-/tmp}/ga-drain-link.XXXXXX")
state() { sinfo -h -N -n "$node" -o '%T|%E' | head -n1; }
for end in gpu-node-01 gpu-node-04; do
    # The fixture's reports with the Slurm node's name for this end, everywhere (the finding's message too).
    "$py" - "$cases/slow_link/reports" "$work/$end-reports" "$end" "$node" <<'PY' || fail "renaming $end"
import json, os, sys
src, dst, old, new = sys.argv[1:5]
os.makedirs(dst)
for f in os.listdir(src):
    text = open(os.path.join(src, f)).read().replace(old, new)
    open(os.path.join(dst, f), "w").write(text)
PY
    "$gpuaccept" merge --report-dir "$work/$end-reports" --out-dir "$work/$end" --baseline none >/dev/null
    [ $? -eq 1 ] || fail "$end: the merge of a slow link should exit 1"
    grep -q "^#   link .*$node" "$work/$end/drain.sh" || { cat "$work/$end/drain.sh"; fail "$end: no word for the fabric team"; }
    # An idle end stays idle.
    sh "$work/$end/drain.sh" || fail "$end: drain.sh exited $?"
    case "$(state)" in idle* | mixed* | allocated*) ;; *) fail "$end: the idle end was touched: $(state)" ;; esac
    # An end that an earlier run drained stays drained with its Reason.
    scontrol update NodeName="$node" State=DRAIN Reason="gpuaccept: COMM_SLOW_LINK" || fail "scontrol drain"
    sh "$work/$end/drain.sh" || fail "$end: drain.sh exited $?"
    case "$(state)" in drain*"|gpuaccept: COMM_SLOW_LINK") ;; *) fail "$end: the drained end was resumed: $(state)" ;; esac
    scontrol update NodeName="$node" State=RESUME || fail "scontrol resume"
    for i in $(seq 30); do state | grep -qv drain && break; sleep 1; done
    echo "$end as $node: neither drained nor resumed for the link"
done
rm -rf "$work"
echo "PASS"
