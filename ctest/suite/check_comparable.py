"""compare and baseline check comparability (issue 26): figures measured under another profile, world size,
node count or problem size (a program's "conditions": sweep, m/n/k, model, buffer size) are reported "not
comparable" per metric and never counted; with nothing comparable compare refuses (exit 2) unless --force;
the table has a unit column; a baseline figure holds only under what it was measured under, and may carry
its own tolerance. Runs the real gpuaccept on summaries merged from the suite's fixtures.
Usage: check_comparable.py GPUACCEPT FIXTURE_CASES WORK_DIR"""
import copy
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, failures  # noqa: E402

gpuaccept, cases, work = sys.argv[1:4]


def run(*args):
    return subprocess.run([gpuaccept] + list(args), capture_output=True, text=True)


def save(name, doc):
    p = os.path.join(work, name)
    json.dump(doc, open(p, "w"))
    return p


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
reports = os.path.join(cases, "cluster_good", "reports")
r = run("merge", "--report-dir", reports, "--out-dir", os.path.join(work, "a"), "--baseline", "none")
a = json.load(open(os.path.join(work, "a", "summary.json")))
A = save("a.json", a)
check(
    all(
        st.get("conditions")
        for st in a["steps"]
        if st["program"] in ("gemm_flops", "allreduce_bw", "mem_bw", "ddp_smoke")
    ),
    "every measuring step carries its conditions",
)


def step(s, prog):
    return next(st for st in s["steps"] if st["program"] == prog)


def scale(s, prog, factor):
    for m in s["metrics"]:
        if m["program"] == prog and isinstance(m.get("value"), (int, float)):
            m["value"] *= factor


def compare(*args):
    r = run("compare", "--json", os.path.join(work, "cmp.json"), *args)
    cmp = json.load(open(os.path.join(work, "cmp.json"))) if r.returncode in (0, 1) else None
    return r, cmp


# Twice the ranks, allreduce half as fast: the allreduce rows are not comparable and not counted; the
# other programs' are (same figures): exit 0. It was exit 1, "regressions".
b = copy.deepcopy(a)
step(b, "allreduce_bw")["world_size"] *= 2
scale(b, "allreduce_bw", 0.5)
r, cmp = compare(A, save("b.json", b))
rows = [x for x in (cmp or {}).get("rows", []) if x["program"] == "allreduce_bw"]
check(
    r.returncode == 0
    and rows
    and all(not x["comparable"] and "world_size" in x["not_comparable_why"] and not x["regression"] for x in rows),
    f"world size 8 -> 16: allreduce rows not comparable, not counted (exit {r.returncode}) {r.stderr[:200]}",
)
check("not comparable" in r.stdout, "the table says which rows are not comparable")
r, cmp = compare("--force", A, save("b.json", b))
check(r.returncode == 1 and cmp["regressions"] > 0, f"--force counts them: exit {r.returncode}")

# Another sweep (-e 16M against 1M): not comparable. A smaller problem (m/n/k) for the GEMM too.
c = copy.deepcopy(a)
cond = step(c, "allreduce_bw").setdefault("conditions", {"max_bytes": 262144})
cond["max_bytes"] //= 16
scale(c, "allreduce_bw", 0.3)
step(c, "gemm_flops").setdefault("conditions", {"m": 512})["m"] //= 4
scale(c, "gemm_flops", 0.2)
r, cmp = compare(A, save("c.json", c))
bad = [x for x in cmp["rows"] if x["program"] in ("allreduce_bw", "gemm_flops")] if cmp else []
check(
    r.returncode == 0
    and bad
    and all(not x["comparable"] for x in bad)
    and any("max_bytes 262144 -> 16384" in x["not_comparable_why"] for x in bad)
    and any("m " in x["not_comparable_why"] for x in bad),
    f"another sweep and GEMM size: not comparable, exit {r.returncode}",
)

# A quick run against a standard one, everything ten times faster: nothing comparable, refused with exit 2
# (it was "+900 % improved", exit 0).
d = copy.deepcopy(a)
a_std = copy.deepcopy(a)
a_std["profile"] = {"name": "standard"}
d["profile"] = {"name": "quick"}
scale(d, "ddp_smoke", 10)
r = run("compare", save("std.json", a_std), save("quick.json", d))
check(
    r.returncode == 2 and "profile standard -> quick" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
    f"standard against quick: exit {r.returncode}: {r.stderr.strip()[:160]}",
)

# Every program measured under other conditions: the refusal's reasons run past the 512-byte line; it is cut
# between words with "…", says how many reasons it left out and keeps its advice (--force). It was cut
# mid-word and lost "--force" (issue 41, observation 10).
e = copy.deepcopy(d)
for st in e["steps"]:
    st["world_size"] = (st.get("world_size") or 8) * 64
    st["node_count"] = (st.get("node_count") or 4) * 64
    st["conditions"] = {
        k: (v * 7 if isinstance(v, int) else "another-%s" % v) for k, v in (st.get("conditions") or {"size": 1}).items()
    }
r = run("compare", save("std.json", a_std), save("quick_all.json", e))
line = r.stderr.strip()
cut_ok = "…" not in line or all(
    line[i - 1].isalnum() or line[i - 1] in ")]'\"" for i in [k for k, ch in enumerate(line) if ch == "…"]
)
check(
    r.returncode == 2
    and len(line.splitlines()) == 1
    and "; --force compares them anyway (see gpuaccept compare --help)" in line
    and cut_ok
    and ("more reason" in line or len(line) < 500),
    f"every program not comparable: one line ending with the advice, cut between words "
    f"({len(line.encode())} bytes): {line}",
)

# Two reports of one program at different world sizes: refused the same way.
rep = json.load(open(os.path.join(reports, "allreduce_bw.json")))
rep2 = copy.deepcopy(rep)
rep2["world_size"] *= 2
r = run("compare", os.path.join(reports, "allreduce_bw.json"), save("ar2.json", rep2))
check(r.returncode == 2 and "world_size" in r.stderr, f"reports at 8 and 16 ranks: exit {r.returncode}")

# A unit column.
r = run("compare", "--all", A, A)
head = r.stdout.splitlines()[1] if len(r.stdout.splitlines()) > 1 else ""
check(
    r.returncode == 0 and "unit" in head.split() and any("TFLOP/s" in l for l in r.stdout.splitlines()),
    f"the table has a unit column: '{head}'",
)

# Baselines: made from the run, a figure holds only under its conditions; a figure may carry its own
# tolerance.
bl = os.path.join(work, "site.json")
r = run("baseline", "--from", A, "-o", bl, "--force")
check(r.returncode == 0, f"baseline --from: {r.stderr}")
base = json.load(open(bl))
check(
    all(m.get("conditions") for m in base["metrics"] if m["program"] != "env_audit"),
    "the baseline records each figure's conditions",
)


def merged_with(name, doc):
    out = os.path.join(work, name)
    r = run("merge", "--report-dir", reports, "--out-dir", out, "--baseline", save(name + ".json", doc))
    return r, json.load(open(os.path.join(out, "summary.json")))


# The allreduce figures were measured over another sweep: far above what the run reaches, yet no regression;
# a warning says they were not held, and why.
b1 = copy.deepcopy(base)
for m in b1["metrics"]:
    if m["program"] == "allreduce_bw":
        m.setdefault("conditions", {"max_bytes": 1})["max_bytes"] *= 64
        m["value"] *= 100
r, s = merged_with("other_sweep", b1)
regs = [f for f in s["findings"] if f["code"] == "BASELINE_REGRESSION" and "allreduce_bw" in f["message"]]
warns = [f for f in s["findings"] if f["code"] == "BASELINE_NOT_COMPARABLE"]
check(
    not regs and warns and "max_bytes" in warns[0]["message"] and r.returncode == 0,
    f"another sweep's baseline: no regression ({len(regs)}), a warning ({len(warns)}), exit {r.returncode}",
)
check(
    any(e["program"] == "allreduce_bw" for e in s["baseline"]["not_comparable"]),
    "summary.baseline lists the figures not held",
)

# A per-metric tolerance: the GEMM figure 5 % above the run, within the file's 10 %, outside its own 1 %.
b2 = copy.deepcopy(base)
for m in b2["metrics"]:
    if m["program"] == "gemm_flops":
        m["value"] *= 1.05
        m["tolerance_pct"] = 1
r, s = merged_with("own_tolerance", b2)
regs = [f for f in s["findings"] if f["code"] == "BASELINE_REGRESSION"]
check(
    regs and all("gemm_flops" in f["message"] and "tolerance 1%" in f["message"] for f in regs) and r.returncode == 1,
    f"a figure's own tolerance: {len(regs)} regressions, exit {r.returncode}",
)
b3 = copy.deepcopy(b2)
for m in b3["metrics"]:
    m.pop("tolerance_pct", None)
r, s = merged_with("file_tolerance", b3)
check(
    not any(f["code"] == "BASELINE_REGRESSION" for f in s["findings"]) and r.returncode == 0,
    f"without it, the file's 10 % holds: exit {r.returncode}",
)
b4 = copy.deepcopy(base)
b4["metrics"][0]["tolerance_pct"] = 250
r, _ = (
    subprocess.run(
        [
            gpuaccept,
            "merge",
            "--report-dir",
            reports,
            "--out-dir",
            os.path.join(work, "bad"),
            "--baseline",
            save("bad.json", b4),
        ],
        capture_output=True,
        text=True,
    ),
    None,
)
check(r.returncode == 2 and "tolerance_pct" in r.stderr, f"a tolerance of 250 %: refused, exit {r.returncode}")

print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
