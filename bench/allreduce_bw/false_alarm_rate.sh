#!/bin/sh
# False-alarm rate of --pattern pairs on this host (issue 19): RUNS runs at NP ranks of one node with no fault,
# then RUNS runs with the test delay hook on one rank, counting the slow-node and slow-link findings of each.
# Healthy runs should name nothing; delayed runs should name the delayed rank, and only it, every time.
#   bench/allreduce_bw/false_alarm_rate.sh BIN [NP] [RUNS] [DELAY_RANK] [DELAY_US] [-- extra allreduce_bw args]
# BIN: the allreduce_bw binary. Needs mpirun (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
# and python3. Prints one line per run and a summary; exits 1 when a healthy run named anything or a delayed run
# missed the rank or named another. FAR_PHASES=healthy or FAR_PHASES=delay runs one half only (default both).
set -eu
bin=$1
np=${2:-8}
runs=${3:-20}
delay_rank=${4:-3}
delay_us=${5:-100000}
shift $(($# < 5 ? $# : 5))
[ "${1:-}" = "--" ] && shift
args="--pattern pairs --rounds all -b 256K -e 1M -f 4 -n 5 -w 1 $*"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# one run: prints "exit=N slow_node=[...] slow_link=N"
one() {
    rep=$dir/r
    rm -rf "$rep"
    set +e
    mpirun --oversubscribe -np "$np" "$@" "$bin" $args --report-dir "$rep" >"$dir/out" 2>&1
    rc=$?
    set -e
    python3 - "$rep/allreduce_bw.json" "$rc" <<'PY'
import json, sys
try:
    rep = json.load(open(sys.argv[1]))
except OSError:
    print(f"exit={sys.argv[2]} no-report"); sys.exit(0)
nodes = sorted(f.get("rank")
               for f in rep["findings"] if f["code"] == "COMM_SLOW_NODE")
links = sum(1 for f in rep["findings"] if f["code"] == "COMM_SLOW_LINK")
print(f"exit={sys.argv[2]} slow_node={nodes} slow_link={links}")
PY
}

phases=${FAR_PHASES:-healthy,delay}
healthy_bad=0
case $phases in *healthy*) ;; *) runs_h=0 ;; esac
for i in $(seq 1 "${runs_h:-$runs}"); do
    line=$(one)
    echo "healthy $i: $line"
    case $line in *"slow_node=[] slow_link=0"*) ;; *) healthy_bad=$((healthy_bad + 1)) ;; esac
done
named=0
case $phases in *delay*) ;; *) runs_d=0 ;; esac
for i in $(seq 1 "${runs_d:-$runs}"); do
    line=$(one -x ALLREDUCE_BW_TEST_DELAY_RANK="$delay_rank" -x ALLREDUCE_BW_TEST_DELAY_US="$delay_us")
    echo "delay rank $delay_rank $i: $line"
    case $line in *"slow_node=[$delay_rank] slow_link=0"*) named=$((named + 1)) ;; esac
done
echo "np $np ($args): healthy runs with a slow-node or slow-link finding: $healthy_bad of ${runs_h:-$runs};" \
    "delayed runs naming rank $delay_rank alone: $named of ${runs_d:-$runs}"
[ "$healthy_bad" -eq 0 ] && [ "$named" -eq "${runs_d:-$runs}" ]
