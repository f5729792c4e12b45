"""The hand-off files read by the tools that consume them (issues 14, 26): gpuaccept.prom and every per-node
textfile by promtool, the JUnit XML by xmllint (well-formed XML 1.0) and junitparser (Debian
python3-junitparser), the JSON patch list applied by jsonpatch (python3-jsonpatch, RFC 6902) to a Node, and the
kubectl script run against a recording kubectl that must be told the same as the patch list.
Besides the suite's fixtures, three cases are made from them: a finding of the whole job (no node), a
message with the control bytes of a coloured `dmesg` (ESC, \\x01), and a baseline the nodes regress against.
Usage: check_consumers.py GPUACCEPT FIXTURE_CASES WORK_DIR [HANDOFF_PRINT]"""
import calendar
import json
import os
import shutil
import subprocess
import sys
import time

import jsonpatch
from junitparser import JUnitXml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, failures  # noqa: E402

gpuaccept, cases, work = sys.argv[1:4]
handoff_print = sys.argv[4] if len(sys.argv) > 4 else None  # ctest/handoff/handoff_print.c


def k8s_label(n):
    """A node's verdict label: its verdict, but unchecked-xid where it did not fail and its kernel log was not
    read (issue 41, item 2; suite/summary/kernel_log.c)."""
    if n["verdict"] != "fail" and "HEALTH_KERNEL_LOG_UNREADABLE" in n.get("fault_codes", []):
        return "unchecked-xid"
    return n["verdict"]


def merge(case, reports, extra=(), codes=(0, 1)):
    out = os.path.join(work, case)
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run(
        [gpuaccept, "merge", "--report-dir", reports, "--out-dir", out] + list(extra), capture_output=True, text=True
    )
    check(r.returncode in codes, f"{case}: merge exited {r.returncode}: {r.stderr}")
    return out, json.load(open(os.path.join(out, "summary.json")))


def derived(case, edit):
    """A copy of cluster_bad's reports, edited by edit(reports: {program: report})."""
    src = os.path.join(cases, "cluster_bad", "reports")
    d = os.path.join(work, case + "-reports")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(src, d)
    reports = {f[:-5]: json.load(open(os.path.join(d, f))) for f in os.listdir(d) if f.endswith(".json")}
    edit(reports)
    for p, r in reports.items():
        json.dump(r, open(os.path.join(d, p + ".json"), "w"))
    return d


def apply_k8s_entry(node, entry):
    """What docs/handoff.md tells a consumer of gpuaccept-k8s.json to do: the RFC 6902 label patch, the
    annotations as a JSON merge patch (RFC 7386) of metadata.annotations, then the taints read and written back
    without any of ours, plus "taint" where "tainted" (as `kubectl taint`)."""
    node = jsonpatch.apply_patch(node, entry["patch"])
    node["metadata"]["annotations"] = dict(node["metadata"].get("annotations", {}), **entry["annotations"])
    key = entry["taint"]["key"]
    taints = [t for t in node["spec"].get("taints", []) if t["key"] != key]
    taints += [entry["taint"]] if entry["tainted"] else []
    return jsonpatch.apply_patch(
        node,
        [
            {"op": "test", "path": "/metadata/name", "value": entry["node"]},
            {"op": "add", "path": "/spec/taints", "value": taints},
        ],
    )


def renamed(names):
    """An edit for derived(): every string equal to a key of names becomes its value, anywhere."""

    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return names.get(v, v) if isinstance(v, str) else v

    def edit(reports):
        for p in list(reports):
            reports[p] = walk(reports[p])

    return edit


def job_wide(reports):
    r = reports["allreduce_bw"]
    r["findings"].append(
        {
            "severity": "fail",
            "code": "COMM_BUSBW_LOW",
            "host": None,
            "node_index": None,
            "rank": None,
            "gpu": None,
            "message": "bus bandwidth 4.4 GB/s is below --min-busbw 1000",
        }
    )
    r["verdict"] = {"result": "fail", "exit_code": 1, "exit_name": "check_failed", "reasons": [], "warnings": 0}


def control_bytes(reports):
    r = reports["gemm_flops"]
    f = next(f for f in r["findings"] if f["severity"] == "fail")
    f["message"] = '\x1b[31mXid 79 on\x01 0000:5d:00\x1b[0m: fallen off the bus <&> "q" caf\u00e9'


def inflated_baseline():
    out, _ = merge("good-for-baseline", os.path.join(cases, "cluster_good", "reports"), ["--baseline", "none"])
    b = os.path.join(work, "inflated.json")
    r = subprocess.run(
        [gpuaccept, "baseline", "--from", os.path.join(out, "summary.json"), "-o", b, "--force"],
        capture_output=True,
        text=True,
    )
    check(r.returncode == 0, f"baseline: {r.stderr}")
    doc = json.load(open(b))
    for m in doc["metrics"]:
        m["value"] *= 100 if m["higher_is_better"] else 0.01
    json.dump(doc, open(b, "w"))
    return b


# --- JUnit: what a CI server reads must say what the summary says ---

STEP_ERRORS = (
    "crashed",
    "timeout",
    "env_error",
    "internal_error",
    "usage_error",
    "interrupted",
    "missing",
    "bad_report",
)


def check_junit(case, out, s):
    path = os.path.join(out, "gpuaccept-junit.xml")
    r = subprocess.run(["xmllint", "--noout", path], capture_output=True, text=True)
    check(r.returncode == 0, f"{case}: xmllint: {r.stderr.strip()[:300]}")
    xml = JUnitXml.fromfile(path)
    kinds, totals = {}, {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in xml:
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for tc in suite:
            res = [type(x).__name__ for x in tc.result]
            kind = (
                "failure" if "Failure" in res else "error" if "Error" in res else "skip" if "Skipped" in res else "pass"
            )
            kinds[(suite.name, tc.name)] = kind
            counts["tests"] += 1
            counts[{"failure": "failures", "error": "errors", "skip": "skipped", "pass": "tests"}[kind]] += (
                kind != "pass"
            )
            for x in tc.result:  # every failure, error and skip says why
                check(bool(x.message), f"{case}: {suite.name}/{tc.name}: a {kind} without a message")
                if kind in ("failure", "error"):
                    check(
                        bool(x.text and x.text.strip()) and bool(x.type),
                        f"{case}: {suite.name}/{tc.name}: " f"a {kind} without its text or type",
                    )
            check(tc.time is not None and tc.time >= 0, f"{case}: {suite.name}/{tc.name}: no time")
        for k in counts:
            check(
                getattr(suite, k) == counts[k],
                f"{case}: suite {suite.name} says {k}={getattr(suite, k)}, " f"holds {counts[k]}",
            )
            totals[k] += counts[k]
        step = next((st for st in s["steps"] if st["program"] == suite.name), None)
        if step and step.get("duration_s") is not None:
            check(abs(suite.time - step["duration_s"]) < 0.01, f"{case}: suite {suite.name} time {suite.time}")
    for k, v in totals.items():
        check(getattr(xml, k) == v, f"{case}: root says {k}={getattr(xml, k)}, suites hold {v}")
    # Every node's check is a case with the summary's outcome; what no node carries is the job's case.
    for host, n in ((n["host"], n) for n in s["nodes"]):
        for prog, c in n["checks"].items():
            want = (
                "pass"
                if c in ("pass", "warn")
                else "error"
                if c in STEP_ERRORS
                else "skip"
                if c in ("skipped", "not_run", "absent")
                else None
            )
            if c == "fail":
                codes = [
                    f["code"]
                    for f in s["findings"]
                    if f.get("host") == host and f["program"] == prog and f["severity"] == "fail"
                ]
                want = "failure" if any(not x.startswith("STEP_") and x != "HANDOFF_FAILED" for x in codes) else "error"
            check(
                kinds.get((prog, host)) == want,
                f"{case}: {prog}/{host} is {kinds.get((prog, host))}, " f"the summary says {c}",
            )
    for f in s["findings"]:
        if f["severity"] == "fail" and not f.get("host"):
            check(
                kinds.get((f["program"], "(job)")) in ("failure", "error"),
                f"{case}: the job-wide {f['code']} of {f['program']} is no failing case",
            )
    failing = sum(1 for k in kinds.values() if k in ("failure", "error"))
    check(
        (failing > 0) == (s["verdict"]["exit_code"] != 0),
        f"{case}: {failing} failing cases for a verdict of exit {s['verdict']['exit_code']}",
    )
    return xml, kinds


# --- Prometheus ---


def series(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name_labels, value = line.rsplit(" ", 1)
            out[name_labels] = float(value)
    return out


def check_prom(case, out, s):
    prom = open(os.path.join(out, "gpuaccept.prom")).read()
    r = subprocess.run(["promtool", "check", "metrics"], input=prom, capture_output=True, text=True)
    check(r.returncode == 0, f"{case}: promtool check metrics: {r.stdout}{r.stderr}")
    got = series(prom)
    check(got.get("gpuaccept_run_exit_code") == s["verdict"]["exit_code"], f"{case}: prom exit code")
    info = [k for k in got if k.startswith("gpuaccept_info{")]
    check(
        len(info) == 1 and f'run_id="{s["run_id"]}"' in info[0] and f'version="{s["gpuaccept_version"]}"' in info[0],
        f"{case}: gpuaccept_info {info}",
    )
    stamp = calendar.timegm(time.strptime(s["created_utc"], "%Y-%m-%dT%H:%M:%SZ"))
    check(got.get("gpuaccept_run_timestamp_seconds") == stamp, f"{case}: run timestamp")
    check(not any(k.startswith("gpuaccept_measurement") for k in got), f"{case}: the old catch-all metric")
    for host, n in ((n["host"], n) for n in s["nodes"]):
        want = {"pass": 0, "warn": 1, "fail": 2}[n["verdict"]]
        check(got.get(f'gpuaccept_node_verdict{{node="{host}"}}') == want, f"{case}: prom verdict of {host}")
    # Named metrics in base units: GEMM TFLOP/s as FLOP/s, memory GB/s as bytes per second.
    base = {"TFLOP/s": ("flops", 1e12), "GB/s": ("bytes_per_second", 1e9)}
    named = 0
    for m in s["metrics"]:
        if (
            m["program"] == "gemm_flops"
            and m["name"].startswith("tflops_")
            or m["program"] == "mem_bw"
            and m["name"].startswith("GBps_")
        ):
            if not m.get("host") or m.get("value") is None:
                continue
            suffix, scale = base[m["unit"]]
            what = m["name"].split("_", 1)[1].lower()
            labels = (
                f'node="{m["host"]}"'
                + (f',gpu="{m["gpu"]}"' if m.get("gpu") is not None else "")
                + (f',rank="{m["rank"]}"' if m.get("rank") is not None else "")
            )
            key = f'gpuaccept_{m["program"]}_{what}_{suffix}{{{labels}}}'
            check(
                key in got and abs(got[key] - m["value"] * scale) <= 1e-9 * abs(m["value"] * scale),
                f"{case}: {key} = {m['value']} {m['unit']}",
            )
            named += 1
    check(named > 0, f"{case}: no GEMM or memory figure to look for")
    # One textfile per node, valid, holding that node's series only.
    node_dir = os.path.join(out, "gpuaccept-nodes")
    files = sorted(os.listdir(node_dir)) if os.path.isdir(node_dir) else []
    check(files == sorted(n["host"] + ".prom" for n in s["nodes"]), f"{case}: per-node files {files[:4]}")
    for f in files:
        text = open(os.path.join(node_dir, f)).read()
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        check(r.returncode == 0, f"{case}: promtool on {f}: {r.stdout}{r.stderr}")
        mine = series(text)
        check(
            all(f'node="{f[:-5]}"' in k for k in mine if "node=" in k)
            and all(v == got.get(k) for k, v in mine.items()),
            f"{case}: {f} holds another node's series",
        )
        check(f'gpuaccept_node_verdict{{node="{f[:-5]}"}}' in mine, f"{case}: {f} lacks its node's verdict")


for case in ("cluster_bad", "cluster_good"):
    out, s = merge(case, os.path.join(cases, case, "reports"), ["--baseline", "none"])
    nodes = {n["host"]: n for n in s["nodes"]}
    check(len(nodes) > 1, f"{case}: the fixture has several nodes")
    check_prom(case, out, s)
    xml, kinds = check_junit(case, out, s)
    check(any(v == "failure" for v in kinds.values()) == (case == "cluster_bad"), f"{case}: JUnit failures")

    # Kubernetes: the entries applied to a Node (the label patch by jsonpatch, the taint as docs/handoff.md
    # says) give the verdict label and the taint on failed nodes only; applying one twice leaves the node as
    # once, a node that passes loses an earlier run's taint, and other taints stay (issue 41, item 1).
    patches = json.load(open(os.path.join(out, "gpuaccept-k8s.json")))
    check({p["node"] for p in patches} == set(nodes), f"{case}: one patch per node")
    ours = {"key": "gpuaccept.io/verdict", "value": "fail", "effect": "NoSchedule"}
    other = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    for p in patches:
        for taints in ([], [other, ours]):
            node = {
                "metadata": {"name": p["node"], "labels": {"kubernetes.io/hostname": p["node"]}},
                "spec": {"taints": list(taints)},
            }
            once = apply_k8s_entry(node, p)
            twice = apply_k8s_entry(once, p)
            v = nodes[p["node"]]["verdict"]
            check(once == twice, f"{case}: {p['node']}: applying the entry twice changes the node: {twice}")
            check(
                once["metadata"]["labels"].get("gpuaccept.io/verdict") == k8s_label(nodes[p["node"]]),
                f"{case}: label of {p['node']}",
            )
            check(
                once["spec"]["taints"].count(ours) == (v == "fail")
                and (other in once["spec"]["taints"]) == (other in taints),
                f"{case}: taints of {p['node']} from {taints}: {once['spec']['taints']}",
            )
    # The script says the same to kubectl.
    rec = os.path.join(work, case + "-kubectl.log")
    fake = os.path.join(work, "kubectl")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\necho "$@" >> "$GA_KUBECTL_LOG"\n')
    os.chmod(fake, 0o755)
    r = subprocess.run(
        ["sh", os.path.join(out, "gpuaccept-k8s.sh")], env=dict(os.environ, KUBECTL=fake, GA_KUBECTL_LOG=rec)
    )
    check(r.returncode == 0, f"{case}: gpuaccept-k8s.sh exited {r.returncode}")
    calls = open(rec).read().splitlines()
    for host, n in nodes.items():
        check(f"label node --overwrite -- {host} gpuaccept.io/verdict={k8s_label(n)}" in calls, f"{case}: label {host}")
        check(
            (f"taint node --overwrite -- {host} gpuaccept.io/verdict=fail:NoSchedule" in calls)
            == (n["verdict"] == "fail"),
            f"{case}: taint {host}",
        )

    # drain.sh: the failed nodes with their failing codes (never a warning's), and only them.
    drain = open(os.path.join(out, "drain.sh")).read()
    lines = [l for l in drain.splitlines() if l.startswith("scontrol update")]
    check(bool(lines) == any(n["verdict"] == "fail" for n in nodes.values()), f"{case}: drain lines {lines}")
    warned = {f["code"] for f in s["findings"] if f["severity"] == "warn"} - {
        f["code"] for f in s["findings"] if f["severity"] == "fail"
    }
    check(not any(c in l for l in lines for c in warned), f"{case}: a warning's code in a Reason: {lines}")
    r = subprocess.run(["sh", "-n", os.path.join(out, "drain.sh")])
    check(r.returncode == 0, f"{case}: drain.sh is valid sh")

# A finding of the whole job (no node): a failing case of its own, not a green suite.
out, s = merge("job_wide", derived("job_wide", job_wide), ["--baseline", "none"])
xml, kinds = check_junit("job_wide", out, s)
check(
    kinds.get(("allreduce_bw", "(job)")) == "failure",
    f"job_wide: the job's case is {kinds.get(('allreduce_bw', '(job)'))}",
)
check_prom("job_wide", out, s)

# Control bytes of a coloured dmesg in a message: the XML stays well-formed, the text is kept visibly.
out, s = merge("control_bytes", derived("control_bytes", control_bytes), ["--baseline", "none"])
check_junit("control_bytes", out, s)
raw = open(os.path.join(out, "gpuaccept-junit.xml"), "rb").read()
check(
    b"\x1b" not in raw and b"\x01" not in raw and b"\\x1B[31mXid 79 on\\x01" in raw,
    "control_bytes: ESC and \\x01 are written as \\xHH text",
)
check("\u00e9".encode() in raw, "control_bytes: valid UTF-8 is kept as it is")
check_prom("control_bytes", out, s)

# An MPIJob's reports name machines, with their pods beside them, and the launchers' other names map to them:
# every hand-off names the machines, never a pod or a hostfile entry (issue 41, items 1 and 8).
# Steps crashed and timed out there: the run's own failure, exit 5.
out, s = merge("names_pods_nodes", os.path.join(cases, "names_pods_nodes", "reports"), ["--baseline", "none"], (5,))
machines = {"gpu-node-01", "gpu-node-02", "gpu-node-03", "gpu-node-04"}
patches = json.load(open(os.path.join(out, "gpuaccept-k8s.json")))
check(
    {p["node"] for p in patches} == machines
    and {p.get("pod") for p in patches}
    == {"gpuaccept-launcher", "gpuaccept-worker-0", "gpuaccept-worker-1", "gpuaccept-worker-2"},
    f"names_pods_nodes: gpuaccept-k8s.json names nodes, pods beside them: {[(p['node'], p.get('pod')) for p in patches]}",
)
k8s = open(os.path.join(out, "gpuaccept-k8s.sh")).read()
named = {l.split(" -- ")[1].split()[0].strip("'") for l in k8s.splitlines() if " node --overwrite -- " in l}
check(named == machines, f"names_pods_nodes: gpuaccept-k8s.sh labels {sorted(named)}")
drain = open(os.path.join(out, "drain.sh")).read()
check(
    "scontrol update NodeName='gpu-node-03' State=DRAIN" in drain
    and "NodeName='gpu-node-04'" in drain
    and "worker" not in drain
    and "10.77" not in drain,
    f"names_pods_nodes: drain.sh drains the two machines by name: {drain}",
)

# A hostfile of addresses (no report gave a host name or SLURMD_NODENAME): drain.sh names no address to
# scontrol, and says which failed node it could not drain (issue 41, item 8).
ips = {"gpu-node-%02d" % i: "10.77.0.%d" % (i + 4) for i in range(1, 5)}
out, s = merge("ip_names", derived("ip_names", renamed(ips)), ["--baseline", "none"])
failed = sorted(n["host"] for n in s["nodes"] if n["verdict"] == "fail")
drain = open(os.path.join(out, "drain.sh")).read()
check(failed and all(h.startswith("10.77.0.") for h in failed), f"ip_names: failed nodes {failed}")
check(
    not [l for l in drain.splitlines() if l.startswith("scontrol update") and "10.77" in l]
    and "10.77" not in drain.split("passed=")[-1].split("\n")[0]
    and all(f"# {h} failed (" in drain for h in failed),
    f"ip_names: drain.sh: {drain}",
)
r = subprocess.run(["sh", "-n", os.path.join(out, "drain.sh")])
check(r.returncode == 0, "ip_names: drain.sh is valid sh")

# Regressions against a baseline: a failure in the baseline suite for each regressed node, and the root's
# counts are the failures it holds.
out, s = merge("baseline", os.path.join(cases, "cluster_good", "reports"), ["--baseline", inflated_baseline()])
xml, kinds = check_junit("baseline", out, s)
regressed = {f["host"] for f in s["findings"] if f["code"] == "BASELINE_REGRESSION" and f.get("host")}
check(
    regressed and all(kinds.get(("baseline", h)) == "failure" for h in regressed),
    f"baseline: regressed nodes {sorted(regressed)[:4]} are failures in the baseline suite",
)
check(xml.failures >= len(regressed), f"baseline: root failures {xml.failures}")
check_prom("baseline", out, s)

# A slow link between two nodes fine with their other partners (issue 44, item 6): the link is the abnormal
# entity in every hand-off, neither node is: JUnit has the link's failing case, Prometheus its series (promtool
# reads them), Kubernetes labels both ends and taints neither, drain.sh drains and resumes neither and says so.
out, s = merge("slow_link", os.path.join(cases, "slow_link", "reports"), ["--baseline", "none"])
ends = ["gpu-node-01", "gpu-node-04"]
link = " <-> ".join(ends)
check(
    [x["hosts"] for x in s.get("abnormal_links", [])] == [ends], f"slow_link: abnormal links {s.get('abnormal_links')}"
)
check(not s["abnormal_nodes"], f"slow_link: abnormal nodes {s['abnormal_nodes']}")
xml, kinds = check_junit("slow_link", out, s)
check(
    kinds.get(("allreduce_bw", link)) == "failure", f"slow_link: JUnit case {link}: {kinds.get(('allreduce_bw', link))}"
)
check(all(kinds.get(("allreduce_bw", h)) == "pass" for h in ends), "slow_link: the ends' own cases pass")
check_prom("slow_link", out, s)
series_line = f'gpuaccept_abnormal_link{{node_a="{ends[0]}",node_b="{ends[1]}",code="COMM_SLOW_LINK"}}'
got = series(open(os.path.join(out, "gpuaccept.prom")).read())
check(got.get(series_line) == 1 and got.get("gpuaccept_run_abnormal_links") == 1, "slow_link: prom link series")
check(not any("COMM_SLOW_LINK" in k and "node=" in k for k in got), "slow_link: no node carries the link's fault")
for h in ends:
    mine = series(open(os.path.join(out, "gpuaccept-nodes", h + ".prom")).read())
    check(mine.get(series_line) == 1, f"slow_link: {h}.prom shows its link")
patches = {p["node"]: p for p in json.load(open(os.path.join(out, "gpuaccept-k8s.json")))}
for h, p in patches.items():
    node = {"metadata": {"name": h, "labels": {}}, "spec": {"taints": []}}
    once = apply_k8s_entry(node, p)
    check(
        once["metadata"]["labels"].get("gpuaccept.io/link") == ("abnormal" if h in ends else "none")
        and not once["spec"]["taints"],
        f"slow_link: k8s {h}: {once}",
    )
drain = open(os.path.join(out, "drain.sh")).read()
passed = drain.split("passed=")[-1].split("\n")[0]
check(
    not [line for line in drain.splitlines() if line.startswith("scontrol update")]
    and f"#   link {link}: " in drain
    and "Left to the fabric team" in drain
    and not any(h in passed for h in ends),
    f"slow_link: drain.sh drains and resumes neither end, and says so: {drain}",
)

# Issue 45, item 2: the Prometheus writers hold to the text format whatever a summary holds, with no merge
# before them (handoff_print writes the files from summary.json as it stands): a code of 100,000 characters
# (a line of 2,047 left a label value open), hosts and messages with quotes, backslashes, newlines, control
# characters and braces. promtool reads every file, and the long code is there whole.
if handoff_print:
    out, s = merge("hostile_prom", os.path.join(cases, "cluster_bad", "reports"), ["--baseline", "none"])
    long_code = "C" * 100000
    hostile_host = 'gpu"node\\01\n} evil{x="1"\x07\u2028é'
    node0 = s["nodes"][0]["host"]
    s["nodes"][0]["host"] = hostile_host
    for f in s["findings"]:
        if f.get("host") == node0:
            f["host"] = hostile_host
    for m in s["metrics"]:
        if m.get("host") == node0:
            m["host"] = hostile_host
    s["findings"] += [
        {
            "program": "gemm_flops",
            "severity": "fail",
            "code": long_code,
            "host": hostile_host,
            "message": 'm"\\\n\x1b[31m' * 1000,
        },
        {"program": "gemm_flops", "severity": "warn", "code": 'X"\\\n}', "host": None, "message": "x"},
    ]
    s["metrics"].append(
        {
            "program": 'gemm"\\\nflops',
            "name": "n" * 5000,
            "unit": 'u"\\\n',
            "value": 1.5,
            "higher_is_better": True,
            "host": hostile_host,
        }
    )
    s["run_id"] = 'run"\\\n{}'
    hostile = os.path.join(work, "hostile_summary.json")
    json.dump(s, open(hostile, "w"))
    for what in ("prom", "prom-node:" + hostile_host, "prom-node:" + s["nodes"][1]["host"]):
        r = subprocess.run([handoff_print, what, hostile], capture_output=True)
        check(r.returncode == 0, f"hostile_prom: {what[:20]}: written ({r.returncode} {r.stderr[:200]})")
        text = r.stdout.decode("utf-8")  # valid UTF-8, or this raises
        p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        check(p.returncode == 0, f"hostile_prom: promtool on {what[:20]}: {p.stdout[:300]}{p.stderr[:300]}")
        if what == "prom":
            check(f'code="{long_code}"' in text, "hostile_prom: the 100,000-character code is written whole")
            check(max(len(l) for l in text.splitlines()) > 100000, "hostile_prom: no line cut at a fixed length")

# Parts (issue 46, item 4): the HCA env_audit names on gpu-node-03 is in its drain Reason, in the Kubernetes
# annotation (patch list and script alike) and beside its code in both summaries; a node without parts has "".
out, s = merge("parts", os.path.join(cases, "parts", "reports"), ["--baseline", "none"])
drain = open(os.path.join(out, "drain.sh")).read()
check(
    "NodeName='gpu-node-03' State=DRAIN Reason='gpuaccept: ENV_HCA_FIRMWARE_MISMATCH (mlx5_3)'" in drain,
    f"parts: drain.sh Reason: {drain}",
)
patches = {p["node"]: p for p in json.load(open(os.path.join(out, "gpuaccept-k8s.json")))}
for h, p in patches.items():
    once = apply_k8s_entry({"metadata": {"name": h, "labels": {}}, "spec": {"taints": []}}, p)
    want = "ENV_HCA_FIRMWARE_MISMATCH: mlx5_3" if h == "gpu-node-03" else ""
    check(once["metadata"]["annotations"].get("gpuaccept.io/parts") == want, f"parts: k8s {h}: {once}")
rec = os.path.join(work, "parts-kubectl.log")
if os.path.exists(rec):
    os.remove(rec)
r = subprocess.run(
    ["sh", os.path.join(out, "gpuaccept-k8s.sh")],
    env=dict(os.environ, KUBECTL=os.path.join(work, "kubectl"), GA_KUBECTL_LOG=rec),
)
calls = open(rec).read().splitlines()
check(
    r.returncode == 0
    and "annotate node --overwrite -- gpu-node-03 gpuaccept.io/parts=ENV_HCA_FIRMWARE_MISMATCH: mlx5_3" in calls
    and "annotate node --overwrite -- gpu-node-02 gpuaccept.io/parts=" in calls,
    f"parts: gpuaccept-k8s.sh annotations: {[c for c in calls if 'annotate' in c]}",
)
md = open(os.path.join(out, "summary.md")).read()
html = open(os.path.join(out, "summary.html")).read()
check("`ENV_HCA_FIRMWARE_MISMATCH` (mlx5_3)" in md, "parts: summary.md shows the part beside the code")
check('ENV_HCA_FIRMWARE_MISMATCH</span> <span class="part">(mlx5_3)</span>' in html, "parts: summary.html too")

print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
