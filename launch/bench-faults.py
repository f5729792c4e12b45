#!/usr/bin/env python3
"""What the whole suite names, and what it costs, on the namespace cluster's fault cases (issue 44, item 8).

Brings up ctest/cluster/cluster.sh's cluster of N nodes (one rank each) with every link at the fabric's rate,
runs `gpuaccept run --hostfile` with no fault RUNS times, then once per fault case, and prints per case the nodes
and links the summary names and the run's wall time over the fault-free median. A case is right when it names
exactly its own entity (the slow node; for a slow link, the link and no node) and a fault-free run names nothing.
The nodes have no GPU: `--expect-gpus 0` runs every program on its host path, whichever build BIN_DIR holds.

    bench-faults.py --bin-dir build/bin [--nodes 6] [--healthy-runs 2] [--profile standard]
                    [--cases node:node01:60,node:node04:60,node:node03:10,link:node02:node05:60]
                    [--fabric-mbit 1000] [--run-timeout 1500] [--work DIR] [--table FILE]
                    [--only STEP,...] [--repeat N]

A case is KIND:ARGS:FACTOR: `node:NODE:F` shapes all of NODE's traffic to the fabric's rate / F; `link:A:B:F`
shapes only the traffic between A and B. node01 is the head node, where rank 0 runs. --only runs only those
steps (gpuaccept run --only), --repeat runs each case N times to count its outcomes. Needs root (namespaces, tc)
and mpirun; a benchmark, not a test: it asserts nothing, it prints. Exit 1 when a case named the wrong entity."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "ctest", "cluster", "cluster.sh")
DEFAULT_CASES = "node:node01:60,node:node04:60,node:node03:10,node:node06:10,link:node02:node05:60"


def cluster(*args):
    p = subprocess.run([CLUSTER, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-faults: cluster.sh {' '.join(args)}: exit {p.returncode}: {p.stdout.strip()[-500:]}")
    return p.stdout


def parse_case(text):
    parts = text.split(":")
    if parts[0] == "node" and len(parts) == 3:
        return {"kind": "node", "nodes": [parts[1]], "factor": float(parts[2]), "name": text}
    if parts[0] == "link" and len(parts) == 4:
        return {"kind": "link", "nodes": sorted(parts[1:3]), "factor": float(parts[3]), "name": text}
    sys.exit(f"bench-faults: bad case '{text}' (node:NODE:FACTOR or link:A:B:FACTOR)")


def apply_fault(case, fabric_mbit):
    cluster("clear")
    if case is None:
        return
    rate = f"{max(1, int(fabric_mbit / case['factor']))}mbit"
    if case["kind"] == "node":
        cluster("slow", case["nodes"][0], rate)
    else:
        cluster("slow-link", case["nodes"][0], case["nodes"][1], rate)


def named_entities(summary):
    """The nodes and links the summary holds abnormal, as sorted lists of names."""
    nodes = sorted(a["host"] for a in summary.get("abnormal_nodes", []))
    links = []
    for link in summary.get("abnormal_links", []):
        ends = link.get("hosts") or link.get("ends") or []
        links.append("-".join(sorted(ends)))
    return nodes, sorted(links)


def run_suite(args, work, label):
    d = os.path.join(work, label)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    hostfile = cluster("hostfile").strip()
    cmd = [CLUSTER, "run", os.path.join(args.bin_dir, "gpuaccept"), "run", "--hostfile", hostfile]
    cmd += ["--profile", args.profile, "--baseline", "none", "--expect-gpus", "0", "--report-dir", d]
    if args.only:
        cmd += ["--only", args.only]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=args.run_timeout)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as ex:
        rc, out = "timeout", ex.output or ""
    wall = time.time() - t0
    with open(os.path.join(d, "gpuaccept.log"), "w") as f:
        f.write(out if isinstance(out, str) else out.decode(errors="replace"))
    try:
        with open(os.path.join(d, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        summary = {}
    nodes, links = named_entities(summary)
    return {"rc": rc, "wall": wall, "nodes": nodes, "links": links, "load": os.getloadavg()[0]}


def expected(case):
    if case is None:
        return [], []
    if case["kind"] == "node":
        return case["nodes"], []
    return [], ["-".join(case["nodes"])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--nodes", type=int, default=6)
    ap.add_argument("--healthy-runs", type=int, default=2)
    ap.add_argument("--profile", default="standard")
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--fabric-mbit", type=int, default=1000)
    ap.add_argument("--run-timeout", type=int, default=1500)
    ap.add_argument("--work", default="/tmp/bench-faults")
    ap.add_argument("--table")
    ap.add_argument("--only", help="run only these steps (gpuaccept run --only)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each fault case")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench-faults: needs root (network namespaces, tc)")
    cases = [parse_case(c) for c in args.cases.split(",") if c]
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    cluster("up", str(args.nodes), "1")
    cluster("fabric", f"{args.fabric_mbit}mbit")
    rows = []
    try:
        for i in range(args.healthy_runs):
            apply_fault(None, args.fabric_mbit)
            r = run_suite(args, args.work, f"healthy{i + 1}")
            rows.append(("fault-free", None, r))
            print(
                f"fault-free run {i + 1}: rc {r['rc']}, {r['wall']:.0f} s, named {r['nodes'] + r['links']}", flush=True
            )
        for case in cases:
            for k in range(args.repeat):
                apply_fault(case, args.fabric_mbit)
                label = case["name"].replace(":", "_") + (f"_{k + 1}" if args.repeat > 1 else "")
                r = run_suite(args, args.work, label)
                rows.append((case["name"], case, r))
                print(f"{case['name']}: rc {r['rc']}, {r['wall']:.0f} s, named {r['nodes'] + r['links']}", flush=True)
    finally:
        cluster("down")
    healthy = [r["wall"] for name, c, r in rows if c is None]
    base = statistics.median(healthy) if healthy else float("nan")
    lines = [
        f"{args.nodes} nodes x 1 rank, profile {args.profile}, fabric {args.fabric_mbit} Mbit/s; "
        f"fault-free median {base:.0f} s",
        "",
        "| case | expected | named nodes | named links | right | wall s | x fault-free | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    wrong = 0
    for name, case, r in rows:
        want_nodes, want_links = expected(case)
        right = r["nodes"] == want_nodes and r["links"] == want_links
        wrong += not right
        want = ", ".join(want_nodes + want_links) or "nothing"
        lines.append(
            f"| {name} | {want} | {', '.join(r['nodes']) or '-'} | {', '.join(r['links']) or '-'} | "
            f"{'yes' if right else 'NO'} | {r['wall']:.0f} | {r['wall'] / base:.2f} | {r['load']:.1f} |"
        )
    text = "\n".join(lines)
    print(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
