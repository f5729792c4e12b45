#!/usr/bin/env python3
"""A report writer killed midway (SIGKILL during the write) leaves its temporary file behind: the next run of the
program must remove the stale ones and keep a live writer's (issue 45, item 9). Planted in the report directory,
an hour old: a temporary of a dead process of this host, one of the unnamed form earlier versions wrote, and one
of a live process (this script). Usage: check_stale_report_temps.py PROGRAM WORK -- MPIEXEC... Exit 0 pass, 1 fail."""
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, failures  # noqa: E402

PROGRAM, WORK = sys.argv[1:3]
MPIEXEC = sys.argv[sys.argv.index("--") + 1 :]
name = os.path.basename(PROGRAM)
host = socket.gethostname().split("/")[0][:64]

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
dead = subprocess.Popen(["true"])
dead.wait()
planted = {
    "dead": ".%s.json.tmp.%s.%d.aB3dE6" % (name, host, dead.pid),
    "unnamed": ".%s.json.Xy7wQ2" % name,
    "live": ".%s.json.tmp.%s.%d.kL9mN0" % (name, host, os.getpid()),
}
hour_ago = time.time() - 3600
for path in planted.values():
    with open(os.path.join(WORK, path), "w") as f:
        f.write('{"partial":')
    os.utime(os.path.join(WORK, path), (hour_ago, hour_ago))

env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
run = subprocess.run(
    MPIEXEC + ["-np", "1", PROGRAM, "--report-dir", WORK], env=env, capture_output=True, text=True, timeout=120
)
left = set(os.listdir(WORK))
print("left in the report directory:", sorted(left))
check(planted["dead"] not in left, "a dead writer's temporary was removed")
check(planted["unnamed"] not in left, "an old unnamed temporary was removed")
check(planted["live"] in left, "a live writer's temporary was kept")
temps = [f for f in left if f.startswith(".%s.json." % name) and f != planted["live"]]
check(not temps, "the run left no temporary of its own")
if failures:
    print(run.stdout + run.stderr)
sys.exit(1 if failures else 0)
