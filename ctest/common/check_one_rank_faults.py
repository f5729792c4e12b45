#!/usr/bin/env python3
"""A failure on one rank only, made real: that rank's address space is limited (ulimit -v, RLIMIT_AS) or it
runs in a directory where the data set is not visible. Checks that the job ends with one agreed exit code and
one line naming the failing host and rank, and that `gpuaccept run` blames that node.

usage: check_one_rank_faults.py oom|exit_notice|run BIN_DIR WORKDIR -- MPIEXEC...
Exit 0 pass, 1 fail."""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, finish  # noqa: E402

MODE, BIN, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
MPIEXEC = sys.argv[sys.argv.index("--") + 1 :]
HOST = socket.gethostname()

# Ranks named in GA_TEST_AS_RANKS ("all" for every rank) get GA_TEST_AS_KB of address space; ranks named in
# GA_TEST_AWAY_RANKS start in / instead of the working directory.
WRAP = """#!/bin/sh
case " ${GA_TEST_AS_RANKS:-} " in *" ${OMPI_COMM_WORLD_RANK} "*|" all ") ulimit -v "$GA_TEST_AS_KB" ;; esac
case " ${GA_TEST_AWAY_RANKS:-} " in *" ${OMPI_COMM_WORLD_RANK} "*) cd / ;; esac
exec "$@"
"""
# Enough for MPI and the program to start, far less than the buffers asked for below.
AS_KB = "700000"


def fresh(name):
    path = os.path.join(WORK, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def wrapper():
    path = os.path.join(WORK, "rank_wrap.sh")
    with open(path, "w") as f:
        f.write(WRAP)
    os.chmod(path, 0o755)
    return path


def idx_data(parent):
    """A small IDX data set (MNIST's format) under parent/data, 64 images of 4x4 in 2 classes."""
    d = os.path.join(parent, "data")
    os.makedirs(d, exist_ok=True)
    n = 64
    with open(os.path.join(d, "train-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 4, 4) + bytes((i * 7 + j) % 256 for i in range(n) for j in range(16)))
    with open(os.path.join(d, "train-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(i % 2 for i in range(n)))


def mpirun(np, env, argv, cwd=None):
    e = dict(os.environ, **env)
    p = subprocess.run(
        MPIEXEC
        + ["-np", str(np), "-x", "GA_TEST_AS_RANKS", "-x", "GA_TEST_AS_KB", "-x", "GA_TEST_AWAY_RANKS", wrapper()]
        + argv,
        env=e,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    print(p.stdout[-2000:], p.stderr[-3000:])
    return p


def lines(text, tag):
    return [l for l in text.splitlines() if l.startswith(tag)]


def t_oom():
    # Each program's own allocation fails on rank 1 only (ddp_smoke's data on every rank: the data set is
    # generated before anything is measured, so a size only one rank cannot hold would cost the others long).
    cases = [
        ("mem_bw", "1", ["-s", "256M", "--quick"]),
        ("gemm_flops", "1", ["-m", "16384", "-n", "16384", "-k", "1", "-d", "fp32", "--iters", "1", "-w", "1"]),
        ("ddp_smoke", "all", ["--samples", "1000", "--input-dim", "1000000"]),
    ]
    for prog, ranks, args in cases:
        d = fresh("oom-" + prog)
        p = mpirun(
            2, {"GA_TEST_AS_RANKS": ranks, "GA_TEST_AS_KB": AS_KB}, [os.path.join(BIN, prog), "--report-dir", d] + args
        )
        check(p.returncode == 5, "%s: out of memory is exit 5 (%d)" % (prog, p.returncode))
        fatal = lines(p.stderr, "[FATAL] ")
        rank = 1 if ranks == "1" else 0
        check(
            len(fatal) == 1
            and re.match(r"\[FATAL\] %s rank %d \(.*out of memory" % (re.escape(HOST), rank), fatal[0]) is not None,
            "%s: one line names host %s and rank %d, and says out of memory (%s)" % (prog, HOST, rank, fatal),
        )
        check(not os.path.exists(os.path.join(d, prog + ".json")), "%s: no report claims a measurement" % prog)


def t_exit_notice():
    # The data set is visible to rank 0 and not to rank 1: rank 1 ends with exit 3, rank 0 with 0; the job's
    # code is 3, and only rank 1 says so, with its host. mpirun's own notice names no host.
    d = fresh("exit-notice")
    idx_data(d)
    p = mpirun(
        2,
        {"GA_TEST_AWAY_RANKS": "1"},
        [os.path.join(BIN, "ddp_smoke"), "--report-dir", os.path.join(d, "reports"), "--data", "idx:data", "--quick"],
        cwd=d,
    )
    check(p.returncode == 3, "the job's exit code is the failing rank's, 3 (%d)" % p.returncode)
    notice = lines(p.stderr, "[EXIT] ")
    check(
        notice == ["[EXIT] %s rank 1 code 3 (environment_error)" % HOST],
        "one [EXIT] line, of rank 1, names its host (%s)" % notice,
    )
    check(not lines(p.stderr, "[FATAL] "), "no fatal line: the ranks ended normally")


def t_run():
    # Through `gpuaccept run`: programs stand in for the registry's by wrapping the real ones. mem_bw runs out
    # of memory on rank 1; ddp_smoke's data is missing on rank 1.
    fake = fresh("fakebin")
    data = fresh("data-home")
    idx_data(data)
    wrap = wrapper()
    scripts = {
        "mem_bw": '#!/bin/sh\nGA_TEST_AS_RANKS=1 GA_TEST_AS_KB=%s exec %s %s "$@" -s 256M\n'
        % (AS_KB, wrap, os.path.join(BIN, "mem_bw")),
        "ddp_smoke": '#!/bin/sh\ncd %s || exit 9\nGA_TEST_AWAY_RANKS=1 exec %s %s "$@" --data idx:data\n'
        % (data, wrap, os.path.join(BIN, "ddp_smoke")),
    }
    for name, text in scripts.items():
        path = os.path.join(fake, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    d = fresh("run")
    env = dict(os.environ, GPUACCEPT_BIN_DIR=fake)
    p = subprocess.run(
        [
            os.path.join(BIN, "gpuaccept"),
            "run",
            "--quick",
            "--report-dir",
            d,
            "--np",
            "2",
            "--baseline",
            "none",
            "--only",
            "mem_bw,ddp_smoke",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(p.stdout[-4000:], p.stderr[-2000:])
    with open(os.path.join(d, "suite_run.json")) as f:
        rec = {s["program"]: s for s in json.load(f)["steps"]}
    mb, ddp = rec.get("mem_bw", {}), rec.get("ddp_smoke", {})
    check(
        mb.get("status") == "internal_error" and mb.get("exit_code") == 5,
        "mem_bw out of memory is internal_error, exit 5 (%s, %s)" % (mb.get("status"), mb.get("exit_code")),
    )
    check(
        (mb.get("node") or {}).get("host") == HOST
        and mb["node"].get("rank") == 1
        and mb["node"].get("source") == "fatal",
        "mem_bw is blamed on rank 1 of %s (%s)" % (HOST, mb.get("node")),
    )
    check(
        ddp.get("status") == "env_error", "ddp_smoke without its data on rank 1 is env_error (%s)" % ddp.get("status")
    )
    check(
        (ddp.get("node") or {}).get("host") == HOST
        and ddp["node"].get("rank") == 1
        and ddp["node"].get("source") == "exit",
        "ddp_smoke is blamed on rank 1 of %s through its [EXIT] line (%s)" % (HOST, ddp.get("node")),
    )
    check(p.returncode == 5, "the run's verdict is exit 5 (%d)" % p.returncode)


{"oom": t_oom, "exit_notice": t_exit_notice, "run": t_run}[MODE]()
finish()
