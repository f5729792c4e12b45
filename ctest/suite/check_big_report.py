#!/usr/bin/env python3
"""A step that writes a 300 MB report inside `gpuaccept run` (issue 18): the report is over the cap a gpuaccept
file may have, so the step is bad_report (STEP_BAD_REPORT, exit 5), the file is moved aside, and gpuaccept's
peak memory (/usr/bin/time -v) stays far below the report's size: it was never read whole.

usage: check_big_report.py GPUACCEPT WORKDIR. Exit 0 pass, 1 fail."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, finish  # noqa: E402

GPUACCEPT, WORK = sys.argv[1], sys.argv[2]
REPORT_MB = 300
RSS_LIMIT_MB = 64  # gpuaccept's own need is a few MB; reading the report would take over 300

# Writes a well-formed JSON report of REPORT_MB into --report-dir, then exits 0: only its size is wrong.
FAKE = """#!/usr/bin/env python3
import os
import sys


if os.environ.get("OMPI_COMM_WORLD_RANK", "0") != "0":
    sys.exit(0)  # rank 0 writes the report, as the programs do
a = sys.argv
d = a[a.index("--report-dir") + 1]
run_id = a[a.index("--run-id") + 1]
chunk = "x" * (1 << 20)
with open(d + "/gemm_flops.json", "w") as f:
    f.write('{"schema": "gpuaccept.report", "schema_version": 1, "program": "gemm_flops", "run_id": "%%s", "pad": "' %% run_id)
    for _ in range(%d):
        f.write(chunk)
    f.write('"}')
print("[RESULT] SUCCESS")
"""


shutil.rmtree(WORK, ignore_errors=True)
fake = os.path.join(WORK, "fakebin")
os.makedirs(fake)
with open(os.path.join(fake, "gemm_flops"), "w") as f:
    f.write(FAKE % REPORT_MB)
os.chmod(os.path.join(fake, "gemm_flops"), 0o755)
d = os.path.join(WORK, "run")
p = subprocess.run(
    [
        "/usr/bin/time",
        "-v",
        GPUACCEPT,
        "run",
        "--only",
        "gemm_flops",
        "--report-dir",
        d,
        "--baseline",
        "none",
        "--step-timeout",
        "120",
    ],
    env=dict(os.environ, GPUACCEPT_BIN_DIR=fake),
    capture_output=True,
    text=True,
    timeout=300,
)
print(p.stdout[-3000:], p.stderr[-3000:])
m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
rss_mb = int(m.group(1)) / 1024 if m else None
check(p.returncode == 5, "exit 5 (%d)" % p.returncode)
check(
    rss_mb is not None and rss_mb < RSS_LIMIT_MB,
    "gpuaccept's peak RSS %s MB, below %d MB for a %d MB report" % (rss_mb, RSS_LIMIT_MB, REPORT_MB),
)
with open(os.path.join(d, "suite_run.json")) as f:
    step = next(s for s in json.load(f)["steps"] if s["program"] == "gemm_flops")
check(step["status"] == "bad_report", "the step is bad_report (%s)" % step["status"])
with open(os.path.join(d, "summary.json")) as f:
    s = json.load(f)
check(
    "STEP_BAD_REPORT" in s["verdict"]["fault_codes"] and s["verdict"]["exit_code"] == 5,
    "summary: STEP_BAD_REPORT, exit 5 (%s, %s)" % (s["verdict"]["fault_codes"], s["verdict"]["exit_code"]),
)
check(
    not os.path.exists(os.path.join(d, "gemm_flops.json"))
    and os.path.getsize(os.path.join(d, "gemm_flops.json.invalid")) > REPORT_MB << 20,
    "the report was moved aside to gemm_flops.json.invalid",
)
os.unlink(os.path.join(d, "gemm_flops.json.invalid"))  # 300 MB: not left in the build tree
finish()
