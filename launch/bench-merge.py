#!/usr/bin/env python3
"""Benchmark of `gpuaccept merge` at scale (issue 14): generates gemm_flops and mem_bw reports of NODES nodes
x GPUS GPUs (the shape of the programs' reports, one rank per GPU, with a GPU model) and a baseline that most
GPUs miss, then times `gpuaccept merge` over them and prints the wall time and peak memory.
Usage: launch/bench-merge.py GPUACCEPT [--nodes 1024] [--gpus 8] [--work DIR]. Goal: 8,192 GPUs in <= 2 s
and <= 500 MB. The generator (write_reports, write_baseline) is also imported by the suite's HTML-at-scale
test (ctest/suite/check_suite.py html_scale), so that both draw the same reports."""
import argparse
import json
import os
import random
import resource
import subprocess
import tempfile
import time

MODEL = "NVIDIA H100 80GB HBM3"
PROGRAMS = {"gemm_flops": ("tflops_bf16", "TFLOP/s", 700.0), "mem_bw": ("GBps_device_triad", "GB/s", 3000.0)}


def make_report(program, n_nodes, gpus, rng):
    """One program's report of n_nodes x gpus GPUs, values within 3% of healthy, about 2% of GPUs flagged."""
    metric, unit, healthy = PROGRAMS[program]
    nodes, metrics, findings = [], [], []
    for n in range(n_nodes):
        host = f"gpu-node-{n + 1:04d}"
        ranks = []
        for g in range(gpus):
            rank = n * gpus + g
            ranks.append({"rank": rank, "local_rank": g, "status": "pass",
                          "device": {"index": g, "name": MODEL, "uuid": f"GPU-{rank:08x}",
                                     "pci_bus_id": f"0000:{0x18 + g:02x}:00.0"}})
            v = healthy * rng.uniform(0.97, 1.03)
            metrics.append({"name": metric, "value": v, "unit": unit, "higher_is_better": True, "host": host,
                            "node_index": n, "rank": rank, "gpu": g})
            if rng.random() < 0.02:  # a few GPUs the program itself flags
                findings.append({"severity": "fail", "code": "GEMM_BELOW_MEDIAN" if program == "gemm_flops"
                                 else "MEM_BELOW_MEDIAN", "host": host, "node_index": n, "rank": rank, "gpu": g,
                                 "message": f"{metric} below the median"})
        nodes.append({"host": host, "node_index": n, "local_ranks": gpus, "ranks": ranks})
    fail = bool(findings)
    values = sorted(m["value"] for m in metrics)
    median = (values[(len(values) - 1) // 2] + values[len(values) // 2]) / 2
    # The per-device headline the programs write, so that summary.html draws this figure as they do.
    headline = {"name": metric, "label": metric, "value": median, "unit": unit, "scope": "per_device",
                "higher_is_better": True}
    return {"schema": "gpuaccept-report", "schema_version": 1, "program": program, "gpuaccept_version": "bench",
            "run_id": "bench-merge", "created_utc": "2026-11-23T00:00:00Z", "duration_s": 60.0,
            "world_size": n_nodes * gpus, "node_count": n_nodes, "nodes": nodes, "metrics": metrics, "summary": {},
            "headlines": [headline],
            "charts": [], "findings": findings,
            "verdict": {"result": "fail" if fail else "pass", "exit_code": 1 if fail else 0}}


def write_reports(rd, n_nodes, gpus, seed=14, edit=None):
    """Writes every program's report into rd; edit(report), when given, changes each before it is written."""
    os.makedirs(rd, exist_ok=True)
    rng = random.Random(seed)
    for program in PROGRAMS:
        report = make_report(program, n_nodes, gpus, rng)
        if edit:
            edit(report)
        with open(os.path.join(rd, program + ".json"), "w") as f:
            json.dump(report, f)


def write_baseline(path, factor=1.01):
    """A baseline at factor x the healthy figure (above what most GPUs reach at the default)."""
    baseline = {"schema": "gpuaccept-baseline", "schema_version": 1, "model": "bench", "match": [MODEL],
                "tolerance_pct": 1, "metrics": [
                    {"program": p, "name": m, "scope": "gpu", "value": h * factor, "unit": u,
                     "higher_is_better": True, "source": "bench"} for p, (m, u, h) in PROGRAMS.items()]}
    with open(path, "w") as f:
        json.dump(baseline, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpuaccept")
    ap.add_argument("--nodes", type=int, default=1024)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--work")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="ga-bench-merge.")
    rd = os.path.join(work, "reports")
    write_reports(rd, a.nodes, a.gpus)
    # A baseline above what most GPUs reached: most of them get a BASELINE_REGRESSION finding.
    bpath = os.path.join(work, "baseline.json")
    write_baseline(bpath)

    out = os.path.join(work, "out")
    t0 = time.monotonic()
    r = subprocess.run([a.gpuaccept, "merge", "--report-dir", rd, "--out-dir", out, "--baseline", bpath],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if r.returncode not in (0, 1):
        raise SystemExit(f"merge exited {r.returncode}: {r.stderr}")
    s = json.load(open(os.path.join(out, "summary.json")))
    flagged = sum(1 for n in s["nodes"] for g in n["gpus"] if g["verdict"] == "fail")
    html = os.path.getsize(os.path.join(out, "summary.html"))
    print(f"merge: {s['node_count']} nodes, {s['gpu_count']} GPUs, {len(s['findings'])} findings, "
          f"{flagged} GPUs failed; {wall:.2f} s wall, {rss_mb:.0f} MB peak RSS (exit {r.returncode}); "
          f"summary.html {html} bytes")
    print(f"goal: <= 2 s and <= 500 MB: {'met' if wall <= 2 and rss_mb <= 500 else 'NOT met'}")


if __name__ == "__main__":
    main()
