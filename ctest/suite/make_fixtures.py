#!/usr/bin/env python3
"""Builds the suite's merge fixtures from real program runs, so that they cannot drift from what the programs
write. Usage: make_fixtures.py BIN_DIR CASES_DIR OUT_DIR

1. Runs every program of the registry (`gpuaccept run --list-programs`) once on the host path, 8 ranks under
   mpirun, into OUT_DIR/base, with the options of its ctest/<program>/fixture_run.json (a registered program
   without one is an error). Their own tolerances are opened wide so that noise on shared cores never makes a finding:
   every fault in a case is declared, never a product of chance.
2. Lays the 8 ranks out as 4 nodes of 2 (gpu-node-01 .. gpu-node-04): every "host"/"node_index" of a rank is
   rewritten, and each report's "nodes" is regrouped (the common report schema, docs/report-schema.md).
3. For every CASES_DIR/<case>/case.json, applies its declared edits to copies of the reports and writes
   OUT_DIR/<case>/reports/ (+ suite_run.json when declared), expected.json and baseline.json when present.
   Its "reports" names the programs whose reports it holds, or is "all": every registered program's, so that a
   whole cluster's case follows the registry (suite/registry/programs.json) without an edit.

Edits are strict: a path, metric or rank that the real report does not have stops the generator with an
error, so a field renamed in a program fails the suite tests instead of leaving a stale imitation behind.
  {"op": "set", "program": P, "path": "a/b/0/c", "value": V}     the key must exist already
  {"op": "add", "program": P, "path": "a/b/c", "value": V}        a key the run leaves out (an option's
                                                                 section); its parent must exist, it must not
  {"op": "scale_metric", "program": P, "name": N, "rank": R|null, "factor": F[, "flagged": true]}
                                                                 exactly one metric matches
  {"op": "add_finding", "program": P, "finding": {...}}          placed at its rank's node; the verdict follows
  {"op": "level_metric", "program": P, "name": N}                every rank's value becomes their median
level_metric takes out the spread between oversubscribed ranks on shared cores: a per-rank baseline or
comparison then sees the declared faults and nothing else.
"""
import copy
import json
import os
import shutil
import subprocess
import sys

NODES, RANKS_PER_NODE = 4, 2
# Every base report is of one run, as in a real suite run; a case's suite_run.json names this run.
RUN_ID = "fixture-base"
NP = NODES * RANKS_PER_NODE
# Each program's options for the base run are in its own test folder, ctest/<program>/fixture_run.json: short,
# and tolerances no noise can cross (a rank flagged below the median or peak would be a finding nobody declared).
CTEST_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


class FixtureError(Exception):
    pass


def host_of(node):
    return "gpu-node-%02d" % (node + 1)


def registered_programs(bin_dir):
    p = subprocess.run(
        [os.path.join(bin_dir, "gpuaccept"), "run", "--list-programs"], capture_output=True, text=True, timeout=30
    )
    if p.returncode != 0:
        raise FixtureError("gpuaccept run --list-programs exited %d: %s" % (p.returncode, p.stderr.strip()))
    return [line.split("\t")[1] for line in p.stdout.splitlines() if line and not line.startswith("#")]


def base_run_args(program):
    """The program's base-run options, from ctest/<program>/fixture_run.json ({here}: that folder)."""
    folder = os.path.join(CTEST_DIR, program)
    path = os.path.join(folder, "fixture_run.json")
    try:
        with open(path) as f:
            args = json.load(f)["args"]
    except (OSError, ValueError, KeyError) as e:
        raise FixtureError('%s: no base-run options for %s (a JSON object with "args"): %s' % (path, program, e))
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise FixtureError('%s: "args" must be a list of strings' % path)
    return [a.replace("{here}", folder) for a in args]


def run_base(bin_dir, out):
    """Runs every registered program into out; returns their names, in run order."""
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    programs = registered_programs(bin_dir)
    if not programs:
        raise FixtureError("gpuaccept run --list-programs lists no program")
    for program in programs:
        args = base_run_args(program)
        cmd = [
            "mpirun",
            "-np",
            str(NP),
            "--oversubscribe",
            os.path.join(bin_dir, program),
            "--report-dir",
            out,
            "--run-id",
            RUN_ID,
        ]
        p = subprocess.run(cmd + args, capture_output=True, text=True, env=env, timeout=240)
        if p.returncode != 0 or not os.path.exists(os.path.join(out, program + ".json")):
            raise FixtureError(
                "%s exited %d on the host path:\n%s%s" % (program, p.returncode, p.stdout[-2000:], p.stderr[-2000:])
            )
    return programs


def relabel(value):
    """Every object with an integer rank names that rank's node."""
    if isinstance(value, dict):
        rank = value.get("rank")
        if isinstance(rank, int) and not isinstance(rank, bool) and 0 <= rank < NP and "host" in value:
            value["host"] = host_of(rank // RANKS_PER_NODE)
            if "node_index" in value:
                value["node_index"] = rank // RANKS_PER_NODE
        elif rank is None and isinstance(value.get("node_index"), int) and "host" in value:
            # about a node, not a rank (node_health's node checks): the real run had one node, node 0
            value["host"] = host_of(value["node_index"])
        for v in value.values():
            relabel(v)
    elif isinstance(value, list):
        for v in value:
            relabel(v)


def lay_out(report):
    if report.get("world_size") != NP or len(report.get("nodes", [])) != 1:
        raise FixtureError(
            "%s: expected %d ranks on one node, got world_size %r and %d nodes"
            % (report.get("program"), NP, report.get("world_size"), len(report.get("nodes", [])))
        )
    one = report["nodes"][0]
    nodes = []
    for n in range(NODES):
        node = copy.deepcopy({k: v for k, v in one.items() if k != "ranks"})
        node.update(host=host_of(n), node_index=n, local_ranks=RANKS_PER_NODE, ranks=[])
        nodes.append(node)
    for r in one["ranks"]:
        r["local_rank"] = r["rank"] % RANKS_PER_NODE
        nodes[r["rank"] // RANKS_PER_NODE]["ranks"].append(r)
    report["nodes"] = nodes
    report["node_count"] = NODES
    # the transport per node (allreduce_bw, ddp_smoke): the one node's entry becomes each node's
    transport = report.get("transport")
    if transport is not None:
        one_t = transport["nodes"][0]
        transport["nodes"] = [
            dict(copy.deepcopy(one_t), host=host_of(n), node=n, ranks=RANKS_PER_NODE) for n in range(NODES)
        ]
    relabel(report)


def walk(report, path):
    """The container holding the last part of path, and that part (a key or an index); both must exist."""
    parts = path.split("/")
    cur = report
    for i, part in enumerate(parts):
        key = int(part) if isinstance(cur, list) else part
        try:
            nxt = cur[key]
        except (KeyError, IndexError, TypeError):
            raise FixtureError("%s: no '%s' in the real report" % (report.get("program"), "/".join(parts[: i + 1])))
        if i == len(parts) - 1:
            return cur, key
        cur = nxt


def refresh_verdict(report):
    fails = [f["message"] for f in report["findings"] if f["severity"] == "fail"]
    v = report["verdict"]
    for key in ("result", "exit_code", "exit_name", "reasons", "warnings"):
        if key not in v:
            raise FixtureError("%s: the verdict has no '%s'" % (report["program"], key))
    v.update(
        result="fail" if fails else "pass",
        exit_code=1 if fails else 0,
        exit_name="check_failed" if fails else "pass",
        reasons=fails,
        warnings=sum(1 for f in report["findings"] if f["severity"] == "warn"),
    )


def apply_edit(reports, e):
    program = e.get("program")
    if program not in reports:
        raise FixtureError("edit on %r: no such report in this case" % program)
    r = reports[program]
    op = e.get("op")
    if op == "set":
        parent, key = walk(r, e["path"])
        parent[key] = e["value"]
    elif op == "add":
        head, _, key = e["path"].rpartition("/")
        parent = r
        if head:
            holder, last = walk(r, head)
            parent = holder[last]
        if not isinstance(parent, dict) or key in parent:
            raise FixtureError(
                "%s: '%s' cannot be added (no object there, or it is there already)" % (program, e["path"])
            )
        parent[key] = e["value"]
    elif op == "scale_metric":
        hits = [m for m in r["metrics"] if m["name"] == e["name"] and m.get("rank") == e["rank"]]
        if len(hits) != 1:
            raise FixtureError("%s: %d metrics '%s' at rank %r (want one)" % (program, len(hits), e["name"], e["rank"]))
        hits[0]["value"] *= e["factor"]
        if e.get("flagged"):
            hits[0]["flagged"] = True
    elif op == "level_metric":
        hits = [m for m in r["metrics"] if m["name"] == e["name"] and isinstance(m.get("rank"), int)]
        if len(hits) < 2:
            raise FixtureError("%s: no per-rank metric '%s' to level" % (program, e["name"]))
        values = sorted(m["value"] for m in hits)
        mid = len(values) // 2
        median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
        for m in hits:
            m["value"] = median
    elif op == "add_finding":
        f = copy.deepcopy(e["finding"])
        for key in ("severity", "code", "host", "node_index", "rank", "gpu", "message"):
            if key not in f:
                raise FixtureError("%s: a declared finding needs '%s'" % (program, key))
        relabel(f)
        r["findings"].append(f)
        refresh_verdict(r)
    else:
        raise FixtureError("unknown edit op %r" % op)


def make_case(base, case_dir, out, programs):
    with open(os.path.join(case_dir, "case.json")) as fh:
        case = json.load(fh)
    reports = {}
    for program in programs if case["reports"] == "all" else case["reports"]:
        with open(os.path.join(base, program + ".json")) as fh:
            reports[program] = json.load(fh)
        lay_out(reports[program])
    for e in case.get("edits", []):
        apply_edit(reports, e)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "reports"))
    for program, r in reports.items():
        with open(os.path.join(out, "reports", program + ".json"), "w") as fh:
            json.dump(r, fh, indent=1)
    if "suite_run" in case:
        with open(os.path.join(out, "reports", "suite_run.json"), "w") as fh:
            json.dump(case["suite_run"], fh, indent=1)
    for extra in ("expected.json", "baseline.json"):
        if os.path.exists(os.path.join(case_dir, extra)):
            shutil.copy(os.path.join(case_dir, extra), os.path.join(out, extra))


def main():
    if len(sys.argv) != 4:
        print(__doc__.splitlines()[1], file=sys.stderr)
        return 2
    bin_dir, cases, out = sys.argv[1:4]
    base = os.path.join(out, "base")
    shutil.rmtree(base, ignore_errors=True)
    try:
        programs = run_base(bin_dir, base)
        names = sorted(d for d in os.listdir(cases) if os.path.exists(os.path.join(cases, d, "case.json")))
        for name in names:
            make_case(base, os.path.join(cases, name), os.path.join(out, name), programs)
            print("make_fixtures: %s" % name)
    except FixtureError as e:
        print("make_fixtures: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
