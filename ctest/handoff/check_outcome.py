"""One outcome everywhere (issue 26): the exit status, the last [RESULT] line, summary.json's verdict and
gpuaccept.prom's gpuaccept_run_exit_code agree, also when a hand-off script fails on a passing run; every
program that times out ends with [RESULT] FAILURE; allreduce_bw -J to a file that cannot be created is exit 2
before anything is measured. Real runs under mpiexec.
Usage: check_outcome.py BIN_DIR WORK_DIR MPIEXEC..."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, failures  # noqa: E402

bin_dir, work, mpiexec = sys.argv[1], sys.argv[2], sys.argv[3:]
gpuaccept = os.path.join(bin_dir, "gpuaccept")


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else ""


def prom_exit(d):
    for line in open(os.path.join(d, "gpuaccept.prom")):
        if line.startswith("gpuaccept_run_exit_code "):
            return int(float(line.split()[1]))
    return None


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

# 1. A hand-off script that fails on a passing run: exit 3, and every artifact says 3 (it said 0).
for name, kubectl_rc, want in (("k8s_fails", 1, 3), ("k8s_works", 0, 0)):
    fake = os.path.join(work, name + "-kubectl")
    with open(fake, "w") as f:
        f.write(f'#!/bin/sh\necho "kubectl $*" >&2\nexit {kubectl_rc}\n')
    os.chmod(fake, 0o755)
    d = os.path.join(work, name)
    r = subprocess.run(
        [gpuaccept, "run", "--np", "2", "--quick", "--only", "env_audit", "--apply-k8s", "--report-dir", d],
        capture_output=True,
        text=True,
        env=dict(os.environ, KUBECTL=fake),
    )
    s = json.load(open(os.path.join(d, "summary.json")))
    last = last_line(r.stdout)
    check(r.returncode == want, f"{name}: exit {r.returncode}, want {want}")
    check(s["verdict"]["exit_code"] == r.returncode, f"{name}: summary.json says {s['verdict']['exit_code']}")
    check(prom_exit(d) == r.returncode, f"{name}: gpuaccept.prom says {prom_exit(d)}")
    check(
        last == ("[RESULT] SUCCESS" if want == 0 else "[RESULT] FAILURE: HANDOFF_FAILED"),
        f"{name}: the last line is '{last}'",
    )
    junit = open(os.path.join(d, "gpuaccept-junit.xml")).read()
    check(("<error" in junit and "HANDOFF_FAILED" in junit) == (want != 0), f"{name}: JUnit tells the hand-off")

# 2. Every program that times out ends its output with [RESULT] FAILURE (it printed none).
progs = subprocess.run([gpuaccept, "run", "--list-programs"], capture_output=True, text=True).stdout
for prog in (l.split("\t")[1] for l in progs.splitlines() if "\t" in l):
    d = os.path.join(work, "timeout-" + prog)
    r = subprocess.run(
        mpiexec + ["-np", "2", os.path.join(bin_dir, prog), "--quick", "--timeout", "0.001", "--report-dir", d],
        capture_output=True,
        text=True,
        timeout=120,
    )
    last = last_line(r.stdout)
    check(
        r.returncode == 4 and last.startswith("[RESULT] FAILURE: timeout:"),
        f"{prog} --timeout 0.001: exit {r.returncode}, last line '{last[:100]}'",
    )

# 3. allreduce_bw -J to a directory that does not exist, or to a directory: exit 2, one line, no report.
for name, target in (("missing_dir", os.path.join(work, "nonexistent", "x.json")), ("a_directory", work)):
    d = os.path.join(work, "J-" + name)
    r = subprocess.run(
        mpiexec
        + ["-np", "2", os.path.join(bin_dir, "allreduce_bw"), "-b", "1K", "-e", "1K", "-J", target, "--report-dir", d],
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = [l for l in r.stderr.splitlines() if "-J" in l]
    check(
        r.returncode == 2 and len(said) == 1 and last_line(r.stdout).startswith("[RESULT] FAILURE: usage_error"),
        f"-J {name}: exit {r.returncode}, lines {said}, last '{last_line(r.stdout)[:80]}'",
    )
    check(not os.path.exists(os.path.join(d, "allreduce_bw.json")), f"-J {name}: no report")
check(not os.path.exists(work + ".0"), "-J DIR: no DIR.0 written beside it")

print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
