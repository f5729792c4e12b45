#!/usr/bin/env python3
"""Runs a program's GPU path under mpiexec with the GPU test double preloaded, then checks how it ended.

usage: run_double.py --double LIB --mpiexec CMD --reports DIR --name NAME [--np N] [--env K=V]...
                     [--exit CODE] [--within SECONDS] [--stderr REGEX]... [--stdout REGEX]... [--absent REGEX]...
                     [--report EXPR]... -- PROGRAM ARGS...

--within: the run must end within SECONDS of wall clock (a hang is killed at 50 s and fails).
--stderr/--stdout: a regular expression that must match the stream; --absent: must match neither.
--aligned: the times captured by REGEX on stderr (COUNT of them) lie within SECONDS of each other.
--report: a Python expression over `r`, the program's JSON report, that must be true (implies a report).
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--double", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--reports", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--exit", type=int, action="append",
                    help="the exit code expected (repeat to allow several; default 0)")
    ap.add_argument("--within", type=float, default=45.0)
    ap.add_argument("--stderr", action="append", default=[])
    ap.add_argument("--stdout", action="append", default=[])
    ap.add_argument("--absent", action="append", default=[])
    ap.add_argument("--report", action="append", default=[])
    ap.add_argument("--aligned", nargs=3, metavar=("REGEX", "COUNT", "SECONDS"),
                    help="COUNT matches of REGEX (group 1 a time in seconds) in stderr, within SECONDS")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command and a.command[0] == "--" else a.command
    report_dir = os.path.join(a.reports, a.name)
    shutil.rmtree(report_dir, ignore_errors=True)

    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    argv = shlex.split(a.mpiexec) + ["-np", str(a.np), "-x", "LD_PRELOAD=" + a.double]
    argv += cmd + ["--report-dir", report_dir]
    print("run:", " ".join(f"{kv}" for kv in a.env), " ".join(shlex.quote(x) for x in argv), flush=True)

    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=50)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        print(out, err, sep="\n")
        print(f"FAIL: still running after 50 s (a hang)")
        return 1
    elapsed = time.monotonic() - t0
    print(out)
    print(err, file=sys.stderr)
    fails = []
    want = a.exit or [0]
    if p.returncode not in want:
        fails.append(f"exit code {p.returncode}, expected {' or '.join(map(str, want))}")
    if elapsed > a.within:
        fails.append(f"took {elapsed:.1f} s, limit {a.within:g} s")
    for rx in a.stderr:
        if not re.search(rx, err, re.M):
            fails.append(f"stderr lacks /{rx}/")
    for rx in a.stdout:
        if not re.search(rx, out, re.M):
            fails.append(f"stdout lacks /{rx}/")
    for rx in a.absent:
        if re.search(rx, out + err, re.M):
            fails.append(f"output has /{rx}/")
    if a.aligned:
        times = [float(t) for t in re.findall(a.aligned[0], err, re.M)]
        if len(times) != int(a.aligned[1]):
            fails.append(f"{len(times)} lines match /{a.aligned[0]}/, expected {a.aligned[1]}")
        elif max(times) - min(times) > float(a.aligned[2]):
            fails.append(f"times spread over {max(times) - min(times):.3f} s, limit {a.aligned[2]} s")
    if a.report:
        files = glob.glob(os.path.join(report_dir, "*.json"))
        if len(files) != 1:
            fails.append(f"expected one report in {report_dir}, found {files}")
        else:
            with open(files[0]) as f:
                r = json.load(f)
            for expr in a.report:
                try:
                    ok = eval(expr, {}, {"r": r, "any": any, "all": all, "len": len})
                except Exception as e:  # a missing key is a failed check
                    ok, expr = False, f"{expr} ({type(e).__name__}: {e})"
                if not ok:
                    fails.append(f"report check failed: {expr}")
    print(f"elapsed {elapsed:.1f} s, exit {p.returncode}")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
