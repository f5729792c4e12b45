#!/usr/bin/env python3
"""The one end-to-end driver of the tests: runs a program (under mpiexec) and checks how it ended.

usage: run_program.py [OPTIONS] [--check CMD... --] -- COMMAND...
       run_program.py --double LIB --mpiexec CMD --reports DIR --name NAME [--np N] [OPTIONS] -- PROGRAM ARGS...

The first form runs COMMAND as given. The second runs PROGRAM under `CMD -np N` with the GPU test double
preloaded (LD_PRELOAD) and --report-dir DIR/NAME appended; it is killed as a hang after 50 s.

How it ended:
  --exit CODE          the exit code expected (repeat to allow several; default 0)
  --within SECONDS     it must end within SECONDS of wall clock (default: 45 with --double, else no limit)
  --stderr REGEX / --stdout REGEX   must match the stream; --output REGEX: one of them; --absent REGEX: neither
  --stderr-lines N     stderr has exactly N lines
  --stderr-once TEXT   TEXT appears on exactly one line of stderr (one rank printed it, once)
  --stdout-has TEXT    TEXT appears on stdout
  --aligned REGEX COUNT SECONDS     COUNT matches of REGEX (group 1 a time) on stderr lie within SECONDS
  --report EXPR        a Python expression over `r`, the one JSON report of DIR/NAME, that must be true
What it left:
  --fresh DIR          remove DIR first, so that what the run leaves there is its own (repeatable)
  --empty DIR          the run must leave DIR empty or absent: nothing written half-way
  --check CMD... --    then run CMD (a checker of the report); it must exit 0
  --save-output PREFIX write the command's stdout and stderr to PREFIX.stdout and PREFIX.stderr (for --check)
Environment: --env K=V (repeatable)."""
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

DOUBLE_HANG_S = 50


# The options whose value may itself start with "-" (an option a test expects in a message): joined to their
# value before argparse reads them, which would take "--batch-size" for an option of its own.
TEXT_OPTIONS = ("--stderr", "--stdout", "--output", "--absent", "--stderr-once", "--stdout-has", "--report")


def split_check(argv):
    """--check CMD... -- is taken out first: its words would read as this driver's options."""
    out, check, i = [], [], 0
    while i < len(argv):
        if argv[i] == "--check":
            j = argv.index("--", i + 1)
            check, i = argv[i + 1 : j], j + 1
        elif argv[i] == "--":
            out += argv[i:]
            break
        elif argv[i] in TEXT_OPTIONS and i + 1 < len(argv):
            out.append(argv[i] + "=" + argv[i + 1])
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out, check


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--double")
    ap.add_argument("--mpiexec")
    ap.add_argument("--reports")
    ap.add_argument("--name")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--exit", type=int, action="append")
    ap.add_argument("--within", type=float)
    ap.add_argument("--stderr", action="append", default=[])
    ap.add_argument("--stdout", action="append", default=[])
    ap.add_argument("--output", action="append", default=[])
    ap.add_argument("--stderr-lines", type=int)
    ap.add_argument("--save-output")
    ap.add_argument("--absent", action="append", default=[])
    ap.add_argument("--stderr-once")
    ap.add_argument("--stdout-has")
    ap.add_argument("--report", action="append", default=[])
    ap.add_argument("--aligned", nargs=3, metavar=("REGEX", "COUNT", "SECONDS"))
    ap.add_argument("--fresh", action="append", default=[])
    ap.add_argument("--empty")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    a.command = a.command[1:] if a.command and a.command[0] == "--" else a.command
    if not a.command:
        ap.error("no command after --")
    if a.double and not (a.mpiexec and a.reports and a.name):
        ap.error("--double needs --mpiexec, --reports and --name")
    if a.report and not a.double:
        ap.error("--report reads the report of --reports/--name (the --double form)")
    return a


def run(a, env):
    """(exit code, stdout, stderr, seconds); exit code None for a hang that was killed."""
    argv, hang = a.command, None
    if a.double:
        report_dir = os.path.join(a.reports, a.name)
        shutil.rmtree(report_dir, ignore_errors=True)
        argv = shlex.split(a.mpiexec) + ["-np", str(a.np), "-x", "LD_PRELOAD=" + a.double]
        argv += a.command + ["--report-dir", report_dir]
        hang = DOUBLE_HANG_S
    print("run:", " ".join(a.env), " ".join(shlex.quote(x) for x in argv), flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = p.communicate(timeout=hang)
        code = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        code = None
    return code, out, err, time.monotonic() - t0


def stream_failures(a, out, err):
    fails = []
    for rx in a.stderr:
        if not re.search(rx, err, re.M):
            fails.append(f"stderr lacks /{rx}/")
    for rx in a.stdout:
        if not re.search(rx, out, re.M):
            fails.append(f"stdout lacks /{rx}/")
    for rx in a.output:
        if not re.search(rx, out, re.M) and not re.search(rx, err, re.M):
            fails.append(f"neither stdout nor stderr has /{rx}/")
    if a.stderr_lines is not None and len(err.splitlines()) != a.stderr_lines:
        fails.append(f"{len(err.splitlines())} lines on stderr, expected {a.stderr_lines}")
    for rx in a.absent:
        if re.search(rx, out + err, re.M):
            fails.append(f"output has /{rx}/")
    if a.stderr_once is not None:
        n = sum(a.stderr_once in line for line in err.splitlines())
        if n != 1:
            fails.append(f"'{a.stderr_once}' appears {n} times on stderr, expected once")
    if a.stdout_has is not None and a.stdout_has not in out:
        fails.append(f"stdout lacks '{a.stdout_has}'")
    if a.aligned:
        times = [float(t) for t in re.findall(a.aligned[0], err, re.M)]
        if len(times) != int(a.aligned[1]):
            fails.append(f"{len(times)} lines match /{a.aligned[0]}/, expected {a.aligned[1]}")
        elif max(times) - min(times) > float(a.aligned[2]):
            fails.append(f"times spread over {max(times) - min(times):.3f} s, limit {a.aligned[2]} s")
    return fails


def report_failures(a):
    report_dir = os.path.join(a.reports, a.name)
    files = glob.glob(os.path.join(report_dir, "*.json"))
    if len(files) != 1:
        return [f"expected one report in {report_dir}, found {files}"]
    with open(files[0]) as f:
        r = json.load(f)
    fails = []
    for expr in a.report:
        try:
            ok = eval(expr, {}, {"r": r, "any": any, "all": all, "len": len})
        except Exception as e:  # a missing key is a failed check
            ok, expr = False, f"{expr} ({type(e).__name__}: {e})"
        if not ok:
            fails.append(f"report check failed: {expr}")
    return fails


def main():
    argv, check = split_check(sys.argv[1:])
    a = parse(argv)
    for d in a.fresh:
        shutil.rmtree(d, ignore_errors=True)
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    code, out, err, elapsed = run(a, env)
    print(out)
    print(err, file=sys.stderr)
    if a.save_output:
        os.makedirs(os.path.dirname(os.path.abspath(a.save_output)), exist_ok=True)
        for suffix, text in ((".stdout", out), (".stderr", err)):
            with open(a.save_output + suffix, "w") as f:
                f.write(text)
    if code is None:
        print(f"FAIL: still running after {DOUBLE_HANG_S} s (a hang)")
        return 1
    fails = []
    want = a.exit or [0]
    if code not in want:
        fails.append(f"exit code {code}, expected {' or '.join(map(str, want))}")
    within = a.within if a.within is not None else (45.0 if a.double else None)
    if within is not None and elapsed > within:
        fails.append(f"took {elapsed:.1f} s, limit {within:g} s")
    fails += stream_failures(a, out, err)
    if a.report:
        fails += report_failures(a)
    if a.empty and os.path.isdir(a.empty) and os.listdir(a.empty):
        fails.append(f"{a.empty} is not empty: {sorted(os.listdir(a.empty))}")
    print(f"elapsed {elapsed:.1f} s, exit {code}")
    for f in fails:
        print("FAIL:", f)
    if check:
        sys.stdout.flush()
        rc = subprocess.run(check).returncode
        if rc != 0:
            print(f"FAIL: the checker {' '.join(check)} exited {rc}")
            fails.append("the checker failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
