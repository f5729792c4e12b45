#!/usr/bin/env python3
"""End-to-end tests of ddp_smoke's host path: runs the real program under mpiexec and checks its exit code,
its output and its JSON report. Standard library only.

usage: check_ddp.py --bin PATH --work DIR CASE [--ranks N] [--perturb-rank K] -- MPIEXEC...
"""
import argparse
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import fail_unless as check, failures  # noqa: E402

# N ranks against one rank with the N-fold batch: the host path computes in double, and the two runs differ
# only in the order of a few sums, measured at ~1e-15 relative. 1e-10 is tight enough that any real
# difference in data, averaging or update (a wrong shard, a sum instead of a mean) fails at once.
EQUIV_RTOL = 1e-10


def run(args, mpiexec, ranks, flags, env_extra=None, report_dir=None):
    cmd = list(mpiexec) + ["-np", str(ranks), args.bin] + flags
    if report_dir:
        shutil.rmtree(report_dir, ignore_errors=True)
        cmd += ["--report-dir", report_dir]
    env = dict(os.environ)
    env.update(env_extra or {})
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    report = None
    if report_dir and os.path.exists(os.path.join(report_dir, "ddp_smoke.json")):
        with open(os.path.join(report_dir, "ddp_smoke.json")) as f:
            report = json.load(f)
    return p, report


def finding_ranks(report, code):
    return sorted(f.get("rank", f.get("world_rank")) for f in report["findings"] if f["code"] == code)


SUMMARY_FIELDS = {
    "backend": str,
    "ranks": int,
    "global_batch": int,
    "steps": int,
    "loss_start": float,
    "loss_end": float,
    "improvement": float,
    "min_improvement": float,
    "samples_per_s": float,
    "step_time_ms": float,
    "comm_fraction": float,
    "replicas_identical": bool,
    "mismatched_ranks": list,
    "loss_curve": list,
}


def check_report_shape(report, ranks, local_batch, steps):
    s = report["summary"]
    for name, kind in SUMMARY_FIELDS.items():
        check(name in s, "summary.%s missing" % name)
        if name in s and s[name] is not None:
            ok = isinstance(s[name], kind) or (kind is float and isinstance(s[name], (int, float)))
            check(ok, "summary.%s is %r, not %s" % (name, s[name], kind.__name__))
    check(s.get("backend") == "host", "backend %r" % s.get("backend"))
    check(s.get("ranks") == ranks and report.get("world_size") == ranks, "ranks %r" % s.get("ranks"))
    check(s.get("global_batch") == ranks * local_batch, "global_batch %r" % s.get("global_batch"))
    check(s.get("steps") == steps, "steps %r" % s.get("steps"))
    curve = s.get("loss_curve", [])
    check([p["step"] for p in curve] == list(range(steps)), "loss_curve must hold steps 0..%d" % (steps - 1))
    metrics = report.get("metrics", [])
    names = [m["name"] for m in metrics]
    for m in ("samples_per_s", "loss_improvement", "comm_fraction"):
        check(names.count(m) == 1, "metric %s appears %d times" % (m, names.count(m)))
    per_rank = sorted(m["rank"] for m in metrics if m["name"] == "samples_per_s_rank")
    check(per_rank == list(range(ranks)), "samples_per_s_rank for ranks %r" % per_rank)
    got = sorted(r["rank"] for n in report["nodes"] for r in n["ranks"])
    check(got == list(range(ranks)), "nodes list ranks %r" % got)


def case_trains(args, mpiexec):
    p, r = run(args, mpiexec, args.ranks, ["--quick", "--backend", "host"], report_dir=args.work + "/report")
    check(p.returncode == 0, "exit code %d, expected 0" % p.returncode)
    check("[RESULT] SUCCESS" in p.stdout, "no [RESULT] SUCCESS")
    check(p.stdout.count("[TRAIN] step ") >= 5, "fewer than 5 [TRAIN] progress lines")
    check("[DDP]" in p.stdout and "waiting on gradient communication" in p.stdout, "no [DDP] figures")
    if r is None:
        check(False, "no report")
        return
    check_report_shape(r, args.ranks, 32, 300)
    s = r["summary"]
    check(r["verdict"]["result"] == "pass", "verdict %r" % r["verdict"])
    check(s["loss_end"] < s["loss_start"], "loss did not fall: %r -> %r" % (s["loss_start"], s["loss_end"]))
    check(
        abs(s["improvement"] - (s["loss_start"] - s["loss_end"]) / s["loss_start"]) < 1e-12,
        "improvement is not (start - end) / start",
    )
    check(s["improvement"] >= s["min_improvement"], "improvement below the minimum")
    check(s["replicas_identical"] is True and s["mismatched_ranks"] == [], "replicas not identical")
    hashes = {rk["param_hash"] for n in r["nodes"] for rk in n["ranks"]}
    check(len(hashes) == 1, "parameter hashes differ across ranks: %r" % hashes)
    check(s["samples_per_s"] > 0 and s["step_time_ms"] > 0, "throughput figures missing")
    check(0.0 <= s["comm_fraction"] <= 1.0, "comm_fraction %r out of [0, 1]" % s["comm_fraction"])
    check(len(s.get("buckets", [])) >= 2, "the quick model should use several buckets")


def case_equivalence(args, mpiexec):
    b = 32
    common = ["--quick", "--backend", "host", "--steps", "200", "--seed", "7"]
    p1, r1 = run(args, mpiexec, 1, common + ["--batch-size", str(args.ranks * b)], report_dir=args.work + "/one")
    pn, rn = run(args, mpiexec, args.ranks, common + ["--batch-size", str(b)], report_dir=args.work + "/many")
    check(p1.returncode == 0 and pn.returncode == 0, "exit codes %d and %d" % (p1.returncode, pn.returncode))
    if not r1 or not rn:
        check(False, "missing report")
        return
    c1, cn = r1["summary"]["loss_curve"], rn["summary"]["loss_curve"]
    check(r1["summary"]["global_batch"] == rn["summary"]["global_batch"] == args.ranks * b, "global batches")
    check(len(c1) == len(cn) == 200, "curve lengths %d and %d" % (len(c1), len(cn)))
    worst, worst_step = 0.0, -1
    for a, z in zip(c1, cn):
        check(a["step"] == z["step"], "steps differ")
        d = abs(a["loss"] - z["loss"]) / abs(a["loss"])
        if d > worst:
            worst, worst_step = d, a["step"]
    print(
        "equivalence: 1 rank x %d vs %d ranks x %d: worst relative loss difference %.3g at step %d "
        "(tolerance %g)" % (args.ranks * b, args.ranks, b, worst, worst_step, EQUIV_RTOL)
    )
    check(worst <= EQUIV_RTOL, "trajectories differ: %.3g at step %d > %g" % (worst, worst_step, EQUIV_RTOL))
    check(c1[-1]["loss"] < 0.8 * c1[0]["loss"], "the compared runs must actually train")


def case_perturb(args, mpiexec):
    k = args.perturb_rank
    p, r = run(
        args,
        mpiexec,
        args.ranks,
        ["--quick", "--backend", "host", "--steps", "50", "--min-improvement", "0"],
        env_extra={"GPUACCEPT_TEST_PERTURB_RANK": str(k)},
        report_dir=args.work + "/report",
    )
    check(p.returncode == 1, "exit code %d, expected 1" % p.returncode)
    result = [l for l in p.stdout.splitlines() if l.startswith("[RESULT]")]
    check(
        len(result) == 1 and "DDP_REPLICA_MISMATCH" in result[0] and ("rank %d on" % k) in result[0],
        "the [RESULT] line must name DDP_REPLICA_MISMATCH and rank %d: %r" % (k, result),
    )
    if r is None:
        check(False, "no report")
        return
    s = r["summary"]
    check(
        s["replicas_identical"] is False and s["mismatched_ranks"] == [k], "mismatched_ranks %r" % s["mismatched_ranks"]
    )
    f = [x for x in r["findings"] if x["code"] == "DDP_REPLICA_MISMATCH"]
    check(len(f) == 1 and f[0].get("rank") == k and f[0].get("host"), "findings %r" % f)
    check(r["verdict"]["result"] == "fail", "verdict %r" % r["verdict"])


def case_not_improved(args, mpiexec):
    p, r = run(
        args,
        mpiexec,
        args.ranks,
        ["--quick", "--backend", "host", "--steps", "30", "--min-improvement", "95"],
        report_dir=args.work + "/report",
    )
    check(p.returncode == 1, "exit code %d, expected 1" % p.returncode)
    check(
        r is not None and [f["code"] for f in r["findings"] if f["severity"] == "fail"] == ["DDP_LOSS_NOT_IMPROVED"],
        "findings %r" % (r and r["findings"]),
    )


def case_nonfinite(args, mpiexec):
    p, r = run(
        args, mpiexec, args.ranks, ["--quick", "--backend", "host", "--lr", "50"], report_dir=args.work + "/report"
    )
    check(p.returncode == 1, "exit code %d, expected 1" % p.returncode)
    check(r is not None and "DDP_NONFINITE" in [f["code"] for f in r["findings"]], "no DDP_NONFINITE finding")
    check(r is not None and r["summary"]["steps"] < 300, "training should stop at the non-finite step")


def write_idx(d, n=2048, side=8, classes=4, seed=3, corrupt=None):
    """A learnable tiny data set: class c lights up its own band of rows, plus noise."""
    os.makedirs(d, exist_ok=True)
    rnd = random.Random(seed)
    labels = [rnd.randrange(classes) for _ in range(n)]
    pixels = bytearray()
    band = side // classes
    for y in labels:
        for row in range(side):
            for col in range(side):
                base = 170 if row // band == y else 40
                pixels.append(max(0, min(255, base + rnd.randint(-60, 60))))
    magic = 0x803 if corrupt != "magic" else 0x802
    if corrupt == "truncate":
        pixels = pixels[:-7]
    image = struct.pack(">IIII", magic, n, side, side) + bytes(pixels)
    if corrupt == "header":
        image = image[:10]  # the magic, then less than a header
    with open(os.path.join(d, "train-images-idx3-ubyte"), "wb") as f:
        f.write(image)
    with open(os.path.join(d, "train-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(labels))


def case_idx(args, mpiexec):
    d = args.work + "/idx"
    write_idx(d)
    p, r = run(
        args,
        mpiexec,
        args.ranks,
        [
            "--backend",
            "host",
            "--data",
            "idx:" + d,
            "--epochs",
            "3",
            "--batch-size",
            "32",
            "--hidden",
            "64",
            "--min-improvement",
            "50",
        ],
        report_dir=args.work + "/report",
    )
    check(p.returncode == 0, "exit code %d, expected 0" % p.returncode)
    if r is None:
        check(False, "no report")
        return
    s = r["summary"]
    check(
        s["data"].startswith("idx:") and s["model"]["input"] == 64 and s["model"]["classes"] == 4,
        "data %r model %r" % (s["data"], s["model"]),
    )
    check(
        s["steps"] == 3 * math.ceil(2048 / (32 * args.ranks)),
        "3 epochs should be %d steps, got %d" % (3 * math.ceil(2048 / (32 * args.ranks)), s["steps"]),
    )
    check(s["improvement"] >= 0.5 and s["replicas_identical"], "improvement %r" % s["improvement"])


def expect_usage_error(args, mpiexec, flags, want, code=2, env_extra=None):
    p, _ = run(args, mpiexec, args.ranks, flags, env_extra=env_extra)
    ours = [l for l in p.stderr.splitlines() if l.startswith("ddp_smoke:")]
    check(p.returncode == code, "%r: exit code %d, expected %d" % (flags, p.returncode, code))
    if code == 2:
        check(len(ours) == 1 and want in ours[0], "%r: want one stderr line with %r, got %r" % (flags, want, ours))
    else:
        check(want in p.stderr, "%r: stderr should mention %r" % (flags, want))


def case_bad_idx(args, mpiexec):
    expect_usage_error(args, mpiexec, ["--data", "idx:" + args.work + "/does-not-exist"], "cannot open")
    write_idx(args.work + "/magic", n=64, corrupt="magic")
    expect_usage_error(args, mpiexec, ["--data", "idx:" + args.work + "/magic"], "not an IDX image file")
    write_idx(args.work + "/short", n=64, corrupt="truncate")
    expect_usage_error(args, mpiexec, ["--data", "idx:" + args.work + "/short"], "header says")
    # issue 18: a file shorter than its header said "magic 0x803, want 0x803"
    write_idx(args.work + "/stub", n=64, corrupt="header")
    expect_usage_error(args, mpiexec, ["--data", "idx:" + args.work + "/stub"], "shorter than an IDX image header")
    # issue 18: a path longer than the buffer was cut silently
    expect_usage_error(args, mpiexec, ["--data", "idx:/" + "d" * 1100], "idx: path longer than")
    # issue 18: epochs x steps per epoch beyond an int was 0 steps and a read of loss_curve[-1]
    expect_usage_error(
        args, mpiexec, ["--epochs", "1048576", "--samples", "8192", "--batch-size", "1"], "more than 1073741824"
    )


def case_no_gpu(args, mpiexec):
    """--backend gpu where no GPU is visible (hidden if there is one): an environment error, exit 3, saying
    why."""
    expect_usage_error(
        args, mpiexec, ["--backend", "gpu", "--quick"], "no GPU", code=3, env_extra={"CUDA_VISIBLE_DEVICES": ""}
    )


def compute_lists(report):
    return {rk["rank"]: rk["compute_ms_measurements"] for n in report["nodes"] for rk in n["ranks"]}


def case_straggler(args, mpiexec):
    """The slowed-rank hook (GPUACCEPT_TEST_SLOW_RANK/FACTOR, docs/testing.md): rank K computes 3x as long. It is
    a DDP_STRAGGLER warning naming it alone (a warning: exit 0), after every rank measured its compute time
    again in two more windows of steps, all three kept in the report; with --remeasure 0, one."""
    k = args.perturb_rank
    slow = {"GPUACCEPT_TEST_SLOW_RANK": str(k), "GPUACCEPT_TEST_SLOW_FACTOR": "3"}
    flags = ["--quick", "--backend", "host", "--steps", "60"]  # a step waits ~0.2 s on a loaded 2-core host
    p, r = run(args, mpiexec, args.ranks, flags, env_extra=slow, report_dir=args.work + "/report")
    check(p.returncode == 0, "a straggler is a warning: exit %d, expected 0" % p.returncode)
    if r is None:
        check(False, "no report")
        return
    check(
        finding_ranks(r, "DDP_STRAGGLER") == [k],
        "DDP_STRAGGLER on %r, expected [%d]" % (finding_ranks(r, "DDP_STRAGGLER"), k),
    )
    check([f["code"] for f in r["findings"]] == ["DDP_STRAGGLER"], "findings %r" % r["findings"])
    check("every rank measures it again (pass 2 of at most 2)" in p.stdout, "no second remeasurement pass")
    lists = compute_lists(r)
    check(all(len(v) == 3 for v in lists.values()), "3 compute measurements per rank: %r" % lists)
    best = {rk["rank"]: rk["compute_ms"] for n in r["nodes"] for rk in n["ranks"]}
    check(all(abs(best[x] - min(v)) < 1e-9 for x, v in lists.items()), "compute_ms is not the best of %r" % lists)
    p, r = run(args, mpiexec, args.ranks, flags + ["--remeasure", "0"], env_extra=slow, report_dir=args.work + "/once")
    check(
        r is not None
        and finding_ranks(r, "DDP_STRAGGLER") == [k]
        and "measures it again" not in p.stdout
        and all(len(v) == 1 for v in compute_lists(r).values()),
        "--remeasure 0: named on one measurement each, not measured again",
    )


def case_budget(args, mpiexec):
    """Training inside its share (issue 44, item 4): far more steps than --timeout allows. Every rank stops at the
    same step, before the bound (the old loop ran on until the watchdog ended it, exit 4); the throughput is still
    measured and the report says, under not_covered, which steps were cut."""
    asked = 200000
    flags = ["--quick", "--backend", "host", "--steps", str(asked), "--min-improvement", "0", "--timeout", "12"]
    p, r = run(args, mpiexec, args.ranks, flags, report_dir=args.work + "/report")
    check(p.returncode == 0, "exit code %d, expected 0 (the steps must fit --timeout)" % p.returncode)
    if r is None:
        check(False, "no report")
        return
    s = r["summary"]
    done = s["steps"]
    check(0 < done < asked, "steps %r: expected fewer than the %d asked" % (done, asked))
    check(s["samples_per_s"] > 0 and s["step_time_ms"] > 0, "throughput not measured: %r" % s["samples_per_s"])
    cut = [line for line in r.get("not_covered", []) if "out of time" in line]
    want = "training steps %d-%d of %d not run" % (done + 1, asked, asked)
    check(len(cut) == 1 and want in cut[0], "not_covered %r, expected '%s'" % (r.get("not_covered"), want))
    check("not covered: ddp_smoke: " + want in p.stdout, "the cut is not in the log")
    check(r["verdict"]["result"] == "pass", "verdict %r" % r["verdict"])
    # A cut that leaves the loss short of --min-improvement (a learning rate too small for the few steps that
    # fit): the bound is the whole run's, so a warning, not a failure (the old check failed a healthy run).
    flags = ["--quick", "--backend", "host", "--steps", str(asked), "--lr", "0.00001", "--momentum", "0"]
    p, r = run(args, mpiexec, args.ranks, flags + ["--timeout", "4"], report_dir=args.work + "/short")
    found = [] if r is None else [(f["code"], f["severity"]) for f in r["findings"]]
    check(
        p.returncode == 0 and found == [("DDP_LOSS_NOT_JUDGED", "warn")],
        "a cut run short of --min-improvement: exit %d, findings %r; expected 0 and one DDP_LOSS_NOT_JUDGED warning"
        % (p.returncode, found),
    )


def case_comm_slow(args, mpiexec):
    """Communication far beyond its share (issue 44, item 4): rank K starts every step 300 ms late, asleep (the
    delay hook, docs/testing.md), so the others wait on its gradients while every rank computes alike. One
    DDP_COMM_DOMINATES warning names rank K (exit 0); the same run without the hook has none; with every rank's
    wait 300 ms longer (a slow fabric) the warning is at the cluster and names the fabric."""
    k = args.perturb_rank
    flags = ["--quick", "--backend", "host", "--steps", "60", "--min-improvement", "0"]
    p, r = run(args, mpiexec, args.ranks, flags, report_dir=args.work + "/healthy")
    check(r is not None and p.returncode == 0, "fault-free run: exit %d" % p.returncode)
    check(
        r is None or finding_ranks(r, "DDP_COMM_DOMINATES") == [],
        "fault-free run warned: %r" % (r or {}).get("findings"),
    )
    delay = {"GPUACCEPT_TEST_DELAY_RANK": str(k), "GPUACCEPT_TEST_DELAY_US": "300000"}
    # 10 steps: the delay dwarfs what a loaded host adds to a step (a share of 96-97 % with 10 ms steps)
    flags = flags[:-4] + ["--steps", "10", "--min-improvement", "0"]
    p, r = run(args, mpiexec, args.ranks, flags, env_extra=delay, report_dir=args.work + "/delayed")
    check(p.returncode == 0, "a warning: exit %d, expected 0" % p.returncode)
    if r is None:
        check(False, "no report")
        return
    codes = [f["code"] for f in r["findings"]]
    check(codes == ["DDP_COMM_DOMINATES"], "findings %r, expected one DDP_COMM_DOMINATES" % codes)
    check(
        finding_ranks(r, "DDP_COMM_DOMINATES") == [k],
        "DDP_COMM_DOMINATES on %r" % finding_ranks(r, "DDP_COMM_DOMINATES"),
    )
    msg = " ".join(f["message"] for f in r["findings"])
    check("the others waited for rank %d" % k in msg, "the message does not name rank %d: %s" % (k, msg))
    # a slow fabric (every rank's wait 300 ms longer, GPUACCEPT_TEST_GRAD_DELAY_US): the cluster, no rank named
    p, r = run(args, mpiexec, args.ranks, flags, {"GPUACCEPT_TEST_GRAD_DELAY_US": "300000"}, args.work + "/fabric")
    found = [] if r is None else [f for f in r["findings"] if f["code"] == "DDP_COMM_DOMINATES"]
    check(
        p.returncode == 0 and len(found) == 1 and found[0].get("rank") in (None, -1),
        "slow fabric: exit %d, DDP_COMM_DOMINATES %r, expected one at the cluster" % (p.returncode, found),
    )
    check(any("fabric between the ranks is slow" in f["message"] for f in found), "slow fabric: not named")


CASES = {
    "trains": case_trains,
    "budget": case_budget,
    "comm-slow": case_comm_slow,
    "straggler": case_straggler,
    "equivalence": case_equivalence,
    "perturb": case_perturb,
    "not-improved": case_not_improved,
    "nonfinite": case_nonfinite,
    "idx": case_idx,
    "bad-idx": case_bad_idx,
    "no-gpu": case_no_gpu,
}


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--perturb-rank", type=int, default=1)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args(argv[:cut])
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    CASES[args.case](args, argv[cut + 1 :])
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
