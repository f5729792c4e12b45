#!/usr/bin/env python3
"""False-alarm rate and power of the relative checks of every program on this host (issue 32).

Runs each program RUNS times at each rank count with no fault, then RUNS times with one rank slowed, and reads
each run's JSON report. A fault-free run must end with exit 0 and no finding of severity fail or warn (any
such finding is a false finding); a slowed run must name the slowed rank, and no other rank, by a relative
finding (below its peers, a straggler, a slow node or link). The slowing is the programs' own test hook:
GPUACCEPT_TEST_SLOW_RANK / GPUACCEPT_TEST_SLOW_FACTOR (the host paths of gemm_flops, mem_bw and ddp_smoke),
and for allreduce_bw its delay hook GPUACCEPT_TEST_DELAY_RANK / _US.

    false_alarm_rate.py --bin-dir build-host/bin [--program gemm_flops,mem_bw,ddp_smoke,allreduce_bw]
                        [--np 2,4,8] [--runs 20] [--slow-np 4] [--slow-rank 1] [--slow-factor 2]
                        [--delay-us 100000] [--load N] [--phases healthy,slow] [--table FILE]
                        [--args PROGRAM='extra args'] [--mpirun mpirun] [--mpirun-args '--bind-to none']
                        [--keep DIR]

--load N keeps N busy processes of this script's own running for the whole measurement (other agents may load
the host as well: the load average is recorded before every run). Prints one line per run and a Markdown table;
exits 1 when a fault-free run had a finding or failed, or a slowed run was named in fewer than 95 % of runs.
Needs mpirun (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)."""
import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

# The findings of the relative checks: those that name one member for being worse than its peers, and those that
# name two (a pair of members that differ, a slow link).
NAMES_ONE = {"GEMM_BELOW_MEDIAN", "MEM_BELOW_MEDIAN", "DDP_STRAGGLER", "COMM_SLOW_NODE", "COMM_NODE_BUSBW_LOW"}
RELATIVE = NAMES_ONE | {
    "GEMM_PEERS_DIFFER",
    "MEM_PEERS_DIFFER",
    "DDP_PEERS_DIFFER",
    "COMM_SLOW_LINK",
    "COMM_NODE_PEERS_DIFFER",
}

DEFAULT_ARGS = {
    "gemm_flops": ["--quick", "--backend", "host"],
    "mem_bw": ["--quick", "--backend", "host"],
    "ddp_smoke": ["--quick", "--backend", "host"],
    "allreduce_bw": [
        "--pattern",
        "pairs",
        "--rounds",
        "all",
        "-b",
        "256K",
        "-e",
        "1M",
        "-f",
        "4",
        "-n",
        "5",
        "-w",
        "1",
    ],
}


def slow_env(program, rank, factor, delay_us):
    if program == "allreduce_bw":
        return {"GPUACCEPT_TEST_DELAY_RANK": str(rank), "GPUACCEPT_TEST_DELAY_US": str(delay_us)}
    return {"GPUACCEPT_TEST_SLOW_RANK": str(rank), "GPUACCEPT_TEST_SLOW_FACTOR": str(factor)}


def keep_report(a, program, label, run, rep):
    """Copies the report of a run with a finding to --keep DIR, for the reader of the table."""
    if not a.keep or not run["findings"] or not run["reported"]:
        return
    os.makedirs(a.keep, exist_ok=True)
    dest = os.path.join(a.keep, "%s-%s.json" % (program, label.replace(" ", "-")))
    subprocess.run(["cp", os.path.join(rep, program + ".json"), dest], check=False)


def one_run(a, program, np_, extra, env_add, workdir, label=""):
    rep = os.path.join(workdir, "report")
    subprocess.run(["rm", "-rf", rep], check=False)
    cmd = [a.mpirun, "--oversubscribe"] + shlex.split(a.mpirun_args) + ["-np", str(np_)]
    for k, v in env_add.items():
        cmd += ["-x", "%s=%s" % (k, v)]
    cmd += [os.path.join(a.bin_dir, program)] + DEFAULT_ARGS[program] + extra + ["--report-dir", rep]
    load = os.getloadavg()[0]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    seconds = time.time() - t0
    findings = []
    try:
        with open(os.path.join(rep, program + ".json")) as f:
            findings = [x for x in json.load(f)["findings"] if x["severity"] in ("fail", "warn")]
        reported = True
    except (OSError, ValueError, KeyError):
        reported = False
    run = {"rc": rc, "findings": findings, "reported": reported, "load": load, "seconds": seconds}
    keep_report(a, program, label, run, rep)
    return run


def describe(run):
    fs = ["%s %s rank %s" % (f["severity"], f["code"], f.get("rank")) for f in run["findings"]]
    return "exit=%s load=%.1f %.1fs findings=[%s]%s" % (
        run["rc"],
        run["load"],
        run["seconds"],
        "; ".join(fs),
        "" if run["reported"] else " NO REPORT",
    )


def named_alone(run, rank):
    rel = [f for f in run["findings"] if f["code"] in RELATIVE]
    return bool(rel) and all(f["code"] in NAMES_ONE and f.get("rank") == rank for f in rel)


def start_load(n):
    procs = []
    for _ in range(n):
        procs.append(subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True))
    return procs


def stop_load(procs):
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def summarise(rows, runs, label):
    loads = [r["load"] for r in runs]
    secs = [r["seconds"] for r in runs]
    rows.append(
        dict(
            label,
            runs=len(runs),
            load="%.1f-%.1f (mean %.1f)" % (min(loads), max(loads), sum(loads) / len(loads)),
            seconds="%.1f" % (sum(secs) / len(secs)),
        )
    )


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--program", default="gemm_flops,mem_bw,ddp_smoke,allreduce_bw")
    ap.add_argument("--np", default="2,4,8")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--slow-np", type=int, default=4)
    ap.add_argument("--slow-rank", type=int, default=1)
    ap.add_argument("--slow-factor", type=float, default=2.0)
    ap.add_argument("--delay-us", type=int, default=100000, help="allreduce_bw's delay per iteration")
    ap.add_argument("--load", type=int, default=0)
    ap.add_argument("--phases", default="healthy,slow")
    ap.add_argument("--table")
    ap.add_argument("--args", action="append", default=[], metavar="PROGRAM='ARGS'")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--mpirun-args", default="", help="more mpirun options, e.g. '--bind-to none'")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--keep", help="copy the report of every run with a finding into this directory")
    a = ap.parse_args()
    programs = a.program.split(",")
    extra = {p: [] for p in programs}
    for spec in a.args:
        p, _, rest = spec.partition("=")
        if p not in DEFAULT_ARGS:
            ap.error("--args: unknown program %r" % p)
        extra.setdefault(p, []).extend(shlex.split(rest))
    for p in programs:
        if p not in DEFAULT_ARGS:
            ap.error("unknown program %r (one of %s)" % (p, ", ".join(DEFAULT_ARGS)))
    return a, programs, extra


def healthy_phase(a, program, extra, work, rows, bad):
    """Fault-free runs at every --np: any finding is a false alarm."""
    for np_ in [int(x) for x in a.np.split(",")]:
        runs, false_runs, fails = [], 0, 0
        for i in range(a.runs):
            r = one_run(a, program, np_, extra, {}, work, "np%d-healthy-%d" % (np_, i + 1))
            runs.append(r)
            false = r["rc"] != 0 or r["findings"] or not r["reported"]
            false_runs += bool(false)
            fails += any(f["severity"] == "fail" for f in r["findings"]) or r["rc"] != 0
            print("%s np %d healthy %d: %s" % (program, np_, i + 1, describe(r)), flush=True)
        summarise(
            rows,
            runs,
            {
                "program": program,
                "ranks": np_,
                "fault": "none",
                "result": "%d with a finding (%d failed)" % (false_runs, fails),
            },
        )
        if false_runs:
            bad.append("%s np %d: %d fault-free runs with a finding" % (program, np_, false_runs))


def slow_phase(a, program, extra, work, rows, bad):
    """Runs with one rank slowed by the test hooks: it must be named, and alone, in 95 % of them."""
    env = slow_env(program, a.slow_rank, a.slow_factor, a.delay_us)
    runs, named = [], 0
    for i in range(a.runs):
        r = one_run(a, program, a.slow_np, extra, env, work, "np%d-slow-%d" % (a.slow_np, i + 1))
        runs.append(r)
        named += named_alone(r, a.slow_rank)
        print("%s np %d slow rank %d %d: %s" % (program, a.slow_np, a.slow_rank, i + 1, describe(r)), flush=True)
    fault = (
        "rank %d delayed %d us/iteration" % (a.slow_rank, a.delay_us)
        if program == "allreduce_bw"
        else "rank %d slowed F = %g" % (a.slow_rank, a.slow_factor)
    )
    summarise(
        rows, runs, {"program": program, "ranks": a.slow_np, "fault": fault, "result": "named alone in %d" % named}
    )
    if named < 0.95 * a.runs:
        bad.append("%s: slowed rank named alone in %d of %d" % (program, named, a.runs))


def print_table(rows, path):
    lines = [
        "| program | ranks | fault | runs | result | load average (1 min) | mean s/run |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            "| %s | %d | %s | %d | %s | %s | %s |"
            % (r["program"], r["ranks"], r["fault"], r["runs"], r["result"], r["load"], r["seconds"])
        )
    table = "\n".join(lines)
    print(table)
    if path:
        with open(path, "w") as f:
            f.write(table + "\n")


def main():
    a, programs, extra = parse_args()
    rows, bad = [], []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the load processes go too (finally below)
    load = start_load(a.load)
    try:
        with tempfile.TemporaryDirectory() as work:
            for program in programs:
                if "healthy" in a.phases:
                    healthy_phase(a, program, extra[program], work, rows, bad)
                if "slow" in a.phases:
                    slow_phase(a, program, extra[program], work, rows, bad)
    finally:
        stop_load(load)
    print_table(rows, a.table)
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
