#!/usr/bin/env python3
"""Issue 40, finding 4: with one GPU bound per rank every GPU is CUDA device 0, so only the PCI bus id tells
them apart. Merges the report of a run on the double's GA_DOUBLE_GPU_PER_RANK mode and checks that the
summary has one row per GPU (by bus id), that the faulty GPU alone fails, and that the hand-off names it by
its bus id.

usage: check_gpu_per_rank.py GPUACCEPT REPORT_DIR GPUS BAD_PCI CODE"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    gpuaccept, report_dir, gpus, bad, code = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    out = tempfile.mkdtemp(prefix="gpu-per-rank-")
    fails = []
    try:
        p = subprocess.run([gpuaccept, "merge", "--report-dir", report_dir, "--out-dir", out, "--baseline",
                            "none"], capture_output=True, text=True)
        if p.returncode != 1:
            fails.append(f"merge exited {p.returncode}, expected 1 (a check failed): {p.stderr.strip()}")
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        rows = [(n["host"], g) for n in s["nodes"] for g in n["gpus"]]
        print("summary GPU rows:", [(h, g.get("gpu"), g.get("pci_bus_id"), g.get("verdict")) for h, g in rows])
        ids = sorted(g.get("pci_bus_id") or "" for _, g in rows)
        want = [f"0000:{0x10 + i:02x}:00.0" for i in range(gpus)]
        if ids != want:
            fails.append(f"summary GPU rows by bus id {ids}, expected one per GPU {want}")
        failed = [g.get("pci_bus_id") for _, g in rows if g.get("verdict") != "pass"]
        if failed != [bad]:
            fails.append(f"GPUs not passing: {failed}, expected only {bad}")
        uuids = [g.get("uuid") for _, g in rows]
        if len(set(uuids)) != len(uuids):
            fails.append(f"one UUID given to several rows: {uuids}")
        shown = re.compile(r"GPU \d+ \(" + re.escape(bad) + r"\)|GPU " + re.escape(bad))
        with open(os.path.join(out, "summary.md")) as f:
            md = f.read()
        if not re.search(re.escape(bad), md):
            fails.append(f"summary.md never names {bad}")
        with open(os.path.join(out, "drain.sh")) as f:
            drain = f.read()
        reasons = [line for line in drain.splitlines() if code in line]
        if not any(shown.search(line) for line in reasons):
            fails.append(f"drain.sh's reason for {code} does not name the GPU by {bad}: {reasons}")
        with open(os.path.join(out, "gpuaccept.prom")) as f:
            prom = f.read()
        if f'pci_bus_id="{bad}"' not in prom:
            fails.append(f"gpuaccept.prom has no pci_bus_id=\"{bad}\" label")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
