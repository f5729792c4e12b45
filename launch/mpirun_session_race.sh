#!/bin/bash
# Counts how often Open MPI's mpirun fails when many start at once on one machine, as the preflight starts one
# per node: with the shared session tree (Open MPI's default) and with a private base per mpirun (what
# suite/run/mpirun_session.c gives each). Run it as a non-root user (the failures were seen so), with load:
#   su someuser -c 'launch/mpirun_session_race.sh 16 25'
# Prints one line per mode: "shared: F of N failed", "private: F of N failed".
set -u
at_once=${1:-16} rounds=${2:-25}
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

one_round() { # MODE: at_once one-rank mpiruns together; prints how many failed
    local mode=$1 i failed=0
    for i in $(seq 1 "$at_once"); do
        (
            if [ "$mode" = private ]; then
                base=$(mktemp -d "$work/base.XXXXXX") || exit 1
                export OMPI_MCA_orte_local_tmpdir_base=$base PRTE_MCA_prte_local_tmpdir_base=$base
            fi
            mpirun --host localhost -np 1 true >"$work/$i.log" 2>&1
            echo $? >"$work/$i.rc"
        ) &
    done
    wait
    for i in $(seq 1 "$at_once"); do
        [ "$(cat "$work/$i.rc")" = 0 ] || failed=$((failed + 1))
    done
    echo "$failed"
}

for mode in shared private; do
    failed=0
    for r in $(seq 1 "$rounds"); do
        failed=$((failed + $(one_round "$mode")))
    done
    echo "$mode: $failed of $((at_once * rounds)) failed"
done
