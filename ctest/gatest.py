"""What the Python tests of ctest share: one way to record a check, print it and end with an exit code.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from gatest import check, finish

check() is worded as what must hold ("ok   what" / "FAIL what"); fail_unless() as the failure, printed only
when it happens. finish() exits 1 when a check failed, and also when none was made: a test whose expectations
came out empty proves nothing. program_run() reads what a program's check_report.py is given: the report and
the output of one run that ctest/run_program.py made."""
import argparse
import json
import os
import sys

failures = []  # the failed checks' words, in order (a test may report them again at its end)
made = 0  # checks made, passed or not


def check(cond, what):
    """Records a check worded as what must hold; prints it; returns cond."""
    global made
    made += 1
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return bool(cond)


def fail_unless(cond, failure):
    """Records a check worded as its failure: printed ("FAIL failure") only when cond is false."""
    global made
    made += 1
    if not cond:
        print("FAIL " + failure)
        failures.append(failure)
    return bool(cond)


def status():
    """1 when a check failed or none was made, else 0; prints one closing line."""
    if made == 0:
        print("FAIL no check was made: the test proves nothing")
        return 1
    print(f"{len(failures)} of {made} checks failed" if failures else f"all {made} checks passed")
    return 1 if failures else 0


def finish():
    """Ends the test with status()."""
    sys.exit(status())


def program_run(program, modes):
    """What ctest/<program>/check_report.py reads (ga_program_run_case in ctest/CMakeLists.txt): its --mode (one
    of modes), --np, --report-dir and --output PREFIX. Returns (args, the report, the run's stdout)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True, choices=modes)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--report-dir", required=True)
    ap.add_argument("--output", required=True, help="PREFIX of the run's PREFIX.stdout and PREFIX.stderr")
    a = ap.parse_args()
    with open(os.path.join(a.report_dir, program + ".json")) as f:
        report = json.load(f)
    with open(a.output + ".stdout") as f:
        return a, report, f.read()
