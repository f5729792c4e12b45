#!/usr/bin/env python3
"""Issue 40, finding 4: with one GPU bound per rank every GPU is CUDA device 0, so only the PCI bus id tells
them apart. Merges the report of a run on the double's GA_DOUBLE_GPU_PER_RANK mode and checks that the
summary has one row per GPU (by bus id), that the faulty GPU alone fails, and that the hand-off names it by
its bus id.

With --node-health, node_health runs first on the same node (the NVML double: GPU n at bus 0x10 + n) with
the same run id, and its report is merged too: the rows then show NVML's index beside the bus id ("GPU 2
(0000:12:00.0)"), and node_health's finding on that GPU (GA_DOUBLE_NVML_GPU in the environment) lands on
the same row as the CUDA program's, though the one says GPU 2 and the other CUDA device 0.

usage: check_gpu_per_rank.py GPUACCEPT REPORT_DIR GPUS BAD_PCI CODE
                             [--node-health MPIEXEC NODE_HEALTH NVML_DIR TREE LOG NH_CODE]"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run_node_health(nh, report_dir, into, gpus, bad_index):
    """node_health's report beside a copy of the CUDA program's, under the same run id."""
    mpiexec, binary, nvml_dir, tree, log = nh[:5]
    for f in os.listdir(report_dir):
        if f.endswith(".json") and f != "summary.json":
            shutil.copy(os.path.join(report_dir, f), into)
            with open(os.path.join(report_dir, f)) as fh:
                run_id = json.load(fh)["run_id"]
    argv = mpiexec.split() + ["-np", str(gpus), "-x", "LD_LIBRARY_PATH=" + nvml_dir, "-x", "GPUACCEPT_RUN_ID=" + run_id]
    # PCIe replays on the faulty GPU (NVML index 2 at bus 0x12): a node_health finding on it.
    argv += ["-x", "GA_DOUBLE_NVML_GPU=%d" % bad_index, "-x", "GA_DOUBLE_NVML_REPLAY=500"]
    argv += [binary, "--sysfs-root", tree, "--kernel-log", log, "--report-dir", into]
    p = subprocess.run(argv, capture_output=True, text=True)
    print("node_health exited", p.returncode, p.stdout.strip().splitlines()[-1:] if p.stdout else "")


def main():
    gpuaccept, report_dir, gpus, bad, code = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    nh = sys.argv[7:] if len(sys.argv) > 6 and sys.argv[6] == "--node-health" else None
    out = tempfile.mkdtemp(prefix="gpu-per-rank-")
    fails = []
    shown = re.compile(r"GPU \d+ \(" + re.escape(bad) + r"\)|GPU " + re.escape(bad))
    try:
        if nh:
            merged = os.path.join(out, "reports")
            os.mkdir(merged)
            run_node_health(nh, report_dir, merged, gpus, int(bad.split(":")[1], 16) - 0x10)
            report_dir = merged
        p = subprocess.run(
            [gpuaccept, "merge", "--report-dir", report_dir, "--out-dir", out, "--baseline", "none"],
            capture_output=True,
            text=True,
        )
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
        if nh:
            index = {g.get("pci_bus_id"): g.get("gpu") for _, g in rows}
            want_index = {f"0000:{0x10 + i:02x}:00.0": i for i in range(gpus)}
            if index != want_index:
                fails.append(f"rows' indexes {index}, expected NVML's {want_index}")
            row = [g for _, g in rows if g.get("pci_bus_id") == bad]
            codes = row[0].get("fault_codes", []) if row else []
            if nh[5] not in codes or code not in codes:
                fails.append(f"the row of {bad} has codes {codes}, expected {nh[5]} and {code}")
            shown = re.compile(r"GPU \d+ \(" + re.escape(bad) + r"\)")
        uuids = [g.get("uuid") for _, g in rows]
        if len(set(uuids)) != len(uuids):
            fails.append(f"one UUID given to several rows: {uuids}")
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
            fails.append(f'gpuaccept.prom has no pci_bus_id="{bad}" label')
    finally:
        shutil.rmtree(out, ignore_errors=True)
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
