"""What the front-end checks share: the test's arguments (TEST GPUACCEPT FIXTURES WORKDIR), the programs the
binary lists, and running, loading and merging."""
import glob
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gatest  # noqa: E402
from gatest import check  # noqa: E402

failures = gatest.failures  # the one list of failed checks (the same list), read by check_suite.py

TEST, GA, FX, WORK = sys.argv[1:5]


BIN = os.path.dirname(GA)


def list_programs():
    """The suite's programs in run order, from the registry the binary carries (suite/summary/programs.c)."""
    p = subprocess.run([GA, "run", "--list-programs"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        sys.exit("FAIL gpuaccept run --list-programs: exit %d %s" % (p.returncode, p.stderr))
    return [line.split("\t")[1] for line in p.stdout.splitlines()]


PROGRAMS = list_programs()


def run(args, env=None, timeout=100):
    e = dict(os.environ)
    for k in ("SLURM_JOB_ID", "OMPI_MCA_orte_default_hostfile", "KUBERNETES_SERVICE_HOST"):
        e.pop(k, None)
    e.update(env or {})
    t0 = time.time()
    p = subprocess.run([GA] + args, capture_output=True, text=True, env=e, timeout=timeout)
    p.wall = time.time() - t0
    return p


def load(path):
    with open(path) as f:
        return json.load(f)


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def merge(case, out, extra=()):
    return merge_dir(os.path.join(FX, case, "reports"), out, extra)


H100 = "NVIDIA H100 80GB HBM3"


def h100_shaped(case, slow_rank):
    """The case's reports with every rank on an H100 (device = its local rank) and a bf16 GEMM figure."""
    out = fresh(case + "-h100-%s" % slow_rank)
    for path in glob.glob(os.path.join(FX, case, "reports", "*.json")):
        r = load(path)
        for node in r.get("nodes", []):
            for rk in node["ranks"]:
                rk["device"] = {
                    "index": rk["local_rank"],
                    "name": H100,
                    "uuid": "GPU-%d" % rk["rank"],
                    "pci_bus_id": "0000:%02x:00.0" % (0x18 + rk["local_rank"]),
                }
        for m in r.get("metrics", []) + r.get("findings", []):
            if isinstance(m.get("rank"), int):
                m["gpu"] = m["rank"] % 2
        if r.get("program") == "gemm_flops":
            for rank in range(r["world_size"]):
                r["metrics"].append(
                    {
                        "name": "tflops_bf16",
                        "value": 430.0 if rank == slow_rank else 780.0,
                        "unit": "TFLOP/s",
                        "higher_is_better": True,
                        "host": "gpu-node-%02d" % (rank // 2 + 1),
                        "node_index": rank // 2,
                        "rank": rank,
                        "gpu": rank % 2,
                    }
                )
        with open(os.path.join(out, os.path.basename(path)), "w") as f:
            json.dump(r, f)
    return out


def merge_dir(reports, out, extra=()):
    d = fresh(out)
    p = run(["merge", "--report-dir", reports, "--out-dir", d] + list(extra))
    return p, d


def expected_exit(summary):
    codes = {
        "STEP_CRASHED": 5,
        "STEP_INTERNAL_ERROR": 5,
        "STEP_TIMEOUT": 4,
        "STEP_INTERRUPTED": 4,
        "STEP_ENV_ERROR": 3,
        "STEP_MISSING": 3,
        "STEP_USAGE_ERROR": 2,
    }
    fails = [f["code"] for f in summary["findings"] if f["severity"] == "fail"]
    if any(c not in codes for c in fails):
        return 1
    return max([codes[c] for c in fails] or [0])


def hostfile(d, text):
    path = os.path.join(d, "hosts")
    with open(path, "w") as f:
        f.write(text)
    return path


def copy_case(case, name, skip=()):
    d = fresh(name)
    src = os.path.join(FX, case, "reports")
    for f in os.listdir(src):
        if f not in skip:
            shutil.copy(os.path.join(src, f), d)
    return d


def refused(d, what, timeout=30):
    """merge of d must stop with exit 2, one 'gpuaccept merge:' line, and no summary."""
    out = fresh("refused-out")
    try:
        p = run(["merge", "--report-dir", d, "--out-dir", out, "--baseline", "none"], timeout=timeout)
    except subprocess.TimeoutExpired:
        return check(False, what + ": merge hung")
    lines = p.stderr.strip().splitlines()
    return check(
        p.returncode == 2
        and len(lines) == 1
        and lines[0].startswith("gpuaccept merge: ")
        and not os.path.exists(os.path.join(out, "summary.json")),
        "%s: refused, exit %d (%s)" % (what, p.returncode, p.stderr.strip()[:160]),
    )


def edit(path, fn):
    j = load(path)
    fn(j)
    with open(path, "w") as f:
        json.dump(j, f)


def after_prog(words, prog):
    """The words after the program path and the options every step gets (--report-dir, --timeout)."""
    w = next(words[i + 1 :] for i, w in enumerate(words) if os.path.basename(w) == prog)
    return w[w.index("--timeout") + 2 :] if "--timeout" in w else w
