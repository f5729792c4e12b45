"""End-to-end checks of mem_bw on the host path: runs it under mpiexec and checks its output and report.

usage: check_mem.py --bin PATH --np N --mode basic|badflags|healthy|slow|pair --workdir DIR -- MPIEXEC...
healthy, slow and pair hold the outlier rule (issue 32): nothing named among healthy ranks (at
--shared-cores-tolerance); the slowed-rank hook names that rank alone after remeasuring; of two ranks, one
slowed, a warning names both and nothing fails.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import failures as errors, fail_unless as check, status as gatest_status  # noqa: E402


def run(mpiexec, np_, args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(list(mpiexec) + ["-np", str(np_)] + args, capture_output=True, text=True, timeout=120,
                          env=e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--workdir", required=True)
    # the tolerance of the healthy and slowed 4-rank runs: GA_SHARED_CORES_TOLERANCE, ctest/CMakeLists.txt
    ap.add_argument("--shared-cores-tolerance")
    ap.add_argument("mpiexec", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    for f in os.listdir(a.workdir):
        os.remove(os.path.join(a.workdir, f))
    # Shared CI cores: figures are checked, the median flagging is proven by the fixture tests.
    base = [a.bin, "--backend", "host", "--report-dir", a.workdir, "--tolerance", "100"]

    if a.mode == "basic":
        p = run(a.mpiexec, a.np, base + ["--quick"])
        check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-2000:]))
        with open(os.path.join(a.workdir, "mem_bw.json")) as f:
            r = json.load(f)
        s = r["summary"]
        check(s["backend"] == "host", "backend %r" % s["backend"])
        check([t["test"] for t in s["tests"]] == ["host_triad"], "tests %r" % [t["test"] for t in s["tests"]])
        t = s["tests"][0]
        check(t["peak_GBps"] is None, "a CPU has no peak here")
        by_rank = {x["rank"]: x for node in r["nodes"] for x in node["ranks"]}
        check(len(t["gpus"]) == a.np and len(by_rank) == a.np, "%d entries" % len(t["gpus"]))
        for g in t["gpus"]:
            rec = by_rank[g["rank"]]
            b = rec["bandwidth"]["host_triad"]
            check(b["check_ok"] is True, "rank %d: triad values wrong" % g["rank"])
            check(b["bytes"] == 3 * rec["buffer_bytes"], "triad counts 3 arrays")
            check(rec["buffer_bytes"] >= 16 << 20, "arrays of %d bytes are too small" % rec["buffer_bytes"])
            gbps = b["bytes"] / b["best_s"] / 1e9
            check(g["GBps"] > 0 and abs(g["GBps"] - gbps) <= 1e-9 * gbps,
                  "rank %d: %g GB/s, recomputed %g" % (g["rank"], g["GBps"], gbps))
            check(b["median_GBps"] <= b["GBps"] * (1 + 1e-12), "median above best")
            check(g["GBps"] < 2000, "rank %d: %g GB/s is not a host memory figure" % (g["rank"], g["GBps"]))
            check(g["efficiency"] is None and g["gpu"] is None, "host: efficiency and gpu null")
        names = [m for m in r["metrics"] if m["name"] == "GBps_host_triad"]
        check(len(names) == a.np, "%d GBps_host_triad metrics" % len(names))
        lines = [l for l in p.stdout.splitlines() if re.match(r"\[COMPUTE\] node \d+ \S+ rank \d+ NUMA", l)]
        check(len(lines) == a.np, "%d [COMPUTE] lines" % len(lines))
        check(r["verdict"]["result"] == "pass", "verdict %r" % r["verdict"])
    elif a.mode in ("healthy", "slow", "pair"):
        slow = a.np // 2
        env = {} if a.mode == "healthy" else {"GPUACCEPT_TEST_SLOW_RANK": str(slow), "GPUACCEPT_TEST_SLOW_FACTOR": "3"}
        rel = [a.bin, "--backend", "host", "--report-dir", a.workdir, "--quick"]
        if a.mode != "pair" and a.shared_cores_tolerance:  # two ranks name nobody: the pair is held at the default
            rel += ["--tolerance", a.shared_cores_tolerance]
        p = run(a.mpiexec, a.np, rel, env=env)
        with open(os.path.join(a.workdir, "mem_bw.json")) as f:
            r = json.load(f)
        named = [(f["code"], f["severity"], f["rank"]) for f in r["findings"]]
        by_rank = {x["rank"]: x["bandwidth"]["host_triad"] for node in r["nodes"] for x in node["ranks"]}
        if a.mode == "healthy":
            check(p.returncode == 0 and named == [], f"healthy ranks at {a.shared_cores_tolerance or 10}%: exit {p.returncode}, findings {named!r}")
        elif a.mode == "slow":
            check(p.returncode == 1 and named == [("MEM_BELOW_MEDIAN", "fail", slow)],
                  "MEM_BELOW_MEDIAN on rank %d alone, exit 1: exit %d, %r" % (slow, p.returncode, named))
            check(all(len(b["measurements"]) == 3 for b in by_rank.values()), "measured 3 times on every rank")
            check(all(abs(b["GBps"] - max(b["measurements"])) <= 1e-9 * b["GBps"] for b in by_rank.values()),
                  "GBps is the best of the measurements")
            g = [x for x in r["summary"]["tests"][0]["gpus"] if x["rank"] == slow][0]
            check(g["flagged"] and g["bound"] and g["GBps"] < g["bound"] and len(g["measurements"]) == 3,
                  "the summary holds its bound and measurements: %r" % g)
        else:
            check(p.returncode == 0 and [c for c, _, _ in named] == ["MEM_PEERS_DIFFER"]
                  and named[0][1] == "warn", "two ranks, one slowed: one MEM_PEERS_DIFFER warning: exit %d, %r"
                  % (p.returncode, named))
    elif a.mode == "badflags":
        for bad in (["--size", "1"], ["--size", "12Q"], ["--reps", "0"], ["--backend", "tpu"], ["--bogus"],
                    ["--min-efficiency", "-1"], ["--tolerance", "0.1"], ["--remeasure", "x"],
                    ["--relative", "never"]):
            p = run(a.mpiexec, a.np, base + bad)
            check(p.returncode == 2, "%r: exit %d, expected 2" % (bad, p.returncode))
            lines = [l for l in p.stderr.splitlines() if l.startswith("mem_bw:")]
            check(len(lines) == 1, "%r: %d error lines: %r" % (bad, len(lines), p.stderr))
    else:
        errors.append("unknown mode " + a.mode)
    return gatest_status()


if __name__ == "__main__":
    sys.exit(main())
