#!/usr/bin/env python3
"""Tables of a launch/gpu-truth.sh run: each program's figure beside the PyTorch reference measured on the same
GPU in the same run (docs/measured-on-gpu.md was written from them).

usage: gpu_truth_report.py DIR [DIR ...]   (DIR: an unpacked results.tgz; a file is taken from the first DIR
that has it)
"""
import json
import os
import sys


def find(dirs, rel):
    for d in dirs:
        p = os.path.join(d, rel)
        if os.path.exists(p):
            with open(p) as f:
                return json.load(f)
    return None


def first_rank(report):
    return report["nodes"][0]["ranks"][0]


def ratio(a, b):
    return "%.3f" % (a / b) if a and b else "-"


def gemm_table(dirs, program_rel, before_rel, after_rel, title):
    ours, before = find(dirs, program_rel), find(dirs, before_rel)
    after = find(dirs, after_rel) if after_rel else None
    if not ours or not before:
        return
    print("\n### %s\n" % title)
    print(
        "| dtype | gemm_flops TFLOP/s (GEMMs) | torch mean before / after | torch median | torch best | "
        "gemm_flops / torch mean |"
    )
    print("|---|---|---|---|---|---|")
    for dtype, x in first_rank(ours)["gemm"].items():
        if x.get("state") != "measured":
            continue
        refs = [r["gemm"].get(dtype, {}) for r in (before, after) if r]
        means = [r["mean_tflops"] for r in refs if "mean_tflops" in r]
        if not means:
            continue
        ref = sum(means) / len(means)
        print(
            "| %s | %.1f (%d) | %s | %s | %s | %s |"
            % (
                dtype,
                x["tflops"],
                x["iters"],
                " / ".join("%.1f" % m for m in means),
                " / ".join("%.1f" % r["median_tflops"] for r in refs),
                " / ".join("%.1f" % r["tflops"] for r in refs),
                ratio(x["tflops"], ref),
            )
        )


def memory_table(dirs):
    ours, before, after = (
        find(dirs, "mem/mem_bw.json"),
        find(dirs, "torch_memory_before.json"),
        find(dirs, "torch_memory_after.json"),
    )
    if not ours or not before:
        return
    print("\n### Memory (GB/s: best repetition; median in brackets)\n")
    print("| test | mem_bw | torch before | torch after | mem_bw best / torch best |")
    print("|---|---|---|---|---|")
    for test, x in first_rank(ours)["bandwidth"].items():
        refs = [r["memory"][test] for r in (before, after) if r and test in r["memory"]]
        best = max(r["GBps"] for r in refs)
        cells = ["%.1f (%.1f)" % (r["GBps"], r["median_GBps"]) for r in refs]
        print(
            "| %s | %.1f (%.1f) | %s | %s |"
            % (test, x["GBps"], x["median_GBps"], " | ".join(cells), ratio(x["GBps"], best))
        )


def allreduce_table(dirs):
    ours, ref = find(dirs, "ar/allreduce_bw.json"), find(dirs, "torch.json") or find(dirs, "torch_allreduce.json")
    if not ours or not ref or "allreduce" not in ref:
        return
    torch_us = {s["bytes"]: s["median_us"] for s in ref["allreduce"]["sizes"]}
    print("\n### One-rank allreduce (float, sum), time per operation in us\n")
    print("| bytes | allreduce_bw out-of-place | allreduce_bw in-place | torch.distributed in-place (median) |")
    print("|---|---|---|---|")
    rows = {}
    for r in ours["summary"]["results"]:
        rows.setdefault(r["bytes"], {})[r["placement"]] = r["time_us"]
    for size in sorted(torch_us):
        row = rows.get(size, {})
        print(
            "| %d | %.2f | %.2f | %.2f |"
            % (size, row.get("out-of-place", float("nan")), row.get("in-place", float("nan")), torch_us[size])
        )


def ddp_table(dirs):
    gpu, host = find(dirs, "ddp_gpu/ddp_smoke.json"), find(dirs, "ddp_host/ddp_smoke.json")
    if not gpu or not host:
        return
    cg, ch = gpu["summary"]["loss_curve"], host["summary"]["loss_curve"]
    rel = [abs(a["loss"] - b["loss"]) / abs(b["loss"]) for a, b in zip(cg, ch)]
    print("\n### ddp_smoke, GPU (fp32) against host (fp64), same seed: |loss_gpu - loss_host| / loss_host\n")
    print("| steps | largest relative difference |")
    print("|---|---|")
    for lo, hi in ((0, 10), (10, 50), (50, 100), (100, 200), (200, 500)):
        part = rel[lo:hi]
        if part:
            print("| %d-%d | %.2e |" % (lo, hi - 1, max(part)))
    print(
        "\nloss: GPU %.5f -> %.5f, host %.5f -> %.5f"
        % (
            gpu["summary"]["loss_start"],
            gpu["summary"]["loss_end"],
            host["summary"]["loss_start"],
            host["summary"]["loss_end"],
        )
    )


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    dirs = argv[1:]
    gemm_table(
        dirs,
        "gemm/gemm_flops.json",
        "torch_gemm_before.json",
        "torch_gemm_after.json",
        "GEMM 8192^3, 1 s of GEMMs per dtype",
    )
    gemm_table(dirs, "gemm_burst/gemm_flops.json", "torch_burst.json", None, "GEMM 8192^3, 10 GEMMs after 3 warm-ups")
    memory_table(dirs)
    allreduce_table(dirs)
    ddp_table(dirs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
