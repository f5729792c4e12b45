#!/usr/bin/env python3
"""Reference figures measured with PyTorch on the same GPU, at the sizes gpuaccept's programs use.

Run beside gemm_flops, mem_bw, allreduce_bw and lm_train (docs/measured-on-gpu.md): GEMM TFLOP/s per dtype at
8192^3, HBM copy and triad, pinned H2D/D2H, one-rank NCCL allreduce latency through torch.distributed, a 1 GiB
device copy eager and in a CUDA graph (section graph_copy), and GPT-2 training tokens/s and MFU (section lm:
eager and torch.compile, the configuration lm_train trains).
Writes one JSON document (--out) and prints one line per figure. Each section is timed with CUDA events.
"""
import argparse
import json
import os
import sys
import time

try:
    import torch
except ImportError:  # --help, and the lint, run where torch is not installed
    torch = None


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


def measure_graph_copy(size, copies=10):
    """A device copy of size bytes, eager and captured in a CUDA graph (copies per replay), as a memcpy
    (copy_) and as a kernel (mul by one): whether a captured memcpy runs slower than an eager one, whoever
    issues it (allreduce_bw -G's one-rank copy is NCCL's)."""
    n = size // 4
    src = torch.ones(n, device="cuda", dtype=torch.float32)
    dst = torch.empty(n, device="cuda", dtype=torch.float32)
    ways = {"memcpy": lambda: dst.copy_(src), "kernel": lambda: torch.mul(src, 1.0, out=dst)}
    out = {"bytes": size, "copies_per_replay": copies}
    for name, fn in ways.items():
        eager = timed(fn, warmup=3, min_seconds=0.5, max_iters=100)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # capture needs a side stream, warmed up first
            fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(copies):
                fn()
        replay = timed(graph.replay, warmup=2, min_seconds=0.5, max_iters=50)
        for label, t, per in (("eager", eager, 1), ("graph", replay, copies)):
            best, median = t["best_s"] / per, t["median_s"] / per
            out[f"{name}_{label}"] = {"best_us": best * 1e6, "median_us": median * 1e6, "algbw_GBps": size / best / 1e9}
            print(
                f"[TORCH] copy {size} B {name} {label}: {median * 1e6:.1f} us median, "
                f"{size / best / 1e9:.1f} GB/s best (algbw)",
                flush=True,
            )
        del graph
    src = dst = None
    torch.cuda.empty_cache()
    return out


# Dense bf16 peaks in TFLOP/s, as common/analysis/ga_peaks has them (the specific names first).
BF16_PEAKS = (("H100 NVL", 835.5), ("H100 PCIe", 756.0), ("H100", 989.5), ("H200 NVL", 835.5), ("H200", 989.5))


def bf16_peak(name):
    for key, tflops in BF16_PEAKS:
        if key in name:
            return tflops
    return 0.0


class LmConfig:
    """The model lm_train trains: GPT-2 with the vocabulary padded to a multiple of 128."""

    def __init__(self, layers, channels, heads, seq_len, vocab, batch):
        self.layers, self.channels, self.heads, self.seq_len, self.batch = layers, channels, heads, seq_len, batch
        self.vocab = vocab
        self.padded_vocab = (vocab + 127) // 128 * 128

    def parameters(self):
        c = self.channels
        per_block = 12 * c * c + 13 * c
        return self.padded_vocab * c + self.seq_len * c + self.layers * per_block + 2 * c

    def flops_per_token(self):
        """lm_train's (llm.c's) count: 6N + 6 L C T."""
        return 6 * self.parameters() + 6 * self.layers * self.channels * self.seq_len

    def as_dict(self):
        d = dict(vars(self))
        d.update(parameters=self.parameters(), flops_per_token=self.flops_per_token())
        return d


def init_params(cfg, seed):
    """fp32 weights drawn as lm_train draws them (not the same numbers): N(0, 0.02), the projections into the
    residual stream N(0, 0.02 / sqrt(2 L)), biases zero, LayerNorm gains one."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    c, resid_std = cfg.channels, 0.02 / (2 * cfg.layers) ** 0.5

    def normal(*shape, std=0.02):
        return torch.randn(*shape, device="cuda", generator=gen) * std

    def zeros(n):
        return torch.zeros(n, device="cuda")

    def ones(n):
        return torch.ones(n, device="cuda")

    p = {"wte": normal(cfg.padded_vocab, c), "wpe": normal(cfg.seq_len, c), "lnf_w": ones(c), "lnf_b": zeros(c)}
    for i in range(cfg.layers):
        p.update(
            {
                f"{i}.ln1_w": ones(c),
                f"{i}.ln1_b": zeros(c),
                f"{i}.qkv_w": normal(3 * c, c),
                f"{i}.qkv_b": zeros(3 * c),
                f"{i}.proj_w": normal(c, c, std=resid_std),
                f"{i}.proj_b": zeros(c),
                f"{i}.ln2_w": ones(c),
                f"{i}.ln2_b": zeros(c),
                f"{i}.fc_w": normal(4 * c, c),
                f"{i}.fc_b": zeros(4 * c),
                f"{i}.fcproj_w": normal(c, 4 * c, std=resid_std),
                f"{i}.fcproj_b": zeros(c),
            }
        )
    for t in p.values():
        t.requires_grad_(True)
    return p


def gpt_loss(p, cfg, tokens, targets):
    """Mean cross-entropy of the next token: pre-LN blocks, causal attention, GELU (tanh) MLP, tied head."""
    F = torch.nn.functional
    b, t = tokens.shape
    c, h = cfg.channels, cfg.heads
    x = p["wte"][tokens] + p["wpe"][:t]
    for i in range(cfg.layers):
        y = F.layer_norm(x, (c,), p[f"{i}.ln1_w"], p[f"{i}.ln1_b"])
        q, k, v = F.linear(y, p[f"{i}.qkv_w"], p[f"{i}.qkv_b"]).split(c, dim=2)
        q, k, v = (z.view(b, t, h, c // h).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c)
        x = x + F.linear(y, p[f"{i}.proj_w"], p[f"{i}.proj_b"])
        y = F.layer_norm(x, (c,), p[f"{i}.ln2_w"], p[f"{i}.ln2_b"])
        y = F.gelu(F.linear(y, p[f"{i}.fc_w"], p[f"{i}.fc_b"]), approximate="tanh")
        x = x + F.linear(y, p[f"{i}.fcproj_w"], p[f"{i}.fcproj_b"])
    x = F.layer_norm(x, (c,), p["lnf_w"], p["lnf_b"])
    logits = F.linear(x, p["wte"])
    return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1))


def train_throughput(cfg, mode, steps, warmup, seed, peak_tflops):
    """Tokens/s, MFU and step time of bf16-autocast training with fused AdamW, the timed steps only."""
    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    p = init_params(cfg, seed)
    decay = [t for t in p.values() if t.dim() == 2]
    rest = [t for t in p.values() if t.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95), eps=1e-8, fused=True)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    data = torch.randint(0, cfg.vocab, (4, cfg.batch, cfg.seq_len + 1), device="cuda", generator=gen)
    loss_fn = torch.compile(gpt_loss) if mode == "compile" else gpt_loss

    def step(k):
        batch = data[k % len(data)]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(p, cfg, batch[:, :-1], batch[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0, foreach=True)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    first_loss = float(step(0))
    for k in range(1, warmup):
        step(k)
    torch.cuda.synchronize()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
    events[0].record()
    for k in range(steps):
        loss = step(k)
        events[k + 1].record()
    torch.cuda.synchronize()
    step_ms = sorted(events[k].elapsed_time(events[k + 1]) for k in range(steps))
    total_s = events[0].elapsed_time(events[-1]) / 1e3
    tokens_per_s = steps * cfg.batch * cfg.seq_len / total_s
    peak = peak_tflops or bf16_peak(torch.cuda.get_device_name(0))
    mfu = tokens_per_s * cfg.flops_per_token() / (peak * 1e12) if peak else None
    out = {
        "mode": mode,
        "tokens_per_s": tokens_per_s,
        "mfu": mfu,
        "peak_tflops_bf16": peak,
        "step_ms": total_s * 1e3 / steps,
        "step_ms_median": step_ms[len(step_ms) // 2],
        "step_ms_worst": step_ms[-1],
        "steps": steps,
        "warmup_steps": warmup,
        "loss_first": first_loss,
        "loss_last": float(loss),
        "memory_gib": torch.cuda.max_memory_allocated() / 2**30,
    }
    print("[TORCH] lm " + json.dumps(out), flush=True)
    p = opt = data = None  # rebound, not deleted: step() closes over them (as measure_memory)
    return out


def add_lm_args(ap):
    ap.add_argument("--lm-layers", type=int, default=12, help="section lm: GPT-2 blocks (d12)")
    ap.add_argument("--lm-channels", type=int, default=768)
    ap.add_argument("--lm-heads", type=int, default=12)
    ap.add_argument("--lm-seq-len", type=int, default=1024)
    ap.add_argument("--lm-vocab", type=int, default=50257, help="padded to a multiple of 128 (50304), as lm_train")
    ap.add_argument("--lm-batch-size", type=int, default=16, help="sequences per step, as lm_train's GPU default")
    ap.add_argument("--lm-steps", type=int, default=30, help="timed optimiser steps per mode")
    ap.add_argument("--lm-warmup", type=int, default=5, help="untimed steps first (compilation happens there)")
    ap.add_argument("--lm-modes", default="eager,compile")
    ap.add_argument("--lm-seed", type=int, default=1)
    ap.add_argument("--peak-tflops", type=float, default=0, help="dense bf16 peak (default: by the GPU's name)")


def measure_lm(args):
    """GPT-2 training in plain torch, per mode (eager, compile); a mode that fails is recorded, not fatal."""
    cfg = LmConfig(args.lm_layers, args.lm_channels, args.lm_heads, args.lm_seq_len, args.lm_vocab, args.lm_batch_size)
    out = {"config": cfg.as_dict(), "modes": {}}
    for mode in args.lm_modes.split(","):
        try:
            out["modes"][mode] = train_throughput(
                cfg, mode, args.lm_steps, args.lm_warmup, args.lm_seed, args.peak_tflops
            )
        except Exception as exc:  # torch.compile missing its toolchain, or out of memory: said, not fatal
            out["modes"][mode] = {"error": str(exc)[:300]}
            print(f"[TORCH] lm {mode}: {exc}", flush=True)
        torch.cuda.empty_cache()
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
    add_lm_args(ap)
    args = ap.parse_args()
    if torch is None:
        print("torch_reference.py: PyTorch is not installed (pip install torch)", file=sys.stderr)
        return 2
    doc = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0)}
    sections = args.sections.split(",")
    if "gemm" in sections:
        doc["gemm"] = measure_gemm(args.dtypes.split(","), args.gemm_n, args.iters)
    if "memory" in sections:
        doc["memory"] = measure_memory(args.size, args.pinned_size)
    if "allreduce" in sections:
        doc["allreduce"] = measure_allreduce(args.allreduce_max)
    if "graph_copy" in sections:
        doc["graph_copy"] = measure_graph_copy(args.size)
    if "lm" in sections:
        doc["lm"] = measure_lm(args)
    with open(args.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(args.out + ".tmp", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
