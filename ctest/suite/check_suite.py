#!/usr/bin/env python3
"""End-to-end checks of the gpuaccept front-end. Usage: check_suite.py TEST GPUACCEPT FIXTURES WORKDIR
TEST: cli | baseline_compare | run_quick | run_faults | html_chromium. Exit 0 pass, 1 fail, 77 skipped."""
import glob
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import time
import zlib

TEST, GA, FX, WORK = sys.argv[1:5]
BIN = os.path.dirname(GA)
failures = []


def list_programs():
    """The suite's programs in run order, from the registry the binary carries (launch/programs.c)."""
    p = subprocess.run([GA, "run", "--list-programs"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        sys.exit("FAIL gpuaccept run --list-programs: exit %d %s" % (p.returncode, p.stderr))
    return [line.split("\t")[1] for line in p.stdout.splitlines()]


PROGRAMS = list_programs()


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def run(args, env=None, timeout=100):
    e = dict(os.environ)
    for k in ("SLURM_JOB_ID", "OMPI_MCA_orte_default_hostfile", "KUBERNETES_SERVICE_HOST"):
        e.pop(k, None)
    e.update(env or {})
    t0 = time.time()
    p = subprocess.run([GA] + args, capture_output=True, text=True, env=e, timeout=timeout)
    p.wall = time.time() - t0
    return p


def load(path):
    with open(path) as f:
        return json.load(f)


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def merge(case, out, extra=()):
    return merge_dir(os.path.join(FX, case, "reports"), out, extra)


def t_cli():
    p = run([])
    check(p.returncode == 2, "no verb: exit 2 (got %d)" % p.returncode)
    p = run(["--help"])
    check(p.returncode == 0 and "compare" in p.stdout, "--help lists the verbs")
    p = run(["--version"])
    check(p.returncode == 0 and p.stdout.startswith("gpuaccept "), "--version")
    for args, what in ((["frob"], "unknown verb"), (["run", "--frob"], "unknown option"),
                       (["run", "--only", "nope"], "unknown step"), (["run", "--np", "0"], "bad --np"),
                       (["run", "--np"], "missing value"), (["compare", "only-one.json"], "compare needs two"),
                       (["run", "--baseline", "/nonexistent.json"], "unreadable baseline"),
                       (["baseline"], "baseline without --from")):
        p = run(args)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1, "%s: exit 2 with one line (%d, %r)" % (what, p.returncode,
                                                                                         p.stderr.strip()))
    # Tolerances are percentages in every verb, as in every program: a fraction is refused with the hint.
    for verb in ("run", "merge", "baseline", "compare"):
        p = run([verb, "--tolerance", "0.05"])
        check(p.returncode == 2 and "write 5 for 5%" in p.stderr, "%s --tolerance 0.05: refused as a fraction (%r)"
              % (verb, p.stderr.strip()))
    for verb in ("run", "merge", "baseline", "compare"):
        p = run([verb, "--help"])
        check(p.returncode == 0 and "usage: gpuaccept " + verb in p.stdout, verb + " --help")
    d = os.path.join(WORK, "dry")
    p = run(["run", "--dry-run", "--only", "env_audit,mem_bw", "--report-dir", d, "--quick"],
            env={"CUDA_VISIBLE_DEVICES": ""})
    check(p.returncode == 0, "dry run exit 0")
    want = "mpirun %s-np 2" % ("--allow-run-as-root " if os.geteuid() == 0 else "")
    check(want in p.stdout and "env_audit --report-dir %s" % d in p.stdout and "--quick" in p.stdout,
          "plain machine without GPU: '%s ... env_audit --report-dir D --quick'" % want)
    check("gemm_flops" not in p.stdout.split("after it:")[1] if "after it:" in p.stdout else False,
          "--only: the other steps are not run")
    check(not os.path.exists(d), "dry run creates nothing")
    p = run(["run", "--dry-run", "--only", "env_audit"], env={"SLURM_JOB_ID": "77"})
    check("srun --mpi=pmix --kill-on-bad-exit=1 " in p.stdout, "in a Slurm allocation: srun --mpi=pmix")
    p = run(["run", "--dry-run", "--only", "env_audit", "--np", "16"],
            env={"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile", "NCCL_DEBUG": "INFO"})
    check("--hostfile /etc/mpi/hostfile -np 16 " in p.stdout and "-x NCCL_DEBUG " in p.stdout,
          "in an MPIJob launcher: the operator's hostfile, NCCL_* forwarded")


def t_baseline_compare():
    p, good = merge("cluster_good", "good", ["--baseline", "none"])
    check(p.returncode == 0, "merge cluster_good: exit 0 (%d)" % p.returncode)
    for f in ("summary.json", "summary.md", "summary.html"):
        check(os.path.getsize(os.path.join(good, f)) > 500, "merge writes " + f)
    # The renderers know no program by name: a report of a program they have never heard of is drawn from its
    # headlines and charts alone.
    extra = fresh("unknown-program-reports")
    for path in glob.glob(os.path.join(FX, "cluster_good", "reports", "*.json")):
        shutil.copy(path, extra)
    r = load(os.path.join(extra, "env_audit.json"))
    r["program"] = "future_check"
    r["headlines"] = [{"name": "widgets", "label": "widgets per node", "value": 42, "unit": "widgets",
                       "scope": "cluster", "higher_is_better": True}]
    r["charts"] = [{"title": "widgets against time", "x_label": "s", "y_label": "widgets", "x_scale": "linear",
                    "series": [{"label": "all", "points": [[0, 1], [1, 2], [2, 4]]}]}]
    with open(os.path.join(extra, "future_check.json"), "w") as f:
        json.dump(r, f)
    p, d = merge_dir(extra, "unknown-program", ["--baseline", "none"])
    md, html = open(d + "/summary.md").read(), open(d + "/summary.html").read()
    check(p.returncode == 0 and "- future_check, widgets per node: 42 widgets" in md and
          "widgets per node" in html and "widgets against time" in html,
          "a program the renderers do not know is drawn from its headlines and charts")
    p, bad = merge("cluster_bad", "bad", ["--baseline", "none"])
    check(p.returncode == 1 and "abnormal node gpu-node-02: ENV_KERNEL_MISMATCH" in p.stdout and
          "abnormal node gpu-node-03: GEMM_BELOW_MEDIAN" in p.stdout, "merge cluster_bad: exit 1, both nodes named")
    p, reg = merge("cluster_regressed", "regressed", ["--baseline", "none"])
    check(p.returncode == 0, "cluster_regressed passes the programs' own checks")

    # compare: the regressed node and only it, beyond the default 5 %
    cj = os.path.join(WORK, "compare.json")
    p = run(["compare", "--json", cj, good + "/summary.json", reg + "/summary.json"])
    print(p.stdout)
    c = load(cj)
    regs = [r for r in c["rows"] if r["regression"]]
    check(p.returncode == 1, "compare good -> regressed: exit 1")
    check(len(regs) == 1 and regs[0]["host"] == "gpu-node-03" and regs[0]["rank"] == 5 and
          regs[0]["name"] == "tflops_fp64" and abs(regs[0]["change_pct"] + 8.0) < 0.01,
          "one regression: gemm_flops tflops_fp64 gpu-node-03 rank 5, -8 %")
    check(c["regressed_nodes"] == ["gpu-node-03"], "regressed nodes: gpu-node-03")
    check("REGRESSION" in p.stdout and "gpu-node-03 rank 5" in p.stdout, "compare prints the regression")
    n_metrics = len(load(good + "/summary.json")["metrics"])
    check(n_metrics > 20 and c["compared"] == n_metrics, "every metric compared (%d of %d)" % (c["compared"], n_metrics))
    p = run(["compare", "--json", cj, "--tolerance", "2", good + "/summary.json", reg + "/summary.json"])
    c = load(cj)
    names = sorted(r["name"] for r in c["rows"] if r["regression"])
    check(p.returncode == 1 and names == ["avg_busbw", "busbw_at_max", "tflops_fp64"], "tolerance 2 %%: the 3 %% busbw drops "
                                                                        "too (%s)" % names)
    p = run(["compare", good + "/summary.json", good + "/summary.json"])
    check(p.returncode == 0 and "0 regressions" in p.stdout, "compare a run with itself: exit 0")
    # a node gone from the new run, another new
    s = load(good + "/summary.json")
    for m in s["metrics"]:
        if m["host"] == "gpu-node-04":
            m["host"] = "gpu-node-09"
    for n in s["nodes"]:
        if n["host"] == "gpu-node-04":
            n["host"] = "gpu-node-09"
    moved = os.path.join(WORK, "moved.json")
    with open(moved, "w") as f:
        json.dump(s, f)
    p = run(["compare", "--json", cj, good + "/summary.json", moved])
    c = load(cj)
    on_4 = sum(1 for m in s["metrics"] if m["host"] == "gpu-node-09")
    check(p.returncode == 0 and c["nodes_only_old"] == ["gpu-node-04"] and c["nodes_only_new"] == ["gpu-node-09"]
          and on_4 > 0 and len(c["only_old"]) == on_4 and len(c["only_new"]) == on_4,
          "nodes and metrics present in one run only (%d metrics of gpu-node-04)" % on_4)
    check("nodes only in OLD (1): gpu-node-04" in p.stdout, "compare names the node only in OLD")
    p = run(["compare", os.path.join(FX, "cluster_good/reports/gemm_flops.json"),
             os.path.join(FX, "cluster_regressed/reports/gemm_flops.json")])
    check(p.returncode == 1 and "gemm_flops tflops_fp64 gpu-node-03 rank 5" in p.stdout, "compare two reports")

    # baseline from a healthy run, then held against the regressed one
    bfile = os.path.join(WORK, "site-baseline.json")
    p = run(["baseline", "--from", good + "/summary.json", "-o", bfile, "--tolerance", "5"])
    check(p.returncode == 0, "baseline --from a healthy summary: exit 0")
    b = load(bfile)
    tf = [m for m in b["metrics"] if m["name"] == "tflops_fp64"]
    vals = sorted(m["value"] for m in s["metrics"] if m["name"] == "tflops_fp64")
    check(len(tf) == 1 and tf[0]["scope"] == "rank" and len(vals) == 8 and tf[0]["value"] == (vals[3] + vals[4]) / 2
          and tf[0]["samples"] == 8, "baseline tflops_fp64: the median of 8 ranks")
    bb = [m for m in b["metrics"] if m["name"] == "busbw_at_max"]
    check(len(bb) == 1 and bb[0]["world_size"] == 8 and bb[0]["node_count"] == 4,
          "a job-wide figure holds for the same job shape")
    check(b["match"] == [], "a host-path baseline matches no GPU model (%s)" % b["match"])
    p, d = merge("cluster_regressed", "regressed-vs-baseline", ["--baseline", bfile])
    sm = load(d + "/summary.json")
    br = [f for f in sm["findings"] if f["code"] == "BASELINE_REGRESSION"]
    check(p.returncode == 1 and len(br) == 1 and br[0]["host"] == "gpu-node-03" and br[0]["rank"] == 5,
          "regressed run against the site baseline: BASELINE_REGRESSION on gpu-node-03 rank 5, exit 1")
    check([a["host"] for a in sm["abnormal_nodes"]] == ["gpu-node-03"], "abnormal nodes: gpu-node-03")
    p, d = merge("cluster_good", "good-vs-baseline", ["--baseline", bfile])
    checked = load(d + "/summary.json")["baseline"]["checked"]
    check(p.returncode == 0 and checked == n_metrics,
          "the healthy run against its own baseline: every figure (%d of %d) checked, exit 0" % (checked, n_metrics))
    p = run(["baseline", "--from", bad + "/summary.json"])
    check(p.returncode == 1 and "healthy" in p.stderr, "baseline from a failed run is refused")
    p = run(["baseline", "--from", bad + "/summary.json", "--force"])
    check(p.returncode == 0 and json.loads(p.stdout)["schema"] == "gpuaccept-baseline", "--force overrides")

    # the shipped baselines: sources documented, selected by GPU model
    shipped = sorted(glob.glob(os.path.join(os.environ["GPUACCEPT_BASELINE_DIR"], "*.json")))
    check(len(shipped) >= 3, "at least 3 shipped baselines")
    for path in shipped:
        sb = load(path)
        ids = {s["id"] for s in sb["sources"]}
        ok = sb["schema"] == "gpuaccept-baseline" and sb["match"] and all(
            s.get("title") and s.get("url") for s in sb["sources"]) and all(
            m["source"] in ids and isinstance(m["estimate"], bool) and m["value"] > 0 for m in sb["metrics"])
        check(ok, "%s: every figure has a documented source" % os.path.basename(path))
    # auto picks the shipped baseline by GPU model. The fixtures come from host-path runs (no GPU), so this
    # part dresses their ranks as H100s and gives them bf16 figures written here, at the shipped baseline's
    # level, one GPU 45 % slow in the bad case.
    p, d = merge_dir(h100_shaped("cluster_good", None), "good-auto", [])
    sm = load(d + "/summary.json")
    check(p.returncode == 0 and sm["gpu_model"] == H100 and sm["baseline"] and
          "h100" in sm["baseline"]["file"].lower() and sm["baseline"]["checked"] >= 8,
          "auto: the H100 baseline is applied to the H100 cluster, and it passes")
    p, d = merge_dir(h100_shaped("cluster_good", 5), "bad-auto", [])
    sm = load(d + "/summary.json")
    br = [(f["host"], f["gpu"]) for f in sm["findings"] if f["code"] == "BASELINE_REGRESSION"]
    check(p.returncode == 1 and br == [("gpu-node-03", 1)],
          "auto: the slow GPU is below the shipped H100 figure (%s)" % br)


H100 = "NVIDIA H100 80GB HBM3"


def h100_shaped(case, slow_rank):
    """The case's reports with every rank on an H100 (device = its local rank) and a bf16 GEMM figure."""
    out = fresh(case + "-h100-%s" % slow_rank)
    for path in glob.glob(os.path.join(FX, case, "reports", "*.json")):
        r = load(path)
        for node in r.get("nodes", []):
            for rk in node["ranks"]:
                rk["device"] = {"index": rk["local_rank"], "name": H100, "uuid": "GPU-%d" % rk["rank"],
                                "pci_bus_id": "0000:%02x:00.0" % (0x18 + rk["local_rank"])}
        for m in r.get("metrics", []) + r.get("findings", []):
            if isinstance(m.get("rank"), int):
                m["gpu"] = m["rank"] % 2
        if r.get("program") == "gemm_flops":
            for rank in range(r["world_size"]):
                r["metrics"].append({"name": "tflops_bf16", "value": 430.0 if rank == slow_rank else 780.0,
                                     "unit": "TFLOP/s", "higher_is_better": True, "host": "gpu-node-%02d" % (rank // 2 + 1),
                                     "node_index": rank // 2, "rank": rank, "gpu": rank % 2})
        with open(os.path.join(out, os.path.basename(path)), "w") as f:
            json.dump(r, f)
    return out


def merge_dir(reports, out, extra=()):
    d = fresh(out)
    p = run(["merge", "--report-dir", reports, "--out-dir", d] + list(extra))
    return p, d


def expected_exit(summary):
    codes = {"STEP_CRASHED": 5, "STEP_INTERNAL_ERROR": 5, "STEP_TIMEOUT": 4, "STEP_INTERRUPTED": 4,
             "STEP_ENV_ERROR": 3, "STEP_MISSING": 3, "STEP_USAGE_ERROR": 2}
    fails = [f["code"] for f in summary["findings"] if f["severity"] == "fail"]
    if any(c not in codes for c in fails):
        return 1
    return max([codes[c] for c in fails] or [0])


def t_run_quick():
    d = fresh("run")
    p = run(["run", "--quick", "--report-dir", d, "--baseline", "none"], timeout=110)
    print(p.stdout[-3000:], p.stderr[-2000:])
    for f in ("summary.json", "summary.md", "summary.html", "suite_run.json"):
        check(os.path.exists(os.path.join(d, f)), "run writes " + f)
    s = load(os.path.join(d, "summary.json"))
    check(p.returncode == s["verdict"]["exit_code"], "exit code %d is the summary's verdict" % p.returncode)
    check(p.returncode == expected_exit(s), "exit code follows the findings (%d)" % expected_exit(s))
    for st in s["steps"]:
        prog = st["program"]
        exists = os.access(os.path.join(BIN, prog), os.X_OK)
        if not exists:
            check(st["status"] == "missing", "%s not built: step missing" % prog)
            continue
        rep = os.path.join(d, prog + ".json")
        if os.path.exists(rep):
            code = load(rep)["verdict"]["exit_code"]
            want = {0: "pass", 1: "fail"}.get(code, "?")
            check(st["status"] == want and st["exit_code"] == code, "%s: status %s from its exit %s" %
                  (prog, st["status"], code))
        else:
            check(st["status"] not in ("pass", "fail"), "%s: no report, status %s" % (prog, st["status"]))
        check("[SUITE] step %d/%d %s: starting" % (PROGRAMS.index(prog) + 1, len(PROGRAMS), prog) in p.stdout,
              "%s: progress line" % prog)
    check("[RESULT] " in p.stdout.splitlines()[-1], "the run ends with its [RESULT]")
    check(s["node_count"] == 1 and s["launcher"]["kind"] == "mpirun", "one node, mpirun on this machine")
    d2 = fresh("run-only")
    p = run(["run", "--quick", "--only", "env_audit", "--report-dir", d2], timeout=60)
    s = load(os.path.join(d2, "summary.json"))
    st = {x["program"]: x["status"] for x in s["steps"]}
    check(p.returncode == 0 and st["env_audit"] == "pass" and st["gemm_flops"] == "skipped",
          "--only env_audit: exit 0, other steps skipped (%s)" % st)
    check("[RESULT] SUCCESS" in p.stdout.splitlines()[-1], "--only env_audit: [RESULT] SUCCESS")


def t_run_faults():
    fake = fresh("fakebin")
    os.symlink(os.path.join(BIN, "env_audit"), os.path.join(fake, "env_audit"))
    scripts = {"gemm_flops": "#!/bin/sh\necho gemm starting\nkill -SEGV $$\n",
               "mem_bw": "#!/bin/sh\necho mem_bw hangs\nexec sleep 300\n",
               "allreduce_bw": "#!/bin/sh\necho '[RESULT] FAILURE: no network'\nexit 3\n"}
    for name, text in scripts.items():
        path = os.path.join(fake, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    d = fresh("run-faults")
    p = run(["run", "--quick", "--report-dir", d, "--step-timeout", "4"], env={"GPUACCEPT_BIN_DIR": fake},
            timeout=100)
    print(p.stdout[-4000:], p.stderr[-2000:])
    s = load(os.path.join(d, "summary.json"))
    st = [(x["program"], x["status"]) for x in s["steps"]]
    # Every other program of the registry is absent from the fake bin directory.
    outcome = {"env_audit": "pass", "gemm_flops": "crashed", "mem_bw": "timeout", "allreduce_bw": "env_error"}
    want = [(prog, outcome.get(prog, "missing")) for prog in PROGRAMS]
    check(st == want, "each failure reported as its step's status, and the run went on (%s)" % st)
    check(p.returncode == 5 and s["verdict"]["exit_code"] == 5, "exit 5: a step crashed (%d)" % p.returncode)
    code = {"crashed": "STEP_CRASHED", "timeout": "STEP_TIMEOUT", "env_error": "STEP_ENV_ERROR",
            "missing": "STEP_MISSING"}
    want_codes = []
    for _, status in want:
        if status in code and code[status] not in want_codes:
            want_codes.append(code[status])
    check(s["verdict"]["fault_codes"] == want_codes, "fault codes %s" % s["verdict"]["fault_codes"])
    ar = next(x for x in s["steps"] if x["program"] == "allreduce_bw")
    check(ar["result_line"] == "[RESULT] FAILURE: no network", "a step's [RESULT] line is kept")
    check(p.wall < 40, "the hung step was killed at its limit (%.1f s in all)" % p.wall)
    check("[SUITE] step %d/%d allreduce_bw: starting" % (PROGRAMS.index("allreduce_bw") + 1, len(PROGRAMS))
          in p.stdout, "the step after the timeout ran")
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    check("sleep 300" not in ps, "nothing of the killed step is left running")
    grid = {n["host"]: n["checks"] for n in s["nodes"]}
    check(all(c["gemm_flops"] == "crashed" and c["mem_bw"] == "timeout" for c in grid.values()),
          "the node grid shows the steps that could not measure")


def png_pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "unexpected PNG format %d/%d" % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def t_html_chromium():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: no chromium (apt-get install chromium)")
        sys.exit(77)
    p, d = merge("cluster_bad", "html", [])
    html = os.path.join(d, "summary.html")
    text = open(html).read()
    check("<script" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "") and
          "https://" not in text, "self-contained: no script, nothing fetched")
    prof = fresh("chromium-profile")
    shot = os.path.join(d, "summary.png")
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + prof,
            "--hide-scrollbars", "--window-size=1200,2000"]
    env = dict(os.environ, HOME=prof)
    r = subprocess.run(base + ["--screenshot=" + shot, "file://" + html], capture_output=True, text=True,
                       timeout=90, env=env)
    check(r.returncode == 0 and os.path.exists(shot), "chromium took a screenshot (%d)" % r.returncode)
    dom = subprocess.run(base + ["--dump-dom", "file://" + html], capture_output=True, text=True, timeout=90,
                         env=env).stdout
    check("Cluster acceptance: FAIL" in dom, "the DOM holds the verdict")
    abnormal = sorted(n["host"] for n in json.load(open(os.path.join(d, "summary.json")))["abnormal_nodes"])
    check(abnormal == ["gpu-node-02", "gpu-node-03"] and
          'Abnormal nodes, to copy: <code class="hostlist">gpu-node-[02-03]</code>' in dom,
          "the DOM holds the abnormal nodes %s as one Slurm host list" % abnormal)
    check(dom.count("<svg") >= 5, "the DOM holds the SVG charts (%d)" % dom.count("<svg"))
    for s in ("gpu-node-02", "ENV_KERNEL_MISMATCH", "gpu-node-03", "GEMM_BELOW_MEDIAN",
              "allreduce busbw against message size", "fp64 TFLOP/s per rank against the median",
              "Verdict of each check on each node", "Training loss by step"):
        check(s in dom, "the DOM holds '%s'" % s)
    if not os.path.exists(shot):
        return
    w, h, bpp, rows = png_pixels(shot)
    check(w == 1200 and h == 2000, "screenshot 1200x2000 (%dx%d)" % (w, h))
    colours, nonwhite, total = set(), 0, 0
    for y in range(0, h, 4):
        row = rows[y]
        for x in range(0, w, 4):
            px = row[x * bpp:x * bpp + 3]
            colours.add(px)
            total += 1
            nonwhite += px != b"\xff\xff\xff"
    check(len(colours) > 50, "a real render: %d colours" % len(colours))
    check(nonwhite / total > 0.3, "not blank: %.0f%% of pixels not white" % (100 * nonwhite / total))

    def near(px, rgb):
        return all(abs(px[i] - rgb[i]) < 12 for i in range(3))
    top = rows[20]
    check(sum(near(top[x * bpp:x * bpp + 3], (214, 69, 65)) for x in range(w)) > w // 2,
          "the red FAIL banner is at the top")
    green = sum(near(rows[y][x * bpp:x * bpp + 3], (46, 158, 91)) for y in range(0, h, 4) for x in range(0, w, 4))
    check(green > 50, "the grid's green pass cells are drawn (%d samples)" % green)


{"cli": t_cli, "baseline_compare": t_baseline_compare, "run_quick": t_run_quick, "run_faults": t_run_faults,
 "html_chromium": t_html_chromium}[TEST]()
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
