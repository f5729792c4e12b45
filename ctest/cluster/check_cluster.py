#!/usr/bin/env python3
"""The multi-node claims, tested on a cluster of namespaces on this machine (cluster.sh).

usage: check_cluster.py CASE BIN_DIR WORK_DIR

Each case brings the cluster up (which first removes whatever an earlier, killed run left), applies its fault,
runs the real programs under mpirun with real orted daemons on every node, asserts on the JSON reports (never
on the printed tables), and takes the cluster down again, also when it fails or is interrupted. Cases hold an
exclusive lock, so two test runs on one machine take turns instead of tearing down each other's nodes.
Exit 77 (skipped) without root or the tools, as cluster.sh does.
"""
import fcntl
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "cluster.sh")
STEP_TIMEOUT = 150  # one mpirun; below every case's ctest TIMEOUT, so that the finally clause still runs
# The shaped node or link: 10% of what an unshaped veth carries here even on a loaded 2-core machine.
SLOW_RATE = "40mbit"
# Every node's link in the pairs cases (cluster.sh fabric): 10 x SLOW_RATE, and slow enough that a 1 MiB
# exchange (20 ms) outweighs the scheduling of ranks on 2 shared cores.
FABRIC_RATE = "400mbit"


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def cluster(*args, check_rc=True):
    p = subprocess.run([CLUSTER, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode == 77:
        print(p.stdout, end="")
        sys.exit(77)
    if check_rc and p.returncode != 0:
        raise Fail(f"cluster.sh {' '.join(args)}: exit {p.returncode}\n{p.stdout}")
    return p


def hostfile():
    return cluster("hostfile").stdout.strip()


def mpirun(np, prog, args, expect_exit=(0,), env=None):
    """Runs PROG on the cluster (mpirun on node01, daemons on the others); returns (exit, output)."""
    cmd = [CLUSTER, "run", "mpirun", "--hostfile", hostfile(), "-np", str(np), prog, *args]
    e = dict(os.environ)
    e.update(env or {})
    t0 = time.time()
    try:
        p = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e, timeout=STEP_TIMEOUT
        )
    except subprocess.TimeoutExpired as ex:
        raise Fail(f"{os.path.basename(prog)} did not finish within {STEP_TIMEOUT} s:\n{ex.output}")
    print(f"  {os.path.basename(prog)} -np {np}: exit {p.returncode} in {time.time() - t0:.1f} s")
    if p.returncode not in expect_exit:
        raise Fail(f"{os.path.basename(prog)} exit {p.returncode}, expected {expect_exit}:\n{p.stdout}")
    return p.returncode, p.stdout


def load(path):
    with open(path) as f:
        return json.load(f)


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def finding_codes(rep):
    return [f["code"] for f in rep["findings"]]


def report_hosts(rep):
    return sorted(n["host"] for n in rep["nodes"])


# ---- cases -------------------------------------------------------------------------------------------------


def case_env_audit(bin_dir, work):
    """4 nodes x 2 ranks: 4 distinct hosts; node03 alone runs with another NCCL setting and is named."""
    cluster("up", "4", "2")
    cluster("setenv", "node03", "NCCL_IB_HCA=mlx5_9")
    d = fresh(os.path.join(work, "env_audit"))
    mpirun(8, os.path.join(bin_dir, "env_audit"), ["--report-dir", d], expect_exit=(1,))
    rep = load(os.path.join(d, "env_audit.json"))
    hosts = report_hosts(rep)
    check(hosts == ["node01", "node02", "node03", "node04"], f"hosts {hosts}, expected node01..node04")
    per_host = {n["host"]: n["local_ranks"] for n in rep["nodes"]}
    check(all(v == 2 for v in per_host.values()), f"ranks per host {per_host}, expected 2 each")
    named = [f for f in rep["findings"] if f["code"] == "ENV_NCCL_SETTINGS_MISMATCH"]
    check(named, f"no ENV_NCCL_SETTINGS_MISMATCH among {finding_codes(rep)}")
    check({f["host"] for f in named} == {"node03"}, f"NCCL settings finding names {[f['host'] for f in named]}")


# One size, large enough that a pair's time is its link's bandwidth rather than the scheduling noise of
# ranks sharing 2 cores (a 1 MiB exchange takes 0.2 s at SLOW_RATE, 20 ms at FABRIC_RATE).
PAIRS_ARGS = ["--pattern", "pairs", "-b", "1M", "-e", "1M", "-n", "8", "-w", "1", "--tolerance", "50"]


def run_pairs(bin_dir, d, n, expect_exit):
    mpirun(n, os.path.join(bin_dir, "allreduce_bw"), PAIRS_ARGS + ["--report-dir", fresh(d)], expect_exit=expect_exit)
    rep = load(os.path.join(d, "allreduce_bw.json"))
    pr = rep["summary"]["pairs"]
    check(pr and pr["unit"] == "node", f"pairs section {pr and pr.get('unit')}, expected members to be nodes")
    return rep


def node_findings(rep):
    return sorted(f["host"] for f in rep["findings"] if f["code"] == "COMM_SLOW_NODE")


def case_pairs_slow_node(bin_dir, work, n):
    """--pattern pairs on N nodes, node03 rate-limited: COMM_SLOW_NODE names node03 and nothing else."""
    cluster("up", str(n), "1")
    cluster("fabric", FABRIC_RATE)
    cluster("slow", "node03", SLOW_RATE)
    rep = run_pairs(bin_dir, os.path.join(work, f"pairs_slow_node_{n}"), n, (1,))
    check(
        node_findings(rep) == ["node03"],
        f"COMM_SLOW_NODE on {node_findings(rep)}, expected node03; " f"findings {finding_codes(rep)}",
    )
    check("COMM_SLOW_LINK" not in finding_codes(rep), f"a slow link named as well: {rep['findings']}")
    check(
        [s["host"] for s in rep["summary"]["pairs"]["suspects"]] == ["node03"],
        f"suspects {rep['summary']['pairs']['suspects']}",
    )


def case_pairs_slow_link(bin_dir, work, n):
    """One slow link between healthy node02 and node04: COMM_SLOW_LINK with both ends, no node named."""
    cluster("up", str(n), "1")
    cluster("fabric", FABRIC_RATE)
    cluster("slow-link", "node02", "node04", SLOW_RATE)
    rep = run_pairs(bin_dir, os.path.join(work, f"pairs_slow_link_{n}"), n, (1,))
    check(node_findings(rep) == [], f"a node named: {node_findings(rep)} (findings {rep['findings']})")
    links = [f for f in rep["findings"] if f["code"] == "COMM_SLOW_LINK"]
    check(len(links) == 1, f"{len(links)} COMM_SLOW_LINK findings, expected 1: {rep['findings']}")
    flagged = [sorted(p["hosts"]) for p in rep["summary"]["pairs"]["pairs"] if p["flagged"]]
    check(flagged == [["node02", "node04"]], f"flagged pairs {flagged}, expected node02-node04 only")
    text = json.dumps(links[0])
    check("node02" in text and "node04" in text, f"the finding does not name both ends: {links[0]}")
    check(rep["summary"]["pairs"]["suspects"] == [], f"suspects {rep['summary']['pairs']['suspects']}, expected none")


HEALTHY_RUNS = int(os.environ.get("GA_CLUSTER_HEALTHY_RUNS", "5"))
# Pairs mode now remeasures what would make a finding and names only outliers beyond the noise (median and MAD,
# docs/allreduce_bw.md "No false alarms"): 0 alarms in 20 healthy runs at 8 and at 16 oversubscribed ranks on this
# machine (false_alarm_rate.sh), where the earlier single-measurement rule gave 1 in 20 on this cluster. 0 in 20 does
# not prove a rate of 0, and CI machines are busier, so the test still tolerates one alarm in HEALTHY_RUNS and fails
# on a second; the count is printed either way.
HEALTHY_ALARMS_ALLOWED = int(os.environ.get("GA_CLUSTER_HEALTHY_ALARMS", "1"))


def case_pairs_healthy(bin_dir, work):
    """No fault, repeated pairs runs on 4 nodes: at most HEALTHY_ALARMS_ALLOWED runs with a finding (false
    alarms counted and printed)."""
    cluster("up", "4", "1")
    cluster("fabric", FABRIC_RATE)
    alarms = []
    for i in range(HEALTHY_RUNS):
        rep = run_pairs(bin_dir, os.path.join(work, f"pairs_healthy_{i}"), 4, (0, 1))
        if rep["findings"]:
            alarms.append((i, [(f["code"], f.get("host")) for f in rep["findings"]]))
    print(f"  false alarms: {len(alarms)} of {HEALTHY_RUNS} healthy runs {alarms}")
    check(
        len(alarms) <= HEALTHY_ALARMS_ALLOWED,
        f"findings without a fault in {len(alarms)} of {HEALTHY_RUNS} runs (at most {HEALTHY_ALARMS_ALLOWED}): {alarms}",
    )


def case_ddp_smoke(bin_dir, work):
    """ddp_smoke on 4 nodes x 2 ranks: passes, replicas agree, 4 hosts in the report."""
    cluster("up", "4", "2")
    d = fresh(os.path.join(work, "ddp_smoke"))
    mpirun(8, os.path.join(bin_dir, "ddp_smoke"), ["--quick", "--report-dir", d])
    rep = load(os.path.join(d, "ddp_smoke.json"))
    check(rep["verdict"]["result"] == "pass", f"verdict {rep['verdict']}: {finding_codes(rep)}")
    check(report_hosts(rep) == ["node01", "node02", "node03", "node04"], f"hosts {report_hosts(rep)}")


# gemm_flops and mem_bw compare ranks that share 2 cores here: a rank a few percent below the median is the
# machine's scheduling, not a multi-node claim, so those two codes are tolerated (and counted) in this case.
# *_TOO_NOISY: a warning that the run's own scatter was too wide to judge a smaller gap (issue 44, item 3): what
# 6 ranks on 2 shared cores may truthfully say, never a failure.
CPU_NOISE = {"GEMM_BELOW_MEDIAN", "MEM_BELOW_MEDIAN", "GEMM_TOO_NOISY", "MEM_TOO_NOISY"}
# The warnings node_health gives on a node without a GPU driver or InfiniBand: what it could not check.
NO_GPU_NO_IB = {"HEALTH_NVML_UNAVAILABLE", "HEALTH_IB_UNCHECKED"}
NODES4 = ["node01", "node02", "node03", "node04"]


def case_suite_hostfile(bin_dir, work):
    """gpuaccept run --hostfile across the namespaces: every step runs on 4 nodes, the grid has 4 nodes."""
    cluster("up", "4", "1")
    d = fresh(os.path.join(work, "suite"))
    cmd = [
        CLUSTER,
        "run",
        os.path.join(bin_dir, "gpuaccept"),
        "run",
        "--hostfile",
        hostfile(),
        "--quick",
        "--report-dir",
        d,
    ]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
    except subprocess.TimeoutExpired as ex:
        raise Fail(f"gpuaccept run did not finish within 240 s:\n{ex.output}")
    print(f"  gpuaccept run --hostfile: exit {p.returncode} in {time.time() - t0:.1f} s")
    check(p.returncode in (0, 1), f"gpuaccept run exit {p.returncode}\n{p.stdout}")
    summary = load(os.path.join(d, "summary.json"))
    for st in summary["steps"]:
        check(st["status"] in ("pass", "fail") and st.get("report"), f"step {st['program']}: {st['status']}")
        check(st["node_count"] == 4, f"step {st['program']} ran on {st['node_count']} nodes, expected 4")
        check(
            "/run/gacl/hostfile" in st["command"] or hostfile() in st["command"],
            f"step {st['program']} was not launched with the hostfile: {st['command']}",
        )
    nodes = sorted(n["host"] for n in summary["nodes"])
    check(nodes == NODES4, f"summary nodes {nodes}\n{p.stdout}")
    programs = [st["program"] for st in summary["steps"]]
    for n in summary["nodes"]:
        for prog in programs:
            # warn: node_health on nodes without a GPU driver or InfiniBand says what it could not check
            check(n["checks"].get(prog) in ("pass", "warn", "fail"), f"{n['host']}: {prog} is {n['checks'].get(prog)}")
        for prog in ("env_audit", "allreduce_bw", "ddp_smoke"):
            check(n["checks"][prog] == "pass", f"{n['host']}: {prog} {n['checks'][prog]}")
        check(set(n["fault_codes"]) <= CPU_NOISE | NO_GPU_NO_IB, f"{n['host']}: fault codes {n['fault_codes']}")
        check(n["checks"].get("node_health") in ("pass", "warn"), f"{n['host']}: node_health failed")
    noise = sum(len(set(n["fault_codes"]) & CPU_NOISE) for n in summary["nodes"])
    print(f"  per-node grid: {nodes}; CPU-noise throughput flags tolerated: {noise}")
    md = open(os.path.join(d, "summary.md")).read()
    check(all(h in md for h in NODES4), "summary.md lacks a node")


def case_suite_node_down(bin_dir, work):
    """gpuaccept run --hostfile with one node that cannot be launched on (its sshd down): the preflight names
    it (PREFLIGHT_*), the steps run on the 3 others, the summary lists it as excluded, exit 1."""
    cluster("up", "4", "1")
    cluster("unreachable", "node03")
    d = fresh(os.path.join(work, "node_down"))
    # Two short steps keep the case's wall time small; the preflight is what is under test.
    cmd = [
        CLUSTER,
        "run",
        os.path.join(bin_dir, "gpuaccept"),
        "run",
        "--hostfile",
        hostfile(),
        "--quick",
        "--only",
        "env_audit,allreduce_bw",
        "--preflight-timeout",
        "30",
        "--baseline",
        "none",
        "--report-dir",
        d,
    ]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=200)
    except subprocess.TimeoutExpired as ex:
        raise Fail(f"gpuaccept run did not finish within 200 s:\n{ex.output}")
    print(f"  gpuaccept run --hostfile, node03 unreachable: exit {p.returncode} in {time.time() - t0:.1f} s")
    print(p.stdout[-3000:])
    check(p.returncode == 1, f"gpuaccept run exit {p.returncode}, expected 1 (a node excluded)")
    summary = load(os.path.join(d, "summary.json"))
    excluded = summary.get("excluded_nodes") or []
    check([x.get("host") for x in excluded] == ["node03"], f"excluded nodes {excluded}")
    code = excluded[0].get("code") or excluded[0].get("fault_code") or ""
    check(str(code).startswith("PREFLIGHT_"), f"node03's exclusion code {excluded[0]}")
    check(
        any("node03" in l and "PREFLIGHT_" in l for l in p.stdout.splitlines()),
        "the run's output names node03 with its PREFLIGHT_ code",
    )
    ran = [st for st in summary["steps"] if st["status"] != "skipped"]
    check([st["program"] for st in ran] == ["env_audit", "allreduce_bw"], f"steps run: {ran}")
    for st in ran:
        check(st["status"] == "pass", f"step {st['program']}: {st['status']}")
        check(st["node_count"] == 3, f"step {st['program']} ran on {st['node_count']} nodes, expected 3")
    hosts = sorted(n["host"] for n in summary["nodes"] if any(v == "pass" for v in n["checks"].values()))
    check(hosts == ["node01", "node02", "node04"], f"nodes measured: {hosts}")
    check(
        summary["verdict"]["exit_code"] == 1
        and any(c.startswith("PREFLIGHT_") for c in summary["verdict"]["fault_codes"]),
        f"verdict {summary['verdict']}",
    )


# Issue 24: a node whose link is 60x slower than the fabric, under the standard profile's allreduce step.
BUDGET_FABRIC = "1gbit"  # the fabric: a 1 MiB pair exchange takes ~10 ms, above the scheduling noise here
BUDGET_SLOW = "16mbit"  # the faulty node: 62x slower
# The standard profile's patterns (world, node, pairs, --rounds all) over a sweep to 4 MiB: sizes enough to judge
# (1 MiB and 2 MiB) and a fault-free step of tens of seconds on this machine, not minutes.
BUDGET_ARGS = "allreduce_bw=-e 4M"


def run_allreduce_step(bin_dir, d):
    """gpuaccept run --profile standard --only allreduce_bw on the cluster; returns (summary, step, output)."""
    cmd = [
        CLUSTER,
        "run",
        os.path.join(bin_dir, "gpuaccept"),
        "run",
        "--hostfile",
        hostfile(),
        "--profile",
        "standard",
        "--only",
        "allreduce_bw",
        "--baseline",
        "none",
        "--preflight-timeout",
        "30",
        "--args",
        BUDGET_ARGS,
        "--report-dir",
        fresh(d),
    ]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=400)
    except subprocess.TimeoutExpired as ex:
        raise Fail(f"gpuaccept run did not finish within 400 s:\n{ex.output}")
    summary = load(os.path.join(d, "summary.json"))
    step = next(st for st in summary["steps"] if st["program"] == "allreduce_bw")
    print(f"  allreduce_bw step: {step['status']} in {step['duration_s']:.1f} s")
    return summary, step, p.stdout


def case_budget_slow_node(bin_dir, work, n):
    """One node 62x slower: the standard allreduce step names it, and only it, and ends within 3x the
    fault-free step's time (it ran to its 30-minute limit and blamed rank 0's healthy node before)."""
    cluster("up", str(n), "1")
    cluster("fabric", BUDGET_FABRIC)
    healthy, st0, out0 = run_allreduce_step(bin_dir, os.path.join(work, f"budget_healthy_{n}"))
    check(st0["status"] == "pass", f"fault-free: allreduce_bw {st0['status']}\n{out0[-3000:]}")
    cluster("slow", "node03", BUDGET_SLOW)
    faulty, st1, out1 = run_allreduce_step(bin_dir, os.path.join(work, f"budget_slow_{n}"))
    named = sorted({f["host"] for f in faulty["findings"] if f["severity"] == "fail"})
    print(
        f"  named: {named}; fault-free {st0['duration_s']:.1f} s, slow node {st1['duration_s']:.1f} s "
        f"({st1['duration_s'] / st0['duration_s']:.2f}x)"
    )
    check(st1["status"] == "fail", f"slow node: allreduce_bw {st1['status']}\n{out1[-3000:]}")
    check(named == ["node03"], f"the slow node03 is named, and no other node: {named}\n{out1[-3000:]}")
    check(
        any(f["code"] == "COMM_SLOW_NODE" and f["host"] == "node03" for f in faulty["findings"]),
        f"COMM_SLOW_NODE on node03: {[(f['code'], f['host']) for f in faulty['findings']]}",
    )
    check(
        st1["duration_s"] <= 3 * st0["duration_s"],
        f"the faulty step ends within 3x the fault-free one: {st1['duration_s']:.1f} s vs {st0['duration_s']:.1f} s",
    )


def transport_findings(rep):
    return sorted((f["code"], f["host"]) for f in rep["findings"] if f["code"].startswith("COMM_TRANSPORT"))


def case_transport_host_tcp(bin_dir, work):
    """The host path between 2 nodes x 2 ranks: Open MPI's components per node recorded (ob1 over TCP);
    --expect-net ib fails both nodes with COMM_TRANSPORT_FALLBACK; --allow-sockets passes and says so."""
    cluster("up", "2", "2")
    d = fresh(os.path.join(work, "transport_host"))
    args = ["--backend", "mpi", "--quick", "--report-dir", d, "--expect-net", "ib"]
    mpirun(4, os.path.join(bin_dir, "allreduce_bw"), args, expect_exit=(1,))
    rep = load(os.path.join(d, "allreduce_bw.json"))
    t = rep["transport"]
    check(t["multi_node"] and not t["ib_exercised"], f"transport {t}")
    check(
        transport_findings(rep) == [("COMM_TRANSPORT_FALLBACK", "node01"), ("COMM_TRANSPORT_FALLBACK", "node02")],
        f"transport findings {transport_findings(rep)}",
    )
    for n in t["nodes"]:
        check(
            n["ranks"] == 2 and n["mpi"]["pml"] == "ob1" and "tcp" in n["mpi"]["btl"].split(","),
            f"{n['host']}: {n['mpi']}",
        )
        check(n["between_nodes"]["networks"] == ["Socket"], f"{n['host']}: {n['between_nodes']}")
    mpirun(4, os.path.join(bin_dir, "allreduce_bw"), args + ["--allow-sockets"], expect_exit=(0,))
    rep = load(os.path.join(d, "allreduce_bw.json"))
    check(rep["transport"]["sockets_intended"] and not transport_findings(rep), f"{rep['transport']}")


def case_transport_double_fallback(bin_dir, work):
    """The NCCL path on the GPU test double across 3 nodes x 2 ranks, node03 alone on sockets (its daemons
    get GA_DOUBLE_NET=Socket): COMM_TRANSPORT_FALLBACK names node03 and no other node; node01 and node02 show
    InfiniBand with GPUDirect RDMA, from the debug lines each rank's NCCL (the double) wrote."""
    double = os.path.join(os.path.dirname(os.path.abspath(bin_dir)), "tests", "libga_gpu_double.so")
    if not os.path.exists(double):
        print(f"check_cluster: SKIP: no GPU test double at {double} (a build without the GPU paths)")
        sys.exit(77)
    cluster("up", "3", "2")
    cluster("setenv", "node03", "GA_DOUBLE_NET=Socket")
    d = fresh(os.path.join(work, "transport_double"))
    cmd = [
        CLUSTER,
        "run",
        "mpirun",
        "--hostfile",
        hostfile(),
        "-np",
        "6",
        "-x",
        "LD_PRELOAD=" + double,
        os.path.join(bin_dir, "allreduce_bw"),
        "-b",
        "8",
        "-e",
        "4K",
        "-f",
        "8",
        "-n",
        "3",
        "-w",
        "1",
        "-T",
        "20",
        "--expect-net",
        "ib-gdr",
        "--report-dir",
        d,
    ]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=STEP_TIMEOUT)
    print(f"  allreduce_bw on the double, node03 on sockets: exit {p.returncode}")
    check(p.returncode == 1, f"exit {p.returncode}, expected 1\n{p.stdout[-3000:]}")
    rep = load(os.path.join(d, "allreduce_bw.json"))
    check(rep["summary"]["backend"] == "nccl", f"backend {rep['summary']['backend']}")
    check(
        transport_findings(rep) == [("COMM_TRANSPORT_FALLBACK", "node03")],
        f"transport findings {transport_findings(rep)}; all: {finding_codes(rep)}",
    )
    nets = {n["host"]: (n["between_nodes"]["networks"], n["between_nodes"]["gdr"]) for n in rep["transport"]["nodes"]}
    check(
        nets == {"node01": (["IB"], "all"), "node02": (["IB"], "all"), "node03": (["Socket"], "n/a")},
        f"networks per node {nets}",
    )


def case_suite_fabric_floor(bin_dir, work):
    """gpuaccept run's standard profile on 2 nodes: node_health runs first (replaying a healthy HGX H100
    node's sysfs: 8 active NDR ports), and allreduce_bw then gets --min-busbw from those HCA rates times the
    H100 baseline's cited fabric efficiency, and --expect-net ib-gdr (the SKU requires GPUDirect RDMA).
    Between these namespaces Open MPI runs over TCP: COMM_TRANSPORT_FALLBACK names both nodes, and the
    summary shows the transport per node and says InfiniBand was not exercised."""
    src = os.path.normpath(os.path.join(HERE, "..", ".."))
    cluster("up", "2", "1")
    d = fresh(os.path.join(work, "fabric_floor"))
    nh = os.path.join(src, "ctest", "node_health", "data")
    baseline = os.path.join(src, "suite", "baselines", "h100-sxm.json")
    cmd = [
        CLUSTER,
        "run",
        os.path.join(bin_dir, "gpuaccept"),
        "run",
        "--hostfile",
        hostfile(),
        "--only",
        "node_health,allreduce_bw",
        "--baseline",
        baseline,
        "--preflight-timeout",
        "30",
        "--args",
        "node_health=--sysfs-root {} --kernel-log {} --sku hgx-h100-8".format(
            os.path.join(nh, "trees", "healthy"), os.path.join(nh, "logs", "healthy.log")
        ),
        "--args",
        "allreduce_bw=-b 1K -e 64K -n 3 -w 1 --rounds 1",
        "--report-dir",
        d,
    ]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=200)
    except subprocess.TimeoutExpired as ex:
        raise Fail(f"gpuaccept run did not finish within 200 s:\n{ex.output}")
    print(f"  gpuaccept run --hostfile, standard profile: exit {p.returncode}")
    check(p.returncode == 1, f"gpuaccept run exit {p.returncode}, expected 1\n{p.stdout[-3000:]}")
    run = load(os.path.join(d, "suite_run.json"))
    ar = next(st for st in run["steps"] if st["program"] == "allreduce_bw")["command"]
    h100 = load(baseline)
    per_node = 8 * 400.0  # the healthy tree: 8 active ports at 400 Gb/s
    bw = per_node / 8 * h100["fabric"]["busbw_per_line_rate"] * (1 - h100["tolerance_pct"] / 100)
    # then what a ring of 2 ranks on 2 nodes leaves of it at 64 KiB, NCCL's ring latency model (issue 40,
    # finding 3; suite/run/profile.c, suite_ring_allreduce_floor), rounded down to 0.1 GB/s
    ranks, nodes, size = 2, 2, 64 * 1024
    lat = 1.9 * (8.4e-6 + (2 * (ranks - 1) - 2 * (nodes - 1)) * 6e-6 + 2 * (nodes - 1) * 14e-6)
    t_bw = size * 2 * (ranks - 1) / ranks / (bw * 1e9)
    want = math.floor(bw * t_bw / (t_bw + lat) * 10) / 10
    got = float(ar[ar.index("--min-busbw") + 1]) if "--min-busbw" in ar else None
    check(
        got is not None and abs(got - want) <= 1e-9 * max(want, 1),
        f"allreduce_bw --min-busbw {got}, expected {want} (8 x 400 Gb/s x efficiency, less 10%, less the "
        f"ring's latency at 64 KiB)",
    )
    check(
        ar[ar.index("--expect-net") + 1] == "ib-gdr" if "--expect-net" in ar else False,
        f"allreduce_bw --expect-net ib-gdr: {ar}",
    )
    check("--min-node-busbw" not in ar, f"no --min-node-busbw for 1 rank per node (the figure is 8 GPUs'): {ar}")
    # issue 40, finding 10: node_health's compute ports (the tree's 8, the same names on both nodes) reach
    # allreduce_bw as --ib-hcas; on the host path no NCCL device is compared, and the report says so
    hcas = "=" + ",".join(f"mlx5_{i}:1" for i in range(8))
    check(ar[ar.index("--ib-hcas") + 1] == hcas if "--ib-hcas" in ar else False, f"allreduce_bw --ib-hcas {hcas}: {ar}")
    rep = load(os.path.join(d, "allreduce_bw.json"))
    check(
        rep["transport"].get("ib_hcas", {}).get("nodes_not_compared") == 2,
        f"transport.ib_hcas: {rep['transport'].get('ib_hcas')}",
    )
    check(
        transport_findings(rep) == [("COMM_TRANSPORT_FALLBACK", "node01"), ("COMM_TRANSPORT_FALLBACK", "node02")],
        f"transport findings {transport_findings(rep)}",
    )
    summary = load(os.path.join(d, "summary.json"))
    fabric = summary["fabric"]
    check(
        [(n["host"], n["between_nodes"]) for n in fabric["nodes"]] == [("node01", "Socket"), ("node02", "Socket")],
        f"summary.fabric per node: {fabric['nodes']}",
    )
    nc = summary["profile"]["not_covered"]
    check(
        any(l.startswith("InfiniBand not exercised: inter-node traffic over sockets on 2 node(s)") for l in nc),
        f"not covered: {nc}",
    )
    check("## Fabric" in open(os.path.join(d, "summary.md")).read(), "summary.md has the Fabric section")


# Issue 46: GPU i of a node reaches the network through NIC i. Here each node has 2 rails (cluster.sh up N 2 2) and
# rank_rail.sh puts the rank of local index K on railK; --pattern rails pairs GPU K of two nodes over rail K.
RANK_RAIL = os.path.join(HERE, "rank_rail.sh")
RAIL_SIZE = 256 * 1024
RAIL_ITERS = 4
RAILS_ARGS = ["--pattern", "rails", "-b", str(RAIL_SIZE), "-e", str(RAIL_SIZE), "-n", str(RAIL_ITERS), "-w", "1"]
# A rail pair's time here is the scheduling of 6 ranks on 2 shared cores as much as its link (a healthy pair
# measured 8 MB/s at 256 KiB on a 100 Mbit/s fabric under a load of 26): the shaped rail is 6x below the fabric,
# about 4x below its healthy peers. One remeasurement (not the default 2) keeps a faulty run near 10 s.
RAILS_ARGS += ["--remeasure", "1", "--tolerance", "50"]
RAIL_FABRIC = "100mbit"
RAIL_SLOW = "16mbit"
RAIL_RUNS = int(os.environ.get("GA_CLUSTER_RAIL_RUNS", "3"))
RAIL_HEALTHY_RUNS = int(os.environ.get("GA_CLUSTER_RAIL_HEALTHY_RUNS", "2"))


def iface_tx():
    """{(node, iface): bytes sent so far}, from every node's /proc/net/dev (cluster.sh counters)."""
    rows = [l.split() for l in cluster("counters").stdout.splitlines()]
    return {(r[0], r[1]): int(r[3]) for r in rows if len(r) == 4}


def check_rails_carry(before, after, nodes, rails):
    """Every rail of every node carried its rank's traffic, and eth0 (the daemons' channel) less than any rail:
    Open MPI went over the rail each rank was given, not over eth0. Each rail end is in 2 rounds of at least
    RAIL_ITERS allreduces of RAIL_SIZE bytes, of which a rank of a pair sends half or more."""
    sent = {k: after[k] - before.get(k, 0) for k in after}
    for nd in nodes:
        per_rail = [sent.get((nd, f"rail{k}"), 0) for k in range(rails)]
        check(
            min(per_rail) >= RAIL_ITERS * RAIL_SIZE, f"{nd}: bytes sent per rail {per_rail}, eth0 {sent[(nd, 'eth0')]}"
        )
        check(sent[(nd, "eth0")] < min(per_rail), f"{nd}: eth0 sent {sent[(nd, 'eth0')]}, rails {per_rail}")
    return sent


def run_rails(bin_dir, d, np, expect_exit):
    """--pattern rails, each rank on its rail; returns the set of (code, host, gpu) found and the slow rails."""
    mpirun(np, RANK_RAIL, [os.path.join(bin_dir, "allreduce_bw"), *RAILS_ARGS, "--report-dir", fresh(d)], expect_exit)
    rep = load(os.path.join(d, "allreduce_bw.json"))
    check(rep["rails"]["gpus_per_node"] == 2, f"rails section {rep['rails']}")
    found = sorted((f["code"], f["host"], f.get("gpu")) for f in rep["findings"])
    return found, sorted((s["host"], s["rail"]) for s in rep["rails"]["slow_rails"])


def case_rails_slow_rail(bin_dir, work):
    """3 nodes x 2 ranks, each rank on its own interface (rail). Fault-free runs name nothing; with rail 1 of
    node03 rate-limited, every run names node03 GPU 1 (COMM_SLOW_RAIL) and nothing else. Counts printed."""
    cluster("up", "3", "2", "2")
    cluster("fabric", RAIL_FABRIC)
    alarms = []
    for i in range(RAIL_HEALTHY_RUNS):
        before = iface_tx()
        found, slow = run_rails(bin_dir, os.path.join(work, f"rails_healthy_{i}"), 6, (0, 1))
        if i == 0:
            sent = check_rails_carry(before, iface_tx(), ["node01", "node02", "node03"], 2)
            print(f"  bytes sent per interface, fault-free run: {sorted(sent.items())}")
        if found or slow:
            alarms.append((i, found, slow))
    cluster("slow-rail", "node03", "1", RAIL_SLOW)
    right, wrong = 0, []
    want = [("COMM_SLOW_RAIL", "node03", 1)]
    for i in range(RAIL_RUNS):
        found, slow = run_rails(bin_dir, os.path.join(work, f"rails_slow_{i}"), 6, (1,))
        if found == want and slow == [("node03", 1)]:
            right += 1
        else:
            wrong.append((i, found, slow))
    print(
        f"  rail 1 of node03 at {RAIL_SLOW}: named alone in {right} of {RAIL_RUNS} runs, wrong {wrong}; "
        f"fault-free: {len(alarms)} of {RAIL_HEALTHY_RUNS} runs with a finding {alarms}"
    )
    check(right == RAIL_RUNS, f"node03 GPU 1 named alone in {right} of {RAIL_RUNS} runs: {wrong}")
    check(not alarms, f"findings without a fault: {alarms}")


CASES = {
    "budget_slow_node_4": lambda b, w: case_budget_slow_node(b, w, 4),
    "budget_slow_node_6": lambda b, w: case_budget_slow_node(b, w, 6),
    "env_audit": case_env_audit,
    "pairs_slow_node_4": lambda b, w: case_pairs_slow_node(b, w, 4),
    "pairs_slow_node_6": lambda b, w: case_pairs_slow_node(b, w, 6),
    "pairs_slow_link_4": lambda b, w: case_pairs_slow_link(b, w, 4),
    "pairs_slow_link_6": lambda b, w: case_pairs_slow_link(b, w, 6),
    "pairs_healthy": case_pairs_healthy,
    "ddp_smoke": case_ddp_smoke,
    "suite_hostfile": case_suite_hostfile,
    "suite_node_down": case_suite_node_down,
    "transport_host_tcp": case_transport_host_tcp,
    "transport_double_fallback": case_transport_double_fallback,
    "suite_fabric_floor": case_suite_fabric_floor,
    "rails_slow_rail": case_rails_slow_rail,
}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASES and sys.argv[1] != "down":
        print(f"usage: check_cluster.py {{{'|'.join(CASES)}|down}} BIN_DIR WORK_DIR", file=sys.stderr)
        return 2
    name, bin_dir, work = sys.argv[1:]
    if os.geteuid() != 0:
        print("check_cluster: SKIP: the namespace cluster needs root (network and UTS namespaces, tc)")
        return 77
    os.makedirs(work, exist_ok=True)
    lock = open(os.path.join("/run", os.environ.get("GA_CLUSTER_NAME", "gacl") + ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)

    def on_signal(sig, _frame):
        raise Fail(f"interrupted by signal {sig}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    t0 = time.time()
    try:
        if name != "down":
            CASES[name](bin_dir, work)
    except Fail as e:
        print(f"FAIL: cluster.{name}: {e}")
        return 1
    finally:
        cluster("down", check_rc=False)
    print(f"ok: cluster.{name} ({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
