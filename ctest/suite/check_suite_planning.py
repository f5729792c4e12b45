"""Issue 41: a plan checked before anything launches (the programs' arguments, the not-covered lines, the
allocation's time left, the preflight's retry and the shared report directory)."""
import os

from suite_helpers import run, WORK, check
from check_suite_plans import dry_commands, not_covered, after_prog


def t_check_args():
    """Item 6: a bad --args is refused by --dry-run (and run) with exit 2 and the program's own line, before any
    step starts; good ones pass. Observation 7: a not-covered line only when its cause is there."""
    d = os.path.join(WORK, "never")
    nogpu = {"CUDA_VISIBLE_DEVICES": ""}
    for args, want in (
        (["--args", "ddp_smoke=--stepz 3"], "ddp_smoke: unknown option '--stepz'"),
        (["--args", "mem_bw=--min-efficiency lots"], "mem_bw: --min-efficiency"),
        (["--quick", "--args", "allreduce_bw=stray"], "allreduce_bw: unexpected argument 'stray'"),
    ):
        for dry in (["--dry-run"], []):
            p = run(["run", "--report-dir", os.path.join(WORK, "r")] + dry + args, env=nogpu)
            check(
                p.returncode == 2
                and want in p.stderr
                and len(p.stderr.strip().splitlines()) == 1
                and "[SUITE] step" not in p.stdout,
                "%s %s: exit 2 with the program's line, no step started (%d, %r)"
                % (" ".join(dry), args[-1], p.returncode, p.stderr.strip()),
            )
    ok = run(["run", "--dry-run", "--report-dir", d, "--args", "ddp_smoke=--steps 3"], env=nogpu)
    check(ok.returncode == 0, "good --args: the dry run passes (%d, %s)" % (ok.returncode, ok.stderr.strip()))

    bdir = os.environ["GPUACCEPT_BASELINE_DIR"]
    h100 = os.path.join(bdir, "h100-sxm.json")
    p = run(["run", "--dry-run", "--np", "8", "--baseline", h100, "--report-dir", d], env=nogpu)
    ar = after_prog(dry_commands(p)["allreduce_bw"], "allreduce_bw")
    check(
        "--min-node-busbw" in ar and not any("no --min-node-busbw" in l for l in not_covered(p)),
        "standard, H100 baseline: --min-node-busbw in the command and no line saying it is absent (%s | %s)"
        % (ar, not_covered(p)),
    )
    p = run(["run", "--dry-run", "--np", "8", "--baseline", "none", "--report-dir", d], env=nogpu)
    check(
        "--min-node-busbw" not in after_prog(dry_commands(p)["allreduce_bw"], "allreduce_bw")
        and any("no --min-node-busbw" in l for l in not_covered(p)),
        "standard, no baseline: no --min-node-busbw, and said (%s)" % not_covered(p),
    )
    p = run(
        [
            "run",
            "--dry-run",
            "--np",
            "8",
            "--baseline",
            "none",
            "--report-dir",
            d,
            "--args",
            "allreduce_bw=--min-node-busbw 100",
        ],
        env=nogpu,
    )
    check(
        not any("no --min-node-busbw" in l for l in not_covered(p)),
        "--args gave --min-node-busbw: not said to be absent (%s)" % not_covered(p),
    )
    p = run(["run", "--dry-run", "--quick", "--expect-gpus", "2", "--report-dir", d], env=nogpu)
    check(
        "--expect-gpus" in after_prog(dry_commands(p)["node_health"], "node_health")
        and not any(l.startswith("no --expect-gpus") for l in not_covered(p)),
        'quick with --expect-gpus 2: the profile\'s "no --expect-gpus" is not said (%s)' % not_covered(p),
    )


# A stand-in mpirun for three nodes on one machine (127.0.0.x resolve and name no real machine). Alone
# (--host): 127.0.0.2 fails its first launch with the ORTE fragment seen under load and answers the second;
# 127.0.0.3 always fails as ssh to a dead sshd does, the ssh line first, Open MPI's banner after. With
# $FAKE_OTHER_DIR set, the remote side sees another directory at the report directory's path: every word
# under $FAKE_REPORT_DIR is redirected there, as a node with a local disk of its own would write.
FAKE_MPIRUN = r"""#!/usr/bin/env python3
import os, sys
args, host, out, i = sys.argv[1:], None, [], 0
while i < len(args):
    if args[i] in ("--host", "--hostfile", "-np"):
        host = args[i + 1] if args[i] == "--host" else host
        i += 2
        continue
    out.append(args[i])
    i += 1
real, other = os.environ["FAKE_REPORT_DIR"], os.environ.get("FAKE_OTHER_DIR")
base = os.environ.get("OMPI_MCA_orte_local_tmpdir_base")
if host and base:  # a node's preflight launch: its session base, and whether it was a private directory
    st = os.stat(base) if os.path.isdir(base) else None
    with open(os.path.join(os.environ["FAKE_STATE"], "session-%s-%d" % (host, os.getpid())), "w") as f:
        f.write("%s %d\n" % (base, bool(st and st.st_mode & 0o777 == 0o700 and st.st_uid == os.getuid()
                                    and os.environ.get("PRTE_MCA_prte_local_tmpdir_base") == base)))
if other:
    out = [other + w[len(real):] if w.startswith(real) else w for w in out]
marker = os.path.join(os.environ["FAKE_STATE"], "flaky-" + str(host))
if host == "127.0.0.2" and not os.path.exists(marker):
    open(marker, "w").close()
    sys.stderr.write("--------------------------------------------------------------------------\n"
                     "  --> Returned value Error (-1) instead of ORTE_SUCCESS\n"
                     "--------------------------------------------------------------------------\n")
    sys.exit(1)
if host == "127.0.0.3":
    sys.stderr.write("ssh: connect to host 127.0.0.3 port 22: Connection refused\n"
                     "--------------------------------------------------------------------------\n"
                     "ORTE was unable to reliably start one or more daemons.\n"
                     "This usually is caused by:\n\n"
                     "* compilation of the orted with dynamic libraries when static are required\n"
                     "  (e.g., on Cray). Please check your configure cmd line and consider using\n"
                     "  and network routing requirements).\n"
                     "--------------------------------------------------------------------------\n")
    sys.exit(255)
os.execvp(os.environ["FAKE_REAL_MPIRUN"], [os.environ["FAKE_REAL_MPIRUN"], "--oversubscribe", "-np",
          "1" if host else "2"] + out)
"""


def fake_cluster(name, other=False):
    """A work dir with the fake mpirun first on PATH; returns (env, report dir, hostfile)."""
    import shutil
    from suite_helpers import fresh, hostfile

    d = fresh(name)
    bin_dir, state = os.path.join(d, "bin"), os.path.join(d, "state")
    os.makedirs(bin_dir)
    os.makedirs(state)
    with open(os.path.join(bin_dir, "mpirun"), "w") as f:
        f.write(FAKE_MPIRUN)
    os.chmod(os.path.join(bin_dir, "mpirun"), 0o755)
    reports = os.path.join(d, "reports")
    env = {
        "PATH": bin_dir + os.pathsep + os.environ["PATH"],
        "FAKE_STATE": state,
        "FAKE_REPORT_DIR": reports,
        "FAKE_REAL_MPIRUN": shutil.which("mpirun"),
        "CUDA_VISIBLE_DEVICES": "",
    }
    if other:
        env["FAKE_OTHER_DIR"] = os.path.join(d, "elsewhere")
        os.makedirs(env["FAKE_OTHER_DIR"])
    hosts = hostfile(d, "127.0.0.1 slots=1\n127.0.0.2 slots=1\n127.0.0.3 slots=1\n")
    return env, reports, hosts


def check_private_sessions(state):
    """Item 7's cause: the preflight's mpiruns, started at once on one machine, raced on Open MPI's shared
    session tree. Each launch must have had a private base of its own, removed when it ended."""
    seen = [open(os.path.join(state, f)).read().split() for f in os.listdir(state) if f.startswith("session-")]
    print("session bases:", seen)
    bases = [b for b, _ in seen]
    check(len(seen) >= 5, "every preflight launch (3 nodes, 2 retried) had a session base (%d)" % len(seen))
    check(
        all(ok == "1" for _, ok in seen) and len(set(bases)) == len(bases),
        "each a private directory (0700, ours, both ORTE's and PRRTE's variable) of its own (%s)" % seen,
    )
    check(not any(os.path.exists(b) for b in bases), "and removed after the launch (%s)" % bases)


def t_preflight_retry():
    """Item 7: a node whose first launch failed is launched again and kept; a node excluded after two failed
    launches is explained by the launcher's own line (ssh's), not by the last line of Open MPI's banner.
    Item 3: a report directory rank 0's node does not share is refused before step 1, in one line."""
    from suite_helpers import load

    env, reports, hosts = fake_cluster("preflight-retry")
    p = run(
        [
            "run",
            "--quick",
            "--only",
            "env_audit",
            "--hostfile",
            hosts,
            "--report-dir",
            reports,
            "--preflight-timeout",
            "20",
            "--baseline",
            "none",
        ],
        env=env,
        timeout=100,
    )
    print(p.stdout[-2500:], p.stderr[-1500:])
    rec = load(os.path.join(reports, "suite_run.json"))
    nodes = {n["host"]: n for n in rec["preflight"]["nodes"]}
    check(
        nodes["127.0.0.2"]["status"] == "pass" and nodes["127.0.0.2"]["attempts"] == 2,
        "the node whose first launch failed passed on its second (%s)" % nodes["127.0.0.2"],
    )
    n3 = nodes["127.0.0.3"]
    check(
        n3["status"] == "excluded" and n3.get("code") == "PREFLIGHT_LAUNCH_FAILED" and n3.get("attempts") == 2,
        "the node that fails every launch is excluded after two (%s)" % n3,
    )
    check(
        "ssh: connect to host 127.0.0.3 port 22: Connection refused" in n3.get("why", "")
        and "routing requirements" not in n3.get("why", ""),
        "its exclusion quotes ssh's line, not the banner (%r)" % n3.get("why"),
    )
    check(p.returncode == 1, "exit 1: one node unfit (%d)" % p.returncode)
    check_private_sessions(env["FAKE_STATE"])

    env, reports, hosts = fake_cluster("not-shared", other=True)
    p = run(
        [
            "run",
            "--quick",
            "--only",
            "env_audit",
            "--hostfile",
            hosts,
            "--report-dir",
            reports,
            "--preflight-timeout",
            "20",
            "--baseline",
            "none",
        ],
        env=env,
        timeout=100,
    )
    print(p.stdout[-2500:], p.stderr[-1500:])
    err = p.stderr.strip().splitlines()
    check(
        p.returncode == 2
        and len(err) == 1
        and "is not shared with 127.0.0.1" in err[0]
        and "--report-dir" in err[0]
        and "[SUITE] step" not in p.stdout,
        "a report directory rank 0's node does not share: exit 2 before step 1, one line saying what to do "
        "(%d, %r)" % (p.returncode, err),
    )


def fake_slurm(name, left):
    """A Slurm job seen from inside, on one machine: squeue answers %L with left, srun records that it ran."""
    from suite_helpers import fresh

    d = fresh(name)
    bin_dir = os.path.join(d, "bin")
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, "squeue"), "w") as f:
        f.write('#!/bin/sh\n[ "$*" = "-h -j 4242 -o %%L" ] || exit 1\necho "%s"\n' % left)
    with open(os.path.join(bin_dir, "srun"), "w") as f:
        f.write("#!/bin/sh\ntouch %s/srun-ran\nexit 99\n" % d)
    for x in ("squeue", "srun"):
        os.chmod(os.path.join(bin_dir, x), 0o755)
    env = {
        "PATH": bin_dir + os.pathsep + os.environ["PATH"],
        "CUDA_VISIBLE_DEVICES": "",
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NUM_NODES": "8",
        "SLURM_NTASKS": "64",
        "SLURM_NTASKS_PER_NODE": "8",
        "SLURM_GPUS_ON_NODE": "8",
        "SLURM_JOB_NODELIST": "n[1-8]",
    }
    return d, env


def t_allocation():
    """Item 4: inside a Slurm job, --dry-run and run compare the plan's estimate with the job's time left
    (squeue %L, or SLURM_JOB_END_TIME): refused with one line (exit 3) when it does not fit, unless
    --fit-allocation, which leaves out the steps that do not fit and says so under "not covered"."""
    import time

    h100 = os.path.join(os.environ["GPUACCEPT_BASELINE_DIR"], "h100-sxm.json")
    # 128 s left: less than the 8-node plan (about 160 s with the check on the GPU, issue 44), more than the
    # preflight's bound and the merge's minute, so that the first steps fit
    d, env = fake_slurm("alloc-short", "2:08")
    base = ["run", "--baseline", h100, "--report-dir", os.path.join(d, "r")]
    for dry in (["--dry-run"], []):
        p = run(base + dry, env=env)
        err = p.stderr.strip().splitlines()
        check(
            p.returncode == 3
            and len(err) == 1
            and "Slurm job 4242 has 128 s left" in err[0]
            and "--fit-allocation" in err[0]
            and "[SUITE] step" not in p.stdout
            and not os.path.exists(os.path.join(d, "srun-ran")),
            "%s 128 s left: refused before anything launches, exit 3, one line (%d, %r)"
            % (" ".join(dry) or "run", p.returncode, err),
        )
    p = run(base + ["--dry-run", "--fit-allocation"], env=env)
    cut = [l for l in not_covered(p) if "no time left in the Slurm job" in l]
    cmds = dry_commands(p)
    check(
        p.returncode == 0
        and cut
        and all(l.startswith("not run: ") for l in cut)
        and all(l.split(":")[1].strip() not in cmds for l in cut)
        and "node_health" in cmds,
        "--fit-allocation: the steps that do not fit are left out and said (%d, %s, %s)"
        % (p.returncode, cut, sorted(cmds)),
    )
    d, env = fake_slurm("alloc-long", "1-00:00:00")
    p = run(["run", "--dry-run", "--baseline", h100, "--report-dir", d], env=env)
    check(
        p.returncode == 0 and "[SUITE] allocation: 86400 s left in Slurm job 4242" in p.stdout,
        "a day left: the plan fits, and it says so (%d, %s)" % (p.returncode, p.stderr.strip()),
    )
    env["SLURM_JOB_END_TIME"] = str(int(time.time()) + 100)
    p = run(["run", "--dry-run", "--baseline", h100, "--report-dir", d], env=env)
    check(
        p.returncode == 3 and "(SLURM_JOB_END_TIME)" in p.stderr,
        "SLURM_JOB_END_TIME 100 s ahead is read before squeue: refused (%d, %r)" % (p.returncode, p.stderr),
    )


def t_sweep_cut():
    """Observation 8: a sweep cut by time is a warning in the verdict (COMM_SWEEP_CUT), not only a line under
    "not covered"; the quick profile says at its start and end that it is a smoke test, not an acceptance."""
    from suite_helpers import fresh, load

    d = fresh("sweep-cut")
    p = run(
        [
            "run",
            "--np",
            "2",
            "--only",
            "allreduce_bw",
            "--step-timeout",
            "10",
            "--baseline",
            "none",
            "--args",
            "allreduce_bw=-b 16M -e 512M",
            "--report-dir",
            d,
        ],
        env={"CUDA_VISIBLE_DEVICES": ""},
        timeout=100,
    )
    print(p.stdout[-2000:], p.stderr[-1000:])
    s = load(os.path.join(d, "summary.json"))
    r = load(os.path.join(d, "allreduce_bw.json"))
    rcodes = [(f["code"], f["severity"]) for f in r["findings"]]
    check(
        ("COMM_SWEEP_CUT", "warn") in rcodes and s["verdict"].get("warnings", 0) >= 1 and p.returncode == 0,
        "the sweep cut by its limit is a warning in the report and the verdict (%s; %s; exit %d)"
        % (rcodes, s["verdict"], p.returncode),
    )
    q = run(
        ["run", "--quick", "--dry-run", "--report-dir", os.path.join(WORK, "never")], env={"CUDA_VISIBLE_DEVICES": ""}
    )
    check(
        "[SUITE] profile quick (built-in): a smoke test, not an acceptance" in q.stdout,
        "quick: the banner says smoke test, not acceptance (%s)" % [l for l in q.stdout.splitlines() if "profile" in l],
    )


def t_cpu_cluster():
    """Issue 41, items 8/9: --expect-gpus 0 is a CPU cluster (host paths, GPU-only words left out, said), a dry
    run plans a hostfile whose names do not resolve here (a run refuses it), and a launcher without a GPU says
    loudly that the SKU floors are lost."""
    d = os.path.join(WORK, "cpu_cluster")
    os.makedirs(d, exist_ok=True)
    nogpu = {"CUDA_VISIBLE_DEVICES": ""}
    ips = os.path.join(d, "ips")
    with open(ips, "w") as f:
        f.write("10.0.0.1 slots=2\n10.0.0.2 slots=2\n")
    p = run(
        ["run", "--dry-run", "--hostfile", ips, "--expect-gpus", "0", "--report-dir", os.path.join(d, "r")], env=nogpu
    )
    cmds = dry_commands(p)
    gemm = " ".join(after_prog(cmds.get("gemm_flops", ["gemm_flops"]), "gemm_flops"))
    nh = " ".join(after_prog(cmds.get("node_health", ["node_health"]), "node_health"))
    check(p.returncode == 0, "--expect-gpus 0 is taken (%d, %s)" % (p.returncode, p.stderr.strip()))
    check(
        "gemm_flops" in cmds and "bf16" not in gemm and "--expect-gpus 0" in nh,
        "a CPU cluster: gemm_flops without the GPU's dtype (%s), node_health expects no GPU (%s)" % (gemm, nh),
    )
    check(any("--expect-gpus 0" in l for l in not_covered(p)), "the CPU cluster is said (%s)" % not_covered(p))
    check(
        "no GPU on this machine to read the GPU model" not in p.stdout, "no warning of lost GPU floors on a CPU cluster"
    )

    p = run(["run", "--dry-run", "--hostfile", ips, "--report-dir", os.path.join(d, "r")], env=nogpu)
    check(
        p.returncode == 0 and "[SUITE] warning: no GPU on this machine to read the GPU model" in p.stdout,
        "a GPU cluster planned from a machine without a GPU: the lost SKU floors are said (%d)" % p.returncode,
    )

    names = os.path.join(d, "names")
    with open(names, "w") as f:
        f.write("gpu-node-1.invalid slots=8\ngpu-node-2.invalid slots=8\n")
    p = run(["run", "--dry-run", "--hostfile", names, "--report-dir", os.path.join(d, "r")], env=nogpu)
    check(
        p.returncode == 0 and "planned anyway" in p.stdout and dry_commands(p),
        "a dry run plans names that do not resolve here (%d, %s)" % (p.returncode, p.stderr.strip()),
    )
    p = run(["run", "--hostfile", names, "--report-dir", os.path.join(d, "r2")], env=nogpu)
    check(
        p.returncode == 3 and "does not resolve" in p.stderr,
        "a run refuses them (%d, %s)" % (p.returncode, p.stderr.strip()),
    )
