#!/usr/bin/env python3
"""Reference figures measured with PyTorch on the same GPU, at the sizes gpuaccept's programs use.

Run beside gemm_flops, mem_bw and allreduce_bw (docs/measured-on-gpu.md): GEMM TFLOP/s per dtype at 8192^3,
HBM copy and triad, pinned H2D/D2H, and one-rank NCCL allreduce latency through torch.distributed.
Writes one JSON document (--out) and prints one line per figure. Each section is timed with CUDA events.
"""
import argparse
import json
import os
import sys
import time

import torch


def timed(fn, warmup, min_seconds, max_iters=1000, iters=0):
    """Per-call seconds of fn: warm-up calls, then timed calls until min_seconds have passed (at most
    max_iters); iters, when set, fixes the count instead."""
    if iters:
        min_seconds, max_iters = 1e9, iters
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    start_all = time.perf_counter()
    while time.perf_counter() - start_all < min_seconds and len(times) < max_iters:
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) / 1e3)
    mean_s = sum(times) / len(times)
    times.sort()
    return {"best_s": times[0], "median_s": times[len(times) // 2], "mean_s": mean_s, "n": len(times)}


def gemm_operands(dtype, n):
    """Operands of one dtype; fp8 and int8 in the TN layout cuBLASLt needs (B column-major)."""
    gen = torch.Generator(device="cuda").manual_seed(42)
    if dtype in ("fp8", "int8"):
        if dtype == "fp8":
            a = torch.randn(n, n, device="cuda", generator=gen).to(torch.float8_e4m3fn)
            b = torch.randn(n, n, device="cuda", generator=gen).to(torch.float8_e4m3fn).t()
        else:
            a = torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8, generator=gen)
            b = torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8, generator=gen).t()
        return a, b
    torch_dtype = {
        "fp64": torch.float64,
        "fp32": torch.float32,
        "tf32": torch.float32,
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
    }[dtype]
    a = torch.randn(n, n, device="cuda", generator=gen).to(torch_dtype)
    b = torch.randn(n, n, device="cuda", generator=gen).to(torch_dtype)
    return a, b


def gemm_call(dtype, a, b):
    if dtype == "fp8":
        one = torch.ones((), device="cuda", dtype=torch.float32)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    if dtype == "int8":
        return lambda: torch._int_mm(a, b)
    return lambda: torch.matmul(a, b)


def measure_gemm(dtypes, n, iters):
    out = {}
    for dtype in dtypes:
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        try:
            a, b = gemm_operands(dtype, n)
            t = timed(gemm_call(dtype, a, b), warmup=3, min_seconds=1.0, iters=iters)
            t["tflops"] = 2.0 * n**3 / t["best_s"] / 1e12
            t["median_tflops"] = 2.0 * n**3 / t["median_s"] / 1e12
            t["mean_tflops"] = 2.0 * n**3 / t["mean_s"] / 1e12
            out[dtype] = t
            print(
                f"[TORCH] gemm {dtype} {n}^3: {t['tflops']:.1f} TFLOP/s best, "
                f"{t['median_tflops']:.1f} median, {t['mean_tflops']:.1f} mean ({t['n']} GEMMs)",
                flush=True,
            )
            del a, b
        except Exception as exc:  # a dtype this torch or GPU refuses is recorded, not fatal
            out[dtype] = {"error": str(exc)[:300]}
            print(f"[TORCH] gemm {dtype}: {exc}", flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.empty_cache()
    return out


def measure_memory(size, pinned_size):
    out = {}
    n = size // 8
    a = torch.empty(n, device="cuda", dtype=torch.float64)
    b = torch.ones(n, device="cuda", dtype=torch.float64)
    c = torch.full((n,), 2.0, device="cuda", dtype=torch.float64)
    tests = {
        "device_copy": (lambda: a.copy_(b), 2 * size),
        "device_rw": (lambda: torch.add(b, c, alpha=3.0, out=a), 3 * size),
    }
    host = torch.empty(pinned_size, dtype=torch.uint8).pin_memory()
    dev = torch.empty(pinned_size, device="cuda", dtype=torch.uint8)
    tests["h2d"] = (lambda: dev.copy_(host, non_blocking=True), pinned_size)
    tests["d2h"] = (lambda: host.copy_(dev, non_blocking=True), pinned_size)
    for name, (fn, nbytes) in tests.items():
        t = timed(fn, warmup=3, min_seconds=0.5, max_iters=200)
        t["GBps"] = nbytes / t["best_s"] / 1e9
        t["median_GBps"] = nbytes / t["median_s"] / 1e9
        t["mean_GBps"] = nbytes / t["mean_s"] / 1e9
        t["bytes"] = nbytes
        out[name] = t
        print(f"[TORCH] {name} {nbytes} B: {t['GBps']:.1f} GB/s best, {t['median_GBps']:.1f} median", flush=True)
    # rebound, not deleted: the timed lambdas close over these names (a del leaves pyflakes seeing them unbound)
    a = b = c = host = dev = None
    torch.cuda.empty_cache()
    return out


def measure_allreduce(max_bytes):
    """One-rank NCCL allreduce (in place, float, sum) per size, as nccl-tests' time column."""
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    out = {"nccl_version": ".".join(map(str, torch.cuda.nccl.version())), "sizes": []}
    size = 8
    while size <= max_bytes:
        x = torch.ones(size // 4, device="cuda", dtype=torch.float32)
        t = timed(lambda: dist.all_reduce(x), warmup=5, min_seconds=0.2, max_iters=200)
        out["sizes"].append({"bytes": size, "best_us": t["best_s"] * 1e6, "median_us": t["median_s"] * 1e6})
        print(
            f"[TORCH] allreduce {size} B: {t['median_s'] * 1e6:.2f} us median, " f"{t['best_s'] * 1e6:.2f} best",
            flush=True,
        )
        size *= 2
    dist.destroy_process_group()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sections", default="gemm,memory,allreduce")
    ap.add_argument("--gemm-n", type=int, default=8192)
    ap.add_argument("--dtypes", default="fp64,fp32,tf32,fp16,bf16,fp8,int8")
    ap.add_argument("--size", type=int, default=1 << 30)
    ap.add_argument("--pinned-size", type=int, default=256 << 20)
    ap.add_argument("--allreduce-max", type=int, default=1 << 20)
    ap.add_argument("--iters", type=int, default=0, help="timed GEMMs per dtype (default: 1 s of them)")
    args = ap.parse_args()
    doc = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0)}
    sections = args.sections.split(",")
    if "gemm" in sections:
        doc["gemm"] = measure_gemm(args.dtypes.split(","), args.gemm_n, args.iters)
    if "memory" in sections:
        doc["memory"] = measure_memory(args.size, args.pinned_size)
    if "allreduce" in sections:
        doc["allreduce"] = measure_allreduce(args.allreduce_max)
    with open(args.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(args.out + ".tmp", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
