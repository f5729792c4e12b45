#!/usr/bin/env python3
"""The program registry (suite/registry/programs.json, compiled into the front-end's table) is the one list of the
suite's programs: `gpuaccept run --list-programs` prints what the data file says, in both forms alike, and
everything that names the programs follows it: the run's help and steps, the MPIJob and DaemonSet renderers
(which read the data file, having no build), the built-in profiles, the built programs, their docs pages and
the README's table.

    check_registry.py GPUACCEPT SOURCE_DIR WORKDIR"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, finish  # noqa: E402

GA, SRC, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)


def ga(*args):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SLURM_JOB_ID", "OMPI_MCA_orte_default_hostfile", "KUBERNETES_SERVICE_HOST")
    }
    return subprocess.run([GA] + list(args), capture_output=True, text=True, timeout=60, env=env)


p = ga("run", "--list-programs")
check(p.returncode == 0 and p.stderr == "", "--list-programs: exit 0, nothing on stderr")
rows = [line.split("\t") for line in p.stdout.splitlines()]
check(len(rows) >= 1 and all(len(r) == 6 for r in rows), "one line per program, 6 tab-separated columns")
names = [r[1] for r in rows]
check([r[0] for r in rows] == [str(i + 1) for i in range(len(rows))], "column 1 is the order, from 1")
check(
    len(set(names)) == len(names) and all(re.fullmatch(r"[a-z0-9_]+", n) for n in names),
    "names are distinct identifiers: %s" % names,
)
p = ga("run", "--list-programs=json")
table = json.loads(p.stdout) if p.returncode == 0 else []
check(
    [(t["order"], t["name"], ",".join(t["fault_prefixes"]), t["doc"], t["headline"], t["purpose"]) for t in table]
    == [(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows],
    "--list-programs=json says what the TSV says",
)
p = ga("run", "--list-programs=yaml")
check(p.returncode == 2 and "--list-programs" in p.stderr, "an unknown list format: usage error")

for r in rows:
    name, prefixes, doc = r[1], r[2].split(","), r[3]
    check(os.access(os.path.join(os.path.dirname(GA), name), os.X_OK), "%s: built beside gpuaccept" % name)
    check(os.path.isfile(os.path.join(SRC, doc)), "%s: its page %s exists" % (name, doc))
    check(all(re.fullmatch(r"[A-Z]+", x) for x in prefixes), "%s: fault prefixes %s" % (name, prefixes))
    check(r[4].strip() != "" and r[5].strip() != "", "%s: headline and purpose are filled in" % name)
readme = open(os.path.join(SRC, "README.md")).read()
listed = re.findall(r"^\| `([a-z0-9_]+)` \|", readme, re.M)
check([n for n in listed if n != "gpuaccept"] == names, "README's program table, in run order: %s" % listed)

help_text = ga("run", "--help").stdout
check("Steps: %s." % " ".join(names) in help_text, "run --help names the steps in order")
check("Runs %s in turn" % ", ".join(names) in help_text, "run --help's first line names them too")
p = ga("run", "--only", "nope")
check(p.returncode == 2 and "(steps: %s)" % " ".join(names) in p.stderr, "an unknown step lists the steps")
p = ga("run", "--dry-run", "--quick", "--report-dir", os.path.join(WORK, "dry"))
started = re.findall(r"^\[SUITE\] step (\d+)/(\d+) (\S+): starting", p.stdout, re.M)
check(
    p.returncode == 0 and started == [(str(i + 1), str(len(names)), n) for i, n in enumerate(names)],
    "run --dry-run: every step in order, k/%d (%s)" % (len(names), started),
)

# The data file is what the binary lists: name, fault prefixes, headline and purpose, in order.
registry = json.load(open(os.path.join(SRC, "suite", "registry", "programs.json")))
check(
    [(r["name"], ",".join(r["fault_prefixes"]), r["headline"], r["purpose"]) for r in registry["programs"]]
    == [(r[1], r[2], r[4], r[5]) for r in rows],
    "--list-programs is suite/registry/programs.json's table",
)
# Each built-in profile is its data file with, from every program's row, its arguments as the step and its
# not_covered lines after the profile's own, in the registry's order.
for name in registry["builtin_profiles"]:
    own = json.load(open(os.path.join(SRC, "suite", "registry", "profiles", name + ".json")))
    check("steps" not in own, "profiles/%s.json leaves the steps to the programs' rows" % name)
    p = ga("run", "--profile", name, "--dump-profile")
    dumped = json.loads(p.stdout) if p.returncode == 0 else {}
    want = {k: v for k, v in own.items() if k != "not_covered"}
    want["steps"] = {r["name"]: r["profiles"][name]["args"] for r in registry["programs"]}
    want["not_covered"] = own.get("not_covered", []) + [
        line for r in registry["programs"] for line in r["profiles"][name].get("not_covered", [])
    ]
    check(
        dumped == want and list(dumped["steps"]) == names and list(dumped) == list(want),
        "--profile %s --dump-profile: profiles/%s.json with each program's row (%s)" % (name, name, dumped),
    )
    path = os.path.join(WORK, "dumped-%s.json" % name)
    with open(path, "w") as f:
        f.write(p.stdout)
    p2 = ga("run", "--profile", path, "--dump-profile")
    check(
        p2.returncode == 0 and json.loads(p2.stdout) == dumped,
        "the dump of %s is a profile file --profile FILE reads back unchanged" % name,
    )

# The renderers run where nothing is built: they read the data file, and must read the same list.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "deploy", "mpijob"))
import render  # noqa: E402


check(render.PROGRAMS == names, "render.py reads the registry's list: %s" % render.PROGRAMS)
# The MPIJob launcher runs `gpuaccept run`, whose order is the registry's: the suite with no --only, each
# program alone with --only NAME, and every name the renderer accepts is one gpuaccept knows.
suite = render.render(["--nodes", "1", "--gpus-per-node", "1"])
check(
    "/bin/gpuaccept run --report-dir /reports --expect-gpus 1 ||" in suite and "--only" not in suite,
    "the rendered suite MPIJob runs gpuaccept run, every step in the registry's order",
)
check(
    all(
        "/bin/gpuaccept run --report-dir /reports --only %s --expect-gpus 1 ||" % n
        in render.render(["--program", n, "--nodes", "1", "--gpus-per-node", "1"])
        for n in names
    ),
    "a rendered one-program MPIJob runs gpuaccept run --only that program, for each of them",
)

sys.path.insert(0, os.path.join(SRC, "deploy", "daemonset"))
del sys.modules["render"]
import render as daemonset  # noqa: E402

per_node = [r["name"] for r in registry["programs"] if r["per_node"]]
check(
    daemonset.CHECKS == per_node and set(per_node) < set(names),
    "the DaemonSet runs the registry's per-node programs, in order: %s" % daemonset.CHECKS,
)
finish()
