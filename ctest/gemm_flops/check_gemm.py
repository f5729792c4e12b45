"""End-to-end checks of gemm_flops on the host path: runs it under mpiexec and checks its output and report.

usage: check_gemm.py --bin PATH --np N --mode MODE --workdir DIR -- MPIEXEC...
modes: basic (figures recomputed from recorded times), burn (SDC checksums agree), corrupt (a damaged GEMM is
caught by the check and named by the SDC comparison), unavailable (an explicit dtype the host lacks), badflags,
and for the outlier rule (issue 32): healthy (nothing named, at --shared-cores-tolerance), slow (the
slowed-rank hook names that rank alone, after remeasuring), pair (two ranks, one slowed: a warning naming
both, no failure).
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import failures as errors, fail_unless as check, status as gatest_status  # noqa: E402


def run(mpiexec, np_, args, env=None, timeout=120):
    cmd = list(mpiexec) + ["-np", str(np_)] + args
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    return p


def load(d):
    with open(os.path.join(d, "gemm_flops.json")) as f:
        return json.load(f)


def ranks(report):
    return [r for node in report["nodes"] for r in node["ranks"]]


def check_figures(report, np_, dtypes):
    s = report["summary"]
    check(s["backend"] == "openblas", "backend %r" % s["backend"])
    check([d["dtype"] for d in s["dtypes"]] == dtypes, "dtypes %r" % [d["dtype"] for d in s["dtypes"]])
    m, n, k = s["m"], s["n"], s["k"]
    by_rank = {r["rank"]: r for r in ranks(report)}
    check(len(by_rank) == np_, "%d ranks in the report" % len(by_rank))
    for d in s["dtypes"]:
        check(d["peak_tflops"] is None, "%s: a CPU has no peak" % d["dtype"])
        check(len(d["gpus"]) == np_, "%s: %d entries" % (d["dtype"], len(d["gpus"])))
        vals = []
        for g in d["gpus"]:
            rec = by_rank[g["rank"]]["gemm"][d["dtype"]]
            check(rec["state"] == "measured", "rank %d %s not measured" % (g["rank"], d["dtype"]))
            check(rec["check_ok"] is True, "rank %d %s failed its check" % (g["rank"], d["dtype"]))
            tf = 2.0 * m * n * k * rec["iters"] / rec["time_s"] / 1e12
            check(0 < g["tflops"] < 100, "rank %d: %g TFLOP/s is not a CPU figure" % (g["rank"], g["tflops"]))
            check(abs(g["tflops"] - tf) <= 1e-9 * tf, "rank %d %s: %g TFLOP/s, recomputed %g"
                  % (g["rank"], d["dtype"], g["tflops"], tf))
            check(g["efficiency"] is None, "efficiency must be null on a CPU")
            check(g["gpu"] is None, "gpu must be null on the host path")
            vals.append(g["tflops"])
        vals.sort()
        med = vals[len(vals) // 2] if len(vals) % 2 else (vals[len(vals) // 2 - 1] + vals[len(vals) // 2]) / 2
        check(abs(d["median_tflops"] - med) <= 1e-9 * med, "%s median %g, recomputed %g"
              % (d["dtype"], d["median_tflops"], med))
        names = [x for x in report["metrics"] if x["name"] == "tflops_" + d["dtype"]]
        check(len(names) == np_, "%d tflops_%s metrics" % (len(names), d["dtype"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--workdir", required=True)
    # the tolerance of the healthy and slowed 4-rank runs: GA_SHARED_CORES_TOLERANCE, ctest/CMakeLists.txt
    ap.add_argument("--shared-cores-tolerance")
    ap.add_argument("mpiexec", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    for f in os.listdir(a.workdir):
        os.remove(os.path.join(a.workdir, f))
    # Oversubscribed ranks on a CI machine's few shared cores are not comparable at 10%: the runs here check
    # figures, checks and reports (tolerance 100%: never below the median); the flagging is proven by the
    # fixtures.
    base = [a.bin, "--backend", "host", "--report-dir", a.workdir, "--tolerance", "100"]

    if a.mode == "basic":
        p = run(a.mpiexec, a.np, base + ["--dtype", "all", "-m", "256", "-n", "192", "-k", "320", "--iters", "3"])
        check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-2000:]))
        r = load(a.workdir)
        check_figures(r, a.np, ["fp64", "fp32"])
        lines = [l for l in p.stdout.splitlines() if re.match(r"\[COMPUTE\] node \d+ \S+ rank \d+ cpu", l)]
        check(len(lines) == a.np, "%d [COMPUTE] device lines, expected %d" % (len(lines), a.np))
        order = [int(re.search(r"rank (\d+)", l).group(1)) for l in lines]
        check(order == sorted(order), "device lines out of order: %r" % order)
        check(r["verdict"]["result"] == "pass", "verdict %r" % r["verdict"])
        check(r["summary"]["burn"] is None, "burn must be null without --duration")
        check(p.stdout.rstrip().endswith("[RESULT] SUCCESS"), "last line: %r" % p.stdout[-200:])
        # -n and -k default to -m, as --help says (they took the default size: issue 30, on a GPU)
        p = run(a.mpiexec, a.np, base + ["--dtype", "fp32", "-m", "96", "--iters", "2"])
        check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-2000:]))
        shapes = {(x["m"], x["n"], x["k"]) for nd in load(a.workdir)["nodes"] for x in nd["ranks"]}
        check(shapes == {(96, 96, 96)}, "-m 96 alone gave m, n, k %r" % shapes)
    elif a.mode == "burn":
        p = run(a.mpiexec, a.np, base + ["--dtype", "fp32", "--quick", "--duration", "3", "--interval", "1",
                                         "--max-drop", "100"])
        check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-2000:]))
        r = load(a.workdir)
        b = r["summary"]["burn"]
        check(b is not None and b["intervals"] == 3 and b["dtype"] == "fp32", "burn %r" % b)
        check(b["sdc_mismatches"] == 0, "SDC mismatches on identical ranks: %r" % b)
        check(len({g["checksum"] for g in b["gpus"]}) == 1, "checksums differ across ranks")
        for g in b["gpus"]:
            iv = g["interval_tflops"]
            check(len(iv) == 3 and all(x > 0 for x in iv), "intervals %r" % iv)
            # judged on all intervals: the median of the last third against the first (one each of three)
            drop = 100.0 * (iv[0] - iv[-1]) / iv[0]
            check(abs(g["drop_pct"] - drop) < 1e-9, "drop %g, recomputed %g" % (g["drop_pct"], drop))
            t = g["throttling"]
            check(t["judged"] and t["intervals_judged"] == 3 and t["bound_pct"] >= 100 and not t["fell"],
                  "throttling judgement %r" % t)
        check(len([m for m in r["metrics"] if m["name"] == "burn_drop_pct"]) == a.np, "burn_drop_pct metrics")
    elif a.mode == "corrupt":
        victim = a.np - 1
        p = run(a.mpiexec, a.np, base + ["--dtype", "fp32", "--quick", "--duration", "2", "--interval", "1",
                                         "--max-drop", "100"], env={"GPUACCEPT_TEST_CORRUPT_RANK": str(victim)})
        check(p.returncode == 1, "a corrupted GEMM must fail the run: exit %d" % p.returncode)
        r = load(a.workdir)
        wrong = [f for f in r["findings"] if f["code"] == "GEMM_WRONG_RESULT"]
        check([f["rank"] for f in wrong] == [victim], "GEMM_WRONG_RESULT on %r" % [f["rank"] for f in wrong])
        sdc = [f for f in r["findings"] if f["code"] == "GEMM_SDC_MISMATCH"]
        check([f["rank"] for f in sdc] == [victim], "GEMM_SDC_MISMATCH on %r, expected [%d]"
              % ([f["rank"] for f in sdc], victim))
        check(r["verdict"]["result"] == "fail", "verdict %r" % r["verdict"])
    elif a.mode == "unavailable":
        p = run(a.mpiexec, a.np, base + ["--dtype", "bf16,fp32", "--quick"])
        check(p.returncode == 0, "exit %d" % p.returncode)
        r = load(a.workdir)
        codes = [(f["code"], f["severity"]) for f in r["findings"]]
        check(("GEMM_DTYPE_UNAVAILABLE", "warn") in codes, "findings %r" % codes)
        bf16 = [d for d in r["summary"]["dtypes"] if d["dtype"] == "bf16"][0]
        check(bf16["median_tflops"] is None and bf16["gpus"] == [] and bf16["skipped"]["ranks"] == a.np,
              "bf16 %r" % bf16)
    elif a.mode in ("healthy", "slow", "pair"):
        rel = [a.bin, "--backend", "host", "--report-dir", a.workdir, "--quick"]
        if a.mode != "pair" and a.shared_cores_tolerance:  # two ranks name nobody: the pair is held at the default
            rel += ["--tolerance", a.shared_cores_tolerance]
        slow = a.np // 2
        env = {} if a.mode == "healthy" else {"GPUACCEPT_TEST_SLOW_RANK": str(slow), "GPUACCEPT_TEST_SLOW_FACTOR": "3"}
        p = run(a.mpiexec, a.np, rel, env=env)
        r = load(a.workdir)
        named = [(f["code"], f["severity"], f["rank"]) for f in r["findings"]]
        meas = {x["rank"]: x["gemm"]["fp32"]["measurements"] for x in ranks(r)}
        if a.mode == "healthy":
            check(p.returncode == 0 and named == [], f"healthy ranks at {a.shared_cores_tolerance or 10}%: exit {p.returncode}, findings {named!r}")
        elif a.mode == "slow":
            check(p.returncode == 1, "a rank 3x slower fails the run: exit %d" % p.returncode)
            check(named and all(c == "GEMM_BELOW_MEDIAN" and s == "fail" and k == slow for c, s, k in named),
                  "GEMM_BELOW_MEDIAN on rank %d alone: %r" % (slow, named))
            check(all(len(m) == 3 for m in meas.values()), "measured 3 times on every rank: %r" % meas)
            check("every rank measures it again (pass 2 of at most 2)" in p.stdout, "no second remeasurement pass")
            for x in ranks(r):
                g = x["gemm"]["fp32"]
                check(abs(g["tflops"] - max(g["measurements"])) <= 1e-12, "rank %d: tflops is not the best" % x["rank"])
        else:
            check(p.returncode == 0, "two ranks never fail one: exit %d" % p.returncode)
            check([c for c, _, _ in named if c == "GEMM_BELOW_MEDIAN"] == []
                  and any(c == "GEMM_PEERS_DIFFER" and s == "warn" for c, s, _ in named),
                  "two ranks, one slowed: a GEMM_PEERS_DIFFER warning, no GEMM_BELOW_MEDIAN: %r" % named)
            msg = [f["message"] for f in r["findings"] if f["code"] == "GEMM_PEERS_DIFFER"]
            check(msg and "rank 0" in msg[0] and "rank 1" in msg[0], "the warning names both ranks: %r" % msg)
    elif a.mode == "badflags":
        for bad in (["--dtype", "fp7"], ["-m", "0"], ["--backend", "tpu"], ["--bogus"], ["--tolerance", "101"],
                    ["--tolerance", "0.1"], ["--min-efficiency", "0.6"],
                    ["--duration", "1", "--burn-dtype", "bf16"], ["-k"], ["--remeasure", "-1"],
                    ["--remeasure", "17"], ["--relative", "maybe"]):
            p = run(a.mpiexec, a.np, base + bad)
            check(p.returncode == 2, "%r: exit %d, expected 2" % (bad, p.returncode))
            lines = [l for l in p.stderr.splitlines() if l.startswith("gemm_flops:")]
            check(len(lines) == 1, "%r: %d error lines: %r" % (bad, len(lines), p.stderr))
    else:
        errors.append("unknown mode " + a.mode)

    return gatest_status()


if __name__ == "__main__":
    sys.exit(main())
