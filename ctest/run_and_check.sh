#!/usr/bin/env bash
# Runs a program under mpiexec and checks what it did: its exit code, how often a line appears on stderr,
# that no report (or exactly its report) was written, then an optional checker on the report.
# usage: run_and_check.sh [--fresh DIR] --exit N [--stderr-once TEXT] [--stdout-has TEXT] [--empty DIR]
#                         [--check CMD... --] -- COMMAND...
# --fresh removes DIR first, so that what a run leaves there is its own; --empty DIR: the run must leave DIR
# empty or absent (nothing written half-way).
set -u
want_exit=0 stderr_once="" stdout_has="" no_report=0 check=()
while [ $# -gt 0 ]; do
    case "$1" in
    --exit) want_exit=$2; shift 2 ;;
    --stderr-once) stderr_once=$2; shift 2 ;;
    --fresh) rm -rf "$2"; shift 2 ;;
    --empty) no_report=$2; shift 2 ;;
    --stdout-has) stdout_has=$2; shift 2 ;;
    --check) shift; while [ "$1" != "--" ]; do check+=("$1"); shift; done; shift ;;
    --) shift; break ;;
    *) echo "run_and_check: bad option $1" >&2; exit 2 ;;
    esac
done
err=$(mktemp) out=$(mktemp)
"$@" >"$out" 2>"$err"
rc=$?
cat "$out"
status=0
if [ "$rc" != "$want_exit" ]; then
    echo "FAIL: exit code $rc, expected $want_exit"; status=1
fi
if [ -n "$stderr_once" ]; then
    n=$(grep -cF -- "$stderr_once" "$err")
    [ "$n" = 1 ] || { echo "FAIL: '$stderr_once' appears $n times on stderr, expected once"; status=1; }
fi
if [ -n "$stdout_has" ] && ! grep -qF -- "$stdout_has" "$out"; then
    echo "FAIL: stdout lacks '$stdout_has'"; status=1
fi
if [ "$no_report" != 0 ] && [ -n "$(ls -A "$no_report" 2>/dev/null)" ]; then
    echo "FAIL: $no_report is not empty:"; ls -A "$no_report"; status=1
fi
if [ "$status" = 1 ]; then
    echo "--- stderr:"; cat "$err"
fi
rm -f "$err" "$out"
if [ ${#check[@]} -gt 0 ]; then
    "${check[@]}" || status=1
fi
exit $status
