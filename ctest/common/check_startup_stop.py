#!/usr/bin/env python3
"""A rank stopped inside MPI start-up must not hang the job: with --timeout 5 the job ends with exit 4 and a
"[FATAL] start-up:" line, leaves no report and no process. Usage: check_startup_stop.py WHEN BIN_DIR SHIM WORK -- MPIEXEC...
WHEN: before (the rank stops inside MPI_Init_thread before MPI's start-up) or after (once MPI is up, before
MPI_Init_thread returns). Exit 0 pass, 1 fail."""
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, failures  # noqa: E402

WHEN, BIN, SHIM, WORK = sys.argv[1:5]
MPIEXEC = sys.argv[sys.argv.index("--") + 1 :]
BOUND = 60  # seconds the job gets before the test calls it a hang


def session_pids(sid):
    """The live processes of session sid (a zombie has ended: its parent, gone, could not reap it yet)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                if os.getsid(int(d)) == sid and state != "Z":
                    pids.append(int(d))
            except (OSError, IndexError):
                pass
    return pids


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
rd = os.path.join(WORK, "reports")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
cmd = MPIEXEC + [
    "-np",
    "3",
    "--oversubscribe",
    "-x",
    "LD_PRELOAD=" + SHIM,
    "-x",
    "GA_TEST_STOP_RANK=1",
    "-x",
    "GA_TEST_STOP_WHEN=" + WHEN,
    os.path.join(BIN, "env_audit"),
    "--timeout",
    "5",
    "--report-dir",
    rd,
]
t0 = time.time()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
try:
    out, err = p.communicate(timeout=BOUND)
    hung = False
except subprocess.TimeoutExpired:
    hung = True
    os.killpg(p.pid, signal.SIGKILL)
    out, err = p.communicate()
wall = time.time() - t0
check(not hung, "rank 1 stopped %s MPI's start-up: the job ended by itself (%.1f s)" % (WHEN, wall))
fatal = [l for l in err.splitlines() if l.startswith("[FATAL]")]
check(not hung and p.returncode == 4, "exit 4 (got %s)" % (None if hung else p.returncode))
check(
    fatal
    and all(
        l.startswith(
            "[FATAL] start-up: timeout: MPI_Init and the ranks' first exchanges did not "
            "complete within 5 s; seen from rank "
        )
        for l in fatal
    ),
    "every [FATAL] line is the start-up's, naming no host to blame (%s)" % fatal[:2],
)
check(not hung and wall < 40, "within 40 s of a 5 s bound (%.1f s)" % wall)
check(not os.path.exists(os.path.join(rd, "env_audit.json")), "no report")
time.sleep(1)
left = session_pids(p.pid)
check(not left, "no process left behind (%s)" % left)
for pid in left:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
if failures:
    print("stderr tail:\n" + err[-2000:])
print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
