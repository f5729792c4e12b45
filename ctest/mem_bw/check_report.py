#!/usr/bin/env python3
"""Checks one host-path run of mem_bw, as ctest/run_program.py left it (the program's exit code was checked
there; --save-output kept its streams): its report and its output.

usage: check_report.py --mode basic|healthy|slow|pair|p2p_healthy|p2p_slow --np N --report-dir DIR --output PREFIX
basic: every figure recomputed from the recorded bytes and times. healthy, slow and pair hold the outlier rule
(issue 32): nothing named among healthy ranks; the slowed-rank hook (rank N/2) names that rank alone after
remeasuring; of two ranks, one slowed, a warning names both and nothing fails. p2p_healthy and p2p_slow hold
--p2p on one node (issue 46): every ordered pair of ranks copied; none named, or (GPUACCEPT_TEST_SLOW_P2P=1,2)
MEM_P2P_SLOW on 1->2 alone."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import fail_unless as check, program_run, status  # noqa: E402


def basic(r, out, np_):
    s = r["summary"]
    check(s["backend"] == "host", "backend %r" % s["backend"])
    check([t["test"] for t in s["tests"]] == ["host_triad"], "tests %r" % [t["test"] for t in s["tests"]])
    t = s["tests"][0]
    check(t["peak_GBps"] is None, "a CPU has no peak here")
    by_rank = {x["rank"]: x for node in r["nodes"] for x in node["ranks"]}
    check(len(t["gpus"]) == np_ and len(by_rank) == np_, "%d entries" % len(t["gpus"]))
    for g in t["gpus"]:
        rec = by_rank[g["rank"]]
        b = rec["bandwidth"]["host_triad"]
        check(b["check_ok"] is True, "rank %d: triad values wrong" % g["rank"])
        check(b["bytes"] == 3 * rec["buffer_bytes"], "triad counts 3 arrays")
        check(rec["buffer_bytes"] >= 16 << 20, "arrays of %d bytes are too small" % rec["buffer_bytes"])
        gbps = b["bytes"] / b["best_s"] / 1e9
        check(
            g["GBps"] > 0 and abs(g["GBps"] - gbps) <= 1e-9 * gbps,
            "rank %d: %g GB/s, recomputed %g" % (g["rank"], g["GBps"], gbps),
        )
        check(b["median_GBps"] <= b["GBps"] * (1 + 1e-12), "median above best")
        check(g["GBps"] < 2000, "rank %d: %g GB/s is not a host memory figure" % (g["rank"], g["GBps"]))
        check(g["efficiency"] is None and g["gpu"] is None, "host: efficiency and gpu null")
    names = [m for m in r["metrics"] if m["name"] == "GBps_host_triad"]
    check(len(names) == np_, "%d GBps_host_triad metrics" % len(names))
    lines = [l for l in out.splitlines() if re.match(r"\[COMPUTE\] node \d+ \S+ rank \d+ NUMA", l)]
    check(len(lines) == np_, "%d [COMPUTE] lines" % len(lines))
    check(r["verdict"]["result"] == "pass", "verdict %r" % r["verdict"])


def relative(r, mode, np_):
    slow = np_ // 2
    named = [(f["code"], f["severity"], f["rank"]) for f in r["findings"]]
    by_rank = {x["rank"]: x["bandwidth"]["host_triad"] for node in r["nodes"] for x in node["ranks"]}
    if mode == "healthy":
        # the one warning a healthy run on shared cores may give: its scatter too wide to judge a smaller gap
        named = [n for n in named if n[:2] != ("MEM_TOO_NOISY", "warn")]
        check(named == [], "healthy ranks: findings %r" % named)
    elif mode == "slow":
        check(named == [("MEM_BELOW_MEDIAN", "fail", slow)], "MEM_BELOW_MEDIAN on rank %d alone: %r" % (slow, named))
        check(all(len(b["measurements"]) == 3 for b in by_rank.values()), "measured 3 times on every rank")
        check(
            all(abs(b["GBps"] - max(b["measurements"])) <= 1e-9 * b["GBps"] for b in by_rank.values()),
            "GBps is the best of the measurements",
        )
        g = [x for x in r["summary"]["tests"][0]["gpus"] if x["rank"] == slow][0]
        check(
            g["flagged"] and g["bound"] and g["GBps"] < g["bound"] and len(g["measurements"]) == 3,
            "the summary holds its bound and measurements: %r" % g,
        )
    else:
        check(
            [c for c, _, _ in named] == ["MEM_PEERS_DIFFER"] and named[0][1] == "warn",
            "two ranks, one slowed: one MEM_PEERS_DIFFER warning: %r" % named,
        )


def p2p(r, mode, np_):
    pairs = r["p2p"]["pairs"]
    got = sorted((p["src"], p["dst"]) for p in pairs)
    check(got == [(s, d) for s in range(np_) for d in range(np_) if s != d], "ordered pairs %r" % got)
    check(all(p["GBps"] > 0 and p["src_rank"] == p["src"] and p["dst_rank"] == p["dst"] for p in pairs), "figures")
    named = sorted(
        (f["rank"], f["gpu"], f["message"].split(":")[0]) for f in r["findings"] if f["code"] == "MEM_P2P_SLOW"
    )
    want = [] if mode == "p2p_healthy" else [(1, 1, "%s GPU1->GPU2" % r["nodes"][0]["host"])]
    check(named == want, "MEM_P2P_SLOW %r, expected %r" % (named, want))
    check(sorted((p["src"], p["dst"]) for p in pairs if p["slow"]) == [(s, d) for _, s, _ in want for d in [2]], "slow")


def main():
    a, r, out = program_run("mem_bw", ["basic", "healthy", "slow", "pair", "p2p_healthy", "p2p_slow"])
    if a.mode == "basic":
        basic(r, out, a.np)
    elif a.mode.startswith("p2p"):
        p2p(r, a.mode, a.np)
    else:
        relative(r, a.mode, a.np)
    return status()


if __name__ == "__main__":
    sys.exit(main())
