#!/bin/sh
# False-alarm rate of allreduce_bw --pattern pairs on this host (issue 19), now one program of the shared script
# launch/false_alarm_rate.py (issue 32), which this runs with the arguments of before:
#   bench/allreduce_bw/false_alarm_rate.sh BIN [NP] [RUNS] [DELAY_RANK] [DELAY_US] [-- extra allreduce_bw args]
# BIN: the allreduce_bw binary. RUNS runs at NP ranks with no fault, then RUNS with the delay hook on one rank.
# FAR_PHASES=healthy or FAR_PHASES=delay runs one half only (default both). Exits 1 when a healthy run had a
# finding or a delayed run named another rank than DELAY_RANK, or missed it in more than 5 % of the runs.
set -eu
bin=$1
np=${2:-8}
runs=${3:-20}
delay_rank=${4:-3}
delay_us=${5:-100000}
shift $(($# < 5 ? $# : 5))
[ "${1:-}" = "--" ] && shift
phases=$(echo "${FAR_PHASES:-healthy,delay}" | sed 's/delay/slow/')
exec python3 "$(dirname "$0")/../../launch/false_alarm_rate.py" --bin-dir "$(dirname "$bin")" --program allreduce_bw \
    --np "$np" --runs "$runs" --slow-np "$np" --slow-rank "$delay_rank" --delay-us "$delay_us" \
    --phases "$phases" --args "allreduce_bw=$*"
