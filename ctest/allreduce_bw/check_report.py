#!/usr/bin/env python3
"""Checks one run of allreduce_bw: its JSON report and its output, as ctest/run_program.py left them (it ran
the program and checked its exit code, output patterns and time; --save-output wrote the streams).

usage: check_report.py [checks] --report-dir DIR --output PREFIX
Every figure is recomputed from the report's own times and sizes with nccl-tests' formulas, so a wrong formula
or byte count fails the test."""
import argparse
import json
import os
import re
import sys

ESIZE = {
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float": 4,
    "double": 8,
    "bfloat16": 2,
    "f8e4m3": 1,
    "f8e5m2": 1,
}
# bytes / (count * element size), and the bus factor, per collective (nccl-tests)
PER_RANK = {"allgather", "reduce_scatter", "alltoall", "gather", "scatter", "hypercube"}


def factor(coll, n):
    if coll == "allreduce":
        return 2.0 * (n - 1) / n
    if coll in PER_RANK and coll != "hypercube":
        return (n - 1) / n
    return 1.0


def alg_share(coll, n):
    """nccl-tests' hypercube counts the n-1 blocks a rank receives, not the whole receive buffer."""
    return (n - 1) / n if coll == "hypercube" else 1.0


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def check_results(coll, results, group, mode_avg, where):
    if not results:
        fail(f"{where}: no results")
    for r in results:
        t = r["time_us"]
        alg = r["bytes"] * alg_share(coll, group) / 1e9 / (t * 1e-6) if t > 0 else 0.0
        if not close(r["algbw_GBps"], alg):
            fail(f"{where}: algbw {r['algbw_GBps']} != bytes/time {alg} at {r['bytes']} B")
        if not close(r["busbw_GBps"], alg * factor(coll, group)):
            fail(f"{where}: busbw {r['busbw_GBps']} != algbw x factor at {r['bytes']} B")
        mult = group if coll in PER_RANK else 1
        if r["bytes"] != r["count"] * ESIZE[r["datatype"]] * mult:
            fail(f"{where}: {r['bytes']} B is not count {r['count']} x {ESIZE[r['datatype']]} x {mult}")
        if coll in PER_RANK and (r["count"] * ESIZE[r["datatype"]]) % 16:
            fail(f"{where}: per-rank count {r['count']} is not aligned to 16 bytes as nccl-tests aligns it")
        rt = r["rank_time_us"]
        if not (rt["min"] <= rt["mean"] + 1e-9 and rt["mean"] <= rt["max"] + 1e-9):
            fail(f"{where}: rank times out of order {rt}")
        if mode_avg and not close(t, rt["mean"]):
            fail(f"{where}: time {t} is not the mean {rt['mean']}")
        if not isinstance(r["slowest"]["rank"], int) or not r["slowest"]["host"]:
            fail(f"{where}: slowest rank/host missing")
        if r["placement"] not in ("out-of-place", "in-place"):
            fail(f"{where}: placement {r['placement']}")


def check_figures(entry, where):
    res = entry["results"]
    avg = sum(r["busbw_GBps"] for r in res) / len(res)
    if not close(entry["avg_busbw_GBps"], avg):
        fail(f"{where}: avg_busbw {entry['avg_busbw_GBps']} != mean of busbw {avg}")
    top = max(r["bytes"] for r in res)
    oop = [r for r in res if r["bytes"] == top and r["placement"] == "out-of-place"][-1]
    if not close(entry["busbw_at_max_GBps"], oop["busbw_GBps"]) or entry["max_bytes"] != top:
        fail(f"{where}: busbw_at_max {entry['busbw_at_max_GBps']} != out-of-place busbw at {top} B")
    wrong = sum(r["wrong"] for r in res)
    if entry["wrong_total"] != wrong:
        fail(f"{where}: wrong_total {entry['wrong_total']} != sum {wrong}")
    if entry["out_of_bounds"] != sum(1 for r in res if r["wrong"] > 0):
        fail(f"{where}: out_of_bounds {entry['out_of_bounds']}")


def check_rails(rep, a):
    """--pattern rails: how many rail pairs, each two ranks of one local index on two nodes, and exactly the
    ranks named by COMM_SLOW_RAIL."""
    rails = rep["rails"]
    if len(rails["pairs"]) != a.rail_pairs:
        fail(f"rail pairs: {len(rails['pairs'])}, expected {a.rail_pairs}")
    per = rails["gpus_per_node"]
    for x in rails["pairs"]:
        if x["hosts"][0] == x["hosts"][1] or {r % per for r in x["ranks"]} != {x["rail"]}:
            fail(f"rail pair {x}: not GPU {x['rail']} of two nodes")
    named = sorted(f["rank"] for f in rep["findings"] if f["code"] == "COMM_SLOW_RAIL")
    if named != sorted(a.rail_rank):
        fail(f"COMM_SLOW_RAIL on ranks {named}, expected {sorted(a.rail_rank)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report-dir", required=True)
    ap.add_argument("--output", required=True, help="PREFIX of the run's PREFIX.stdout and PREFIX.stderr")
    ap.add_argument("--expect-exit", type=int, default=0, help="the verdict's exit code")
    ap.add_argument("--group", type=int, help="ranks per communicator (default: world size)")
    ap.add_argument("--sizes", type=int, help="sizes in the sweep")
    ap.add_argument("--combinations", type=int, default=1)
    ap.add_argument("--wrong", choices=["zero", "some"], default="zero")
    ap.add_argument("--finding", action="append", default=[], help="a fault code that must be present")
    ap.add_argument("--no-finding", action="store_true", help="no finding at all")
    ap.add_argument("--pairs", type=int, help="pairs expected over all rounds")
    ap.add_argument("--suspect-rank", type=int, action="append", default=[])
    ap.add_argument("--rail-pairs", type=int, help="rails: rail pairs expected over all rounds")
    ap.add_argument("--rail-rank", type=int, action="append", default=[], help="a rank COMM_SLOW_RAIL names")
    ap.add_argument("--no-report", action="store_true", help="the run must abort: no report")
    ap.add_argument("--patterns", help="comma list: summary.patterns, in order")
    ap.add_argument("--coverage", help="TESTED,OF: pairs tested of all pairs (and the untested listed)")
    ap.add_argument("--nodes", type=int, help="entries of summary.node.nodes (the node pattern ran)")
    a = ap.parse_args()
    path = os.path.join(a.report_dir, "allreduce_bw.json")
    with open(a.output + ".stdout") as f:
        out = f.read()  # the nccl-tests table and the [COMM] lines
    if a.no_report:
        if os.path.exists(path):
            fail("a report was written by a run that should have aborted")
        print("OK")
        return
    rep = json.load(open(path))
    s = rep["summary"]
    for k in (
        "backend",
        "collective",
        "datatype",
        "op",
        "results",
        "avg_busbw_GBps",
        "busbw_at_max_GBps",
        "max_bytes",
        "wrong_total",
        "out_of_bounds",
        "pairs",
    ):
        if k not in s:
            fail(f"summary lacks {k}")
    if s["backend"] != "mpi":
        fail(f"backend {s['backend']} (no GPU here: the host path must be chosen)")
    world = rep["world_size"]
    group = a.group or world
    coll = s["collective"]
    combos = s["combinations"]
    if len(combos) != a.combinations:
        fail(f"{len(combos)} combinations, expected {a.combinations}")
    if s["results"] != combos[0]["results"]:
        fail("top-level results are not the first combination's")
    patterns = s.get("patterns", [s.get("pattern", "world")])
    if a.patterns and patterns != a.patterns.split(","):
        fail(f"patterns {patterns}, expected {a.patterns}")
    if s["pattern"] != patterns[0]:
        fail(f"pattern {s['pattern']} is not the first of {patterns}")
    for c in combos:
        where = f"{coll} {c['datatype']} {c['op']} ({c.get('pattern')})"
        pattern = c.get("pattern", "world")
        if pattern not in patterns:
            fail(f"{where}: a combination of a pattern that did not run")
        # a pair or rail pair has 2 ranks; the node pattern's communicator is the node: every rank here
        g = 2 if pattern in ("pairs", "rails") else world if pattern == "node" else group
        check_results(coll, c["results"], g, s["average"] == 1 and pattern not in ("pairs", "rails"), where)
        check_figures(c, where)
        if a.sizes and len(c["results"]) != 2 * a.sizes:
            fail(f"{where}: {len(c['results'])} results, expected {2 * a.sizes}")
    wrong = s["wrong_total"]
    if a.wrong == "zero" and (wrong != 0 or s["out_of_bounds"] != 0):
        fail(f"wrong_total {wrong}")
    if a.wrong == "some" and wrong <= 0:
        fail("no wrong element detected")
    if wrong != sum(c["wrong_total"] for c in combos):
        fail("wrong_total is not the sum over combinations")

    # the stdout table: one line per size and combination, and nccl-tests' footer
    if "world" in patterns:
        # hypercube's redop column is empty, as in nccl-tests
        lines = [l for l in out.splitlines() if re.match(r"^\s+\d+\s+\d+\s+\S+\s+(\S+\s+)?-?\d+\s", l)]
        exp = sum(len(c["results"]) // 2 for c in combos if c.get("pattern", "world") == "world")
        if len(lines) != exp:
            fail(f"{len(lines)} table lines, expected {exp}")
        # one table and one footer for the whole run, whatever the combinations
        if out.count("# Out of bounds values :") != 1 or out.count("# Avg bus bandwidth") != 1:
            fail("not exactly one nccl-tests footer")
        names = [m["name"] for m in rep["metrics"]]
        if "busbw_at_max" not in names or "avg_busbw" not in names:
            fail(f"metrics {names}")

    codes = [f["code"] for f in rep["findings"]]
    for code in a.finding:
        if code not in codes:
            fail(f"finding {code} missing (have {codes})")
    if a.no_finding and codes:
        fail(f"unexpected findings {codes}")
    if rep["verdict"]["exit_code"] != a.expect_exit:
        fail(f"verdict exit code {rep['verdict']['exit_code']}")

    if a.pairs is not None:
        pr = s["pairs"]
        if pr is None or len(pr["pairs"]) != a.pairs:
            fail(f"pairs: {pr and len(pr['pairs'])}, expected {a.pairs}")
        med = sorted(x["busbw_GBps"] for x in pr["pairs"])
        n = len(med)
        median = med[n // 2] if n % 2 else (med[n // 2 - 1] + med[n // 2]) / 2
        if not close(pr["median_busbw_GBps"], median):
            fail(f"pairs median {pr['median_busbw_GBps']} != {median}")
        for x in pr["pairs"]:
            below = x["busbw_GBps"] < median * (1 - pr["tolerance"])
            if x["flagged"] != (below and not x["contended"]) or (x["contended"] and not below):
                fail(f"pair {x} flagged wrongly")
            # held up by the host: only where ranks share CPUs, and only when its ranks waited for a CPU
            if x["contended"] and not (pr["cpus_shared"] and x["cpu_wait"] is not None and x["cpu_wait"] >= 0.25):
                fail(f"pair {x} called held up by its host without the evidence")
            if len(set(x["ranks"])) != 2:
                fail(f"pair {x} is not two ranks")
        seen = set()
        for rnd in range(pr["rounds"]):
            ranks = [r for x in pr["pairs"] if x["round"] == rnd for r in x["ranks"]]
            if len(ranks) != len(set(ranks)):
                fail(f"round {rnd}: a rank is in two pairs")
            for x in pr["pairs"]:
                if x["round"] == rnd:
                    key = tuple(sorted(x["ranks"]))
                    if key in seen:
                        fail(f"pair {key} repeated across rounds")
                    seen.add(key)
        got = sorted(x["rank"] for x in pr["suspects"])
        if got != sorted(a.suspect_rank):
            fail(f"suspects {got}, expected {sorted(a.suspect_rank)}")
        if not any(m["name"] == "pair_busbw_min" for m in rep["metrics"]):
            fail("pair_busbw_min metric missing")
        for x in pr["pairs"]:
            if x["measured"] < 1 or x["iters"] < 1:
                fail(f"pair {x}: measured and iters must be at least 1")
    if a.rail_pairs is not None:
        check_rails(rep, a)
    if a.coverage:
        tested, of = (int(v) for v in a.coverage.split(","))
        cov = s["pairs"]["coverage"]
        if (cov["tested"], cov["of"]) != (tested, of) or len(cov["untested"]) != of - tested:
            fail(f"coverage {cov}, expected {tested} of {of}")
        pairs_seen = {tuple(sorted(x["ranks"])) for x in s["pairs"]["pairs"]}
        for u in cov["untested"]:
            if tuple(sorted(u["ranks"])) in pairs_seen:
                fail(f"untested pair {u} was tested")
        if not re.search(rf"pairs: {tested} of {of} pairs tested", out + open(a.output + ".stderr").read()):
            fail("no stdout line says how many pairs were tested")
    if a.nodes is not None:
        nd = s["node"]
        if nd is None or len(nd["nodes"]) != a.nodes:
            fail(f"node: {nd}, expected {a.nodes} nodes")
        for x in nd["nodes"]:
            if x["measured"] < 1 or (x["ranks"] >= 2 and x["busbw_GBps"] <= 0):
                fail(f"node {x}: no figure")
        if not any(m["name"] == "node_busbw" for m in rep["metrics"]):
            fail("node_busbw metric missing")
    print("OK")


if __name__ == "__main__":
    main()
