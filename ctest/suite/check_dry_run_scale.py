#!/usr/bin/env python3
"""Issue 44, item 2: pairs at scale in `gpuaccept run --dry-run` (standard profile, H100 baseline, 8 GPUs per
node). At 512 nodes every round of pairs fits the step's limit and every pair is tested, with the model's
inputs printed (the device check, a round's cost, the pairs' share); at 2,048 nodes the rounds that fit run,
the ring neighbours' two rounds among them (the pairs the world's ring used: every one of them tested), and
the coverage (pairs, rounds, ring neighbours and other pairs, partners per node) and the rounds left out are
printed.

    check_dry_run_scale.py GPUACCEPT SOURCE_DIR WORKDIR"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, finish  # noqa: E402

GA, SRC, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
STEP_LIMIT = 1800  # the standard profile's step limit (docs/suite.md)
PAIRS = re.compile(
    r"allreduce_bw estimate: pairs: (\d+) of (\d+) pairs tested \((\d+) of (\d+) rounds .*; a round [\d.]+ s, "
    r"of which [\d.]+ s its communicators' init; the pairs' share \d+ s\); ring neighbours: (\d+) of (\d+) "
    r"tested; other pairs: (\d+) of (\d+); a node has (\d+) of its (\d+) partners"
)


def dry_run(nodes):
    """The dry run's stdout for nodes x 8 GPUs (a hostfile of IP addresses: no name to resolve)."""
    hosts = os.path.join(WORK, "hosts%d" % nodes)
    with open(hosts, "w") as f:
        for i in range(nodes):
            f.write("10.%d.%d.1 slots=8\n" % (i // 250, i % 250))
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_JOB_ID", "KUBERNETES_SERVICE_HOST")}
    baseline = os.path.join(SRC, "suite", "baselines", "h100-sxm.json")
    args = ["run", "--dry-run", "--profile", "standard", "--hostfile", hosts, "--baseline", baseline]
    args += ["--report-dir", os.path.join(WORK, "r%d" % nodes)]
    p = subprocess.run([GA] + args, capture_output=True, text=True, timeout=60, env=env)
    check(p.returncode == 0, "%d nodes: the dry run exits 0 (%d: %s)" % (nodes, p.returncode, p.stderr[-300:]))
    return p.stdout


def pairs_of(out, nodes):
    m = PAIRS.search(out)
    check(m is not None, "%d nodes: the pairs' coverage and the model's inputs are printed" % nodes)
    return [int(x) for x in m.groups()] if m else [0] * 10


out = dry_run(512)
tested, total, run, asked, ring, ring_of, other, other_of, partners, of = pairs_of(out, 512)
check(
    total == 512 * 511 // 2 and tested == total and asked == 511 and run == asked and partners == of == 511,
    "512 nodes: every pair in every one of the 511 rounds (%d of %d, %d of %d rounds)" % (tested, total, run, asked),
)
check(
    ring == ring_of == 512 and other == other_of == total - 512,
    "512 nodes: every round fits, no ring-neighbour round is added (%d of %d, %d of %d)"
    % (ring, ring_of, other, other_of),
)
check("cut: pairs" not in out, "512 nodes: no round of pairs is cut")
fault_free = re.search(r"allreduce_bw estimate: (\d+) s fault-free", out)
check(
    fault_free is not None and int(fault_free.group(1)) < STEP_LIMIT,
    "512 nodes: allreduce_bw fits the step's limit (%s)" % (fault_free.group(0) if fault_free else out[-300:]),
)
check("check on the GPU:" in out, "the model says how the device check is costed (an estimate)")

out = dry_run(2048)
tested, total, run, asked, ring, ring_of, other, other_of, partners, of = pairs_of(out, 2048)
# not every round fits: the ring neighbours' two rounds join the 2,047 of the circle, and the circle rounds
# after them leave out the (at most two) ring neighbours each held
check(
    total == 2048 * 2047 // 2
    and asked == 2047 + 2
    and 3 <= run < asked
    and run * 1024 - 2 * run <= tested <= run * 1024,
    "2048 nodes: the rounds that fit run (%d of %d rounds, %d pairs)" % (run, asked, tested),
)
check(
    ring == ring_of == 2048 and other == tested - ring and other_of == total - 2048,
    "2048 nodes: every ring neighbour tested (%d of %d; other pairs %d of %d)" % (ring, ring_of, other, other_of),
)
check(
    re.search(r"cut: pairs: rounds %d-2049 of 2049 not run: out of time" % (run + 1), out) is not None,
    "2048 nodes: the rounds left out are said",
)
finish()
