"""The hand-off files read by the tools that consume them (issue 14): gpuaccept.prom by promtool, the JUnit
XML by junitparser (Debian python3-junitparser), the JSON patch list applied by jsonpatch (python3-jsonpatch,
RFC 6902) to a Node, and the kubectl script run against a recording kubectl that must be told the same as
the patch list. Usage: consumers_test.py GPUACCEPT FIXTURE_CASES WORK_DIR"""
import json
import os
import shutil
import subprocess
import sys

import jsonpatch
from junitparser import JUnitXml, Failure, Skipped

gpuaccept, cases, work = sys.argv[1:4]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def merge(case):
    out = os.path.join(work, case)
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([gpuaccept, "merge", "--report-dir", os.path.join(cases, case, "reports"), "--out-dir", out,
                        "--baseline", "none"], capture_output=True, text=True)
    check(r.returncode in (0, 1), f"{case}: merge exited {r.returncode}: {r.stderr}")
    return out, json.load(open(os.path.join(out, "summary.json")))


for case in ("cluster_bad", "cluster_good"):
    out, s = merge(case)
    nodes = {n["host"]: n for n in s["nodes"]}
    check(len(nodes) > 1, f"{case}: the fixture has several nodes")

    # Prometheus: promtool accepts the file, and every node's verdict is there.
    prom = open(os.path.join(out, "gpuaccept.prom")).read()
    r = subprocess.run(["promtool", "check", "metrics"], input=prom, capture_output=True, text=True)
    check(r.returncode == 0, f"{case}: promtool check metrics: {r.stdout}{r.stderr}")
    for host, n in nodes.items():
        want = {"pass": 0, "warn": 1, "fail": 2}[n["verdict"]]
        check(f'gpuaccept_node_verdict{{node="{host}"}} {want}\n' in prom, f"{case}: prom verdict of {host}")
    check(any(l.startswith("gpuaccept_measurement{") for l in prom.splitlines()), f"{case}: prom has figures")

    # JUnit: one case per node and check; failures exactly where the summary says a node failed a check.
    xml = JUnitXml.fromfile(os.path.join(out, "gpuaccept-junit.xml"))
    seen = {}
    for suite in xml:
        for tc in suite:
            kinds = [type(r).__name__ for r in tc.result]
            seen[(suite.name, tc.name)] = "fail" if "Failure" in kinds else "skip" if "Skipped" in kinds else "pass"
    want = {}
    for host, n in nodes.items():
        for prog, c in n["checks"].items():
            if any(st["program"] == prog for st in s["steps"]):
                want[(prog, host)] = ("pass" if c in ("pass", "warn") else
                                      "fail" if c in ("fail", "crashed", "timeout", "env_error", "internal_error",
                                                      "usage_error", "interrupted") else "skip")
    check(seen == want, f"{case}: JUnit cases {sorted(set(seen.items()) ^ set(want.items()))[:6]}")
    check(any(v == "fail" for v in seen.values()) == (case == "cluster_bad"), f"{case}: JUnit failures")

    # Kubernetes: the patch list applied to a Node gives the verdict label, and the taint on failed nodes.
    patches = json.load(open(os.path.join(out, "gpuaccept-k8s.json")))
    check({p["node"] for p in patches} == set(nodes), f"{case}: one patch per node")
    for p in patches:
        node = {"metadata": {"name": p["node"], "labels": {"kubernetes.io/hostname": p["node"]}},
                "spec": {"taints": []}}
        res = jsonpatch.apply_patch(node, p["patch"])
        v = nodes[p["node"]]["verdict"]
        check(res["metadata"]["labels"].get("gpuaccept.io/verdict") == v, f"{case}: label of {p['node']}")
        tainted = {"key": "gpuaccept.io/verdict", "value": "fail", "effect": "NoSchedule"} in res["spec"]["taints"]
        check(tainted == (v == "fail"), f"{case}: taint of {p['node']}")
    # The script says the same to kubectl.
    rec = os.path.join(work, case + "-kubectl.log")
    fake = os.path.join(work, "kubectl")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\necho "$@" >> "$GA_KUBECTL_LOG"\n')
    os.chmod(fake, 0o755)
    r = subprocess.run(["sh", os.path.join(out, "gpuaccept-k8s.sh")],
                       env=dict(os.environ, KUBECTL=fake, GA_KUBECTL_LOG=rec))
    check(r.returncode == 0, f"{case}: gpuaccept-k8s.sh exited {r.returncode}")
    calls = open(rec).read().splitlines()
    for host, n in nodes.items():
        check(f"label node --overwrite -- {host} gpuaccept.io/verdict={n['verdict']}" in calls, f"{case}: label {host}")
        check((f"taint node --overwrite -- {host} gpuaccept.io/verdict=fail:NoSchedule" in calls) == (n["verdict"] == "fail"),
              f"{case}: taint {host}")

    # drain.sh: the failed nodes, and only them.
    drain = open(os.path.join(out, "drain.sh")).read()
    lines = [l for l in drain.splitlines() if l.startswith("scontrol update")]
    check(bool(lines) == any(n["verdict"] == "fail" for n in nodes.values()), f"{case}: drain lines {lines}")
    r = subprocess.run(["sh", "-n", os.path.join(out, "drain.sh")])
    check(r.returncode == 0, f"{case}: drain.sh is valid sh")

print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
