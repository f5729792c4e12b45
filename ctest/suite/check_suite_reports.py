"""The front-end over reports it is given: the command line, merge, compare and baseline, untrusted inputs."""
import glob
import json
import os
import shutil

from suite_helpers import (
    BIN,
    H100,
    run,
    load,
    fresh,
    merge,
    h100_shaped,
    merge_dir,
    copy_case,
    refused,
    edit,
    FX,
    WORK,
    check,
)


def t_cli():
    p = run([])
    check(p.returncode == 2, "no verb: exit 2 (got %d)" % p.returncode)
    check(
        len(p.stderr.strip().splitlines()) == 1 and "--help" in p.stderr,
        "no verb: one line pointing at --help, not the whole usage (%r)" % p.stderr,
    )
    p = run(["--help"])
    check(p.returncode == 0 and "compare" in p.stdout, "--help lists the verbs")
    p = run(["--version"])
    check(p.returncode == 0 and p.stdout.startswith("gpuaccept "), "--version")
    for args, what in (
        (["frob"], "unknown verb"),
        (["run", "--frob"], "unknown option"),
        (["run", "--only", "nope"], "unknown step"),
        (["run", "--np", "0"], "bad --np"),
        (["run", "--np"], "missing value"),
        (["compare", "only-one.json"], "compare needs two"),
        (["run", "--baseline", "/nonexistent.json"], "unreadable baseline"),
        (["baseline"], "baseline without --from"),
    ):
        p = run(args)
        lines = p.stderr.strip().splitlines()
        check(
            p.returncode == 2 and len(lines) == 1,
            "%s: exit 2 with one line (%d, %r)" % (what, p.returncode, p.stderr.strip()),
        )
    # issue 18: baseline --from a report is a usage error naming what it found; a baseline's tolerance is a percentage
    rep = glob.glob(os.path.join(FX, "cluster_good", "reports", "gemm_flops.json"))
    if check(len(rep) == 1, "a report to hand to baseline --from"):
        p = run(["baseline", "--from", rep[0]])
        check(
            p.returncode == 2 and 'schema "gpuaccept-report"' in p.stderr and len(p.stderr.strip().splitlines()) == 1,
            "baseline --from a report: exit 2 naming the schema found (%d %r)" % (p.returncode, p.stderr.strip()),
        )
    for tol in (1e6, "abc", -1):
        b = os.path.join(fresh("tol"), "tol.json")
        with open(b, "w") as f:
            json.dump({"schema": "gpuaccept-baseline", "schema_version": 1, "tolerance_pct": tol, "metrics": []}, f)
        p = run(["run", "--dry-run", "--baseline", b, "--report-dir", os.path.join(WORK, "dry")])
        check(
            p.returncode == 2 and "tolerance_pct" in p.stderr,
            "baseline tolerance_pct %r refused (%d %r)" % (tol, p.returncode, p.stderr.strip()),
        )
    # issue 18: a value given to an option that takes none is named as the option it is
    for verb in ("merge", "compare", "baseline"):
        p = run([verb, "--help=x"])
        check(p.returncode == 2 and "option '--help' takes no value" in p.stderr, "%s --help=x: %r" % (verb, p.stderr))
    # Tolerances are percentages in every verb, as in every program: a fraction is refused with the hint.
    for verb in ("run", "merge", "baseline", "compare"):
        p = run([verb, "--tolerance", "0.05"])
        check(
            p.returncode == 2 and "write 5 for 5%" in p.stderr,
            "%s --tolerance 0.05: refused as a fraction (%r)" % (verb, p.stderr.strip()),
        )
        # the deprecated alias with a bad value: the error line alone, no warning before it
        check(len(p.stderr.strip().splitlines()) == 1, "%s --tolerance 0.05: one line (%r)" % (verb, p.stderr))
        p = run([verb, "--baseline-tolerance", "0.05"])
        check(
            p.returncode == 2 and "--baseline-tolerance: " in p.stderr and "write 5 for 5%" in p.stderr,
            "%s --baseline-tolerance 0.05: refused as a fraction (%r)" % (verb, p.stderr.strip()),
        )
    # a value echoed in an error line is escaped: the line stays one line
    p = run(["run", "--only", "env_audit\nFAKE"])
    check(
        p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "env_audit\\nFAKE" in p.stderr,
        "a newline in an echoed value is written \\n (%r)" % p.stderr,
    )
    for verb in ("run", "merge", "baseline", "compare"):
        p = run([verb, "--help"])
        check(p.returncode == 0 and "usage: gpuaccept " + verb in p.stdout, verb + " --help")
    d = os.path.join(WORK, "dry")
    p = run(
        ["run", "--dry-run", "--only", "env_audit,mem_bw", "--report-dir", d, "--quick"],
        env={"CUDA_VISIBLE_DEVICES": ""},
    )
    check(p.returncode == 0, "dry run exit 0")
    want = "mpirun %s-np 2" % ("--allow-run-as-root " if os.geteuid() == 0 else "")
    check(
        want in p.stdout and "env_audit --report-dir %s" % d in p.stdout and "--quick" in p.stdout,
        "plain machine without GPU: '%s ... env_audit --report-dir D --quick'" % want,
    )
    check(
        "gemm_flops" not in p.stdout.split("after it:")[1] if "after it:" in p.stdout else False,
        "--only: the other steps are not run",
    )
    check(not os.path.exists(d), "dry run creates nothing")
    p = run(["run", "--dry-run", "--only", "env_audit"], env={"SLURM_JOB_ID": "77"})
    check("srun --mpi=pmix --kill-on-bad-exit=1 " in p.stdout, "in a Slurm allocation: srun --mpi=pmix")
    p = run(
        ["run", "--dry-run", "--only", "env_audit", "--np", "16"],
        env={"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile", "NCCL_DEBUG": "INFO"},
    )
    check(
        "--hostfile /etc/mpi/hostfile -np 16 " in p.stdout and "-x NCCL_DEBUG " in p.stdout,
        "in an MPIJob launcher: the operator's hostfile, NCCL_* forwarded",
    )


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
    r["headlines"] = [
        {
            "name": "widgets",
            "label": "widgets per node",
            "value": 42,
            "unit": "widgets",
            "scope": "cluster",
            "higher_is_better": True,
        }
    ]
    r["charts"] = [
        {
            "title": "widgets against time",
            "x_label": "s",
            "y_label": "widgets",
            "x_scale": "linear",
            "series": [{"label": "all", "points": [[0, 1], [1, 2], [2, 4]]}],
        }
    ]
    with open(os.path.join(extra, "future_check.json"), "w") as f:
        json.dump(r, f)
    p, d = merge_dir(extra, "unknown-program", ["--baseline", "none"])
    md, html = open(d + "/summary.md").read(), open(d + "/summary.html").read()
    check(
        p.returncode == 0
        and "- future_check, widgets per node: 42 widgets" in md
        and "widgets per node" in html
        and "widgets against time" in html,
        "a program the renderers do not know is drawn from its headlines and charts",
    )
    p, bad = merge("cluster_bad", "bad", ["--baseline", "none"])
    check(
        p.returncode == 1
        and "abnormal node gpu-node-02: ENV_KERNEL_MISMATCH" in p.stdout
        and "abnormal node gpu-node-03: GEMM_BELOW_MEDIAN" in p.stdout,
        "merge cluster_bad: exit 1, both nodes named",
    )
    p, reg = merge("cluster_regressed", "regressed", ["--baseline", "none"])
    check(p.returncode == 0, "cluster_regressed passes the programs' own checks")

    # compare: the regressed node and only it, beyond the default 5 %
    cj = os.path.join(WORK, "compare.json")
    p = run(["compare", "--json", cj, good + "/summary.json", reg + "/summary.json"])
    print(p.stdout)
    c = load(cj)
    regs = [r for r in c["rows"] if r["regression"]]
    check(p.returncode == 1, "compare good -> regressed: exit 1")
    check(
        len(regs) == 1
        and regs[0]["host"] == "gpu-node-03"
        and regs[0]["rank"] == 5
        and regs[0]["name"] == "tflops_fp64"
        and abs(regs[0]["change_pct"] + 8.0) < 0.01,
        "one regression: gemm_flops tflops_fp64 gpu-node-03 rank 5, -8 %",
    )
    check(c["regressed_nodes"] == ["gpu-node-03"], "regressed nodes: gpu-node-03")
    check("REGRESSION" in p.stdout and "gpu-node-03 rank 5" in p.stdout, "compare prints the regression")
    n_metrics = len(load(good + "/summary.json")["metrics"])
    check(
        n_metrics > 20 and c["compared"] == n_metrics, "every metric compared (%d of %d)" % (c["compared"], n_metrics)
    )
    p = run(["compare", "--json", cj, "--baseline-tolerance", "2", good + "/summary.json", reg + "/summary.json"])
    c = load(cj)
    names = sorted(r["name"] for r in c["rows"] if r["regression"])
    check(
        p.returncode == 1 and names == ["avg_busbw", "busbw_at_max", "tflops_fp64"],
        "tolerance 2 %%: the 3 %% busbw drops " "too (%s)" % names,
    )
    p = run(["compare", good + "/summary.json", good + "/summary.json"])
    check(p.returncode == 0 and "0 regressions" in p.stdout, "compare a run with itself: exit 0")
    p = run(["compare", "--tolerance", "2", good + "/summary.json", good + "/summary.json"])
    check(
        p.returncode == 0 and p.stderr.count("warning: --tolerance is deprecated; use --baseline-tolerance") == 1,
        "compare --tolerance: the deprecated name warns once, then acts (%r)" % p.stderr,
    )
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
    check(
        p.returncode == 1
        and c["nodes_only_old"] == ["gpu-node-04"]
        and c["nodes_only_new"] == ["gpu-node-09"]
        and on_4 > 0
        and len(c["only_old"]) == on_4
        and len(c["only_new"]) == on_4,
        "nodes and metrics present in one run only (%d metrics of gpu-node-04): exit 1, NEW lacks a node" % on_4,
    )
    check("nodes only in OLD (1): gpu-node-04" in p.stdout, "compare names the node only in OLD")
    p = run(
        [
            "compare",
            os.path.join(FX, "cluster_good/reports/gemm_flops.json"),
            os.path.join(FX, "cluster_regressed/reports/gemm_flops.json"),
        ]
    )
    check(p.returncode == 1 and "gemm_flops tflops_fp64 gpu-node-03 rank 5" in p.stdout, "compare two reports")

    # baseline from a healthy run, then held against the regressed one
    bfile = os.path.join(WORK, "site-baseline.json")
    p = run(["baseline", "--from", good + "/summary.json", "-o", bfile, "--baseline-tolerance", "5"])
    check(p.returncode == 0, "baseline --from a healthy summary: exit 0")
    b = load(bfile)
    tf = [m for m in b["metrics"] if m["name"] == "tflops_fp64"]
    vals = sorted(m["value"] for m in s["metrics"] if m["name"] == "tflops_fp64")
    check(
        len(tf) == 1
        and tf[0]["scope"] == "rank"
        and len(vals) == 8
        and tf[0]["value"] == (vals[3] + vals[4]) / 2
        and tf[0]["samples"] == 8,
        "baseline tflops_fp64: the median of 8 ranks",
    )
    bb = [m for m in b["metrics"] if m["name"] == "busbw_at_max"]
    check(
        len(bb) == 1 and bb[0]["world_size"] == 8 and bb[0]["node_count"] == 4,
        "a job-wide figure holds for the same job shape",
    )
    check(b["match"] == [], "a host-path baseline matches no GPU model (%s)" % b["match"])
    p, d = merge("cluster_regressed", "regressed-vs-baseline", ["--baseline", bfile])
    sm = load(d + "/summary.json")
    br = [f for f in sm["findings"] if f["code"] == "BASELINE_REGRESSION"]
    check(
        p.returncode == 1 and len(br) == 1 and br[0]["host"] == "gpu-node-03" and br[0]["rank"] == 5,
        "regressed run against the site baseline: BASELINE_REGRESSION on gpu-node-03 rank 5, exit 1",
    )
    check([a["host"] for a in sm["abnormal_nodes"]] == ["gpu-node-03"], "abnormal nodes: gpu-node-03")
    p, d = merge("cluster_good", "good-vs-baseline", ["--baseline", bfile])
    checked = load(d + "/summary.json")["baseline"]["checked"]
    check(
        p.returncode == 0 and checked == n_metrics,
        "the healthy run against its own baseline: every figure (%d of %d) checked, exit 0" % (checked, n_metrics),
    )
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
        ok = (
            sb["schema"] == "gpuaccept-baseline"
            and sb["match"]
            and all(source_documented(s, path) for s in sb["sources"])
            and all(m["source"] in ids and isinstance(m["estimate"], bool) and m["value"] > 0 for m in sb["metrics"])
        )
        check(ok, "%s: every figure has a documented source" % os.path.basename(path))
    # auto picks the shipped baseline by GPU model. The fixtures come from host-path runs (no GPU), so this
    # part dresses their ranks as H100s and gives them bf16 figures written here, at the shipped baseline's
    # level, one GPU 45 % slow in the bad case.
    p, d = merge_dir(h100_shaped("cluster_good", None), "good-auto", [])
    sm = load(d + "/summary.json")
    check(
        p.returncode == 0
        and sm["gpu_model"] == H100
        and sm["baseline"]
        and "h100" in sm["baseline"]["file"].lower()
        and sm["baseline"]["checked"] >= 8,
        "auto: the H100 baseline is applied to the H100 cluster, and it passes",
    )
    p, d = merge_dir(h100_shaped("cluster_good", 5), "bad-auto", [])
    sm = load(d + "/summary.json")
    br = [(f["host"], f["gpu"]) for f in sm["findings"] if f["code"] == "BASELINE_REGRESSION"]
    check(
        p.returncode == 1 and br == [("gpu-node-03", 1)],
        "auto: the slow GPU is below the shipped H100 figure (%s)" % br,
    )
    # A figure whose file says "regression": "warn" (one no GPU run has measured) cannot fail the node: the same
    # slow GPU is a warning and the merge passes.
    shipped = load(os.path.join(os.environ["GPUACCEPT_BASELINE_DIR"], "h100-sxm.json"))
    for m in shipped["metrics"]:
        if m["program"] == "gemm_flops":
            m["regression"] = "warn"
    soft = os.path.join(fresh("regression-warn"), "h100-warn.json")
    with open(soft, "w") as f:
        json.dump(shipped, f)
    p, d = merge_dir(h100_shaped("cluster_good", 5), "bad-warn", ["--baseline", soft])
    sm = load(d + "/summary.json")
    br = [(f["host"], f["severity"]) for f in sm["findings"] if f["code"] == "BASELINE_REGRESSION"]
    check(
        p.returncode == 0 and br == [("gpu-node-03", "warn")],
        'a figure with "regression": "warn": the slow GPU is a warning, exit 0 (%d, %s)' % (p.returncode, br),
    )


def t_untrusted():
    """Issue 18 items 1-4: every input the front-end cannot trust stops it; none is dropped and passes."""
    bad = os.path.join(FX, "cluster_bad", "reports")
    gemm_bad = open(os.path.join(bad, "gemm_flops.json"), "rb").read()
    d = copy_case("cluster_good", "intact")
    p = run(["merge", "--report-dir", d, "--out-dir", fresh("intact-out"), "--baseline", "none"])
    check(p.returncode == 0, "the intact good case passes (%d)" % p.returncode)
    d = copy_case("cluster_bad", "intact-bad")
    out = fresh("intact-out")
    stale = [os.path.join(out, n) for n in ("summary.json.tmp.a1B2c3", "summary.html.tmp.XyZ789")]
    for s in stale:
        with open(s, "w") as f:
            f.write("{half")
    p = run(["merge", "--report-dir", d, "--out-dir", out, "--baseline", "none"])
    check(p.returncode == 1, "the intact bad case fails (%d)" % p.returncode)
    check(
        not any(os.path.exists(s) for s in stale)
        and sorted(n for n in os.listdir(out) if n.startswith("summary"))
        == ["summary.html", "summary.json", "summary.md"]
        and not any(".tmp." in n for n in os.listdir(out)),
        "a killed merge's temporary files are cleaned, the set is whole (%s)" % sorted(os.listdir(out)),
    )
    # 1. a report that cannot be read in full, in every shape
    bodies = {
        "truncated": gemm_bad[: len(gemm_bad) * 2 // 3],
        "empty": b"",
        "nan": b"NaN",
        "1e999": gemm_bad.replace(b'"world_size": 8', b'"world_size": 1e999', 1),
        "huge integer": gemm_bad.replace(b'"world_size": 8', b'"world_size": 123456789012345678901234567890', 1),
        "deep nesting": b"[" * 5000 + b"]" * 5000,
        "top-level array": b"[" + gemm_bad + b"]",
        "duplicate keys": gemm_bad.replace(b"{", b'{"verdict": 0, ', 1),
    }
    check(b'"world_size": 8' in gemm_bad, "the gemm report has the field the edits change")
    for what, body in bodies.items():
        d = copy_case("cluster_good", "corrupt", skip=("gemm_flops.json",))
        with open(os.path.join(d, "gemm_flops.json"), "wb") as f:
            f.write(body)
        refused(d, "gemm_flops.json " + what)
    d = copy_case("cluster_good", "corrupt", skip=("gemm_flops.json",))
    os.symlink("/dev/urandom", os.path.join(d, "gemm_flops.json"))
    refused(d, "gemm_flops.json a symlink to /dev/urandom")
    d = copy_case("cluster_good", "corrupt", skip=("gemm_flops.json",))
    os.mkfifo(os.path.join(d, "gemm_flops.json"))
    refused(d, "gemm_flops.json a FIFO", timeout=10)
    d = copy_case("cluster_good", "corrupt", skip=("gemm_flops.json",))
    with open(os.path.join(d, "gemm_flops.json"), "wb") as f:
        f.truncate(65 << 20)
    refused(d, "gemm_flops.json over 64 MiB")
    # 2. a run record that cannot be read
    d = copy_case("steps_failed", "run-record")
    p = run(["merge", "--report-dir", d, "--out-dir", fresh("rr-out"), "--baseline", "none"])
    check(p.returncode == 5, "steps_failed with its run record: exit 5 (%d)" % p.returncode)
    rr = open(os.path.join(d, "suite_run.json"), "rb").read()
    with open(os.path.join(d, "suite_run.json"), "wb") as f:
        f.write(rr[:300])
    refused(d, "suite_run.json cut to 300 bytes")
    for what, fn in {
        "version 1": lambda j: j.update(schema_version=1),
        "no run_id": lambda j: j.pop("run_id"),
        "unknown status": lambda j: j["steps"][1].update(status="fine"),
        "exit code 1e300": lambda j: j["steps"][1].update(exit_code=1e300),
    }.items():
        d = copy_case("steps_failed", "run-record")
        edit(os.path.join(d, "suite_run.json"), fn)
        refused(d, "suite_run.json " + what)
    # 3. reports of another run
    d = copy_case("cluster_good", "stale")
    shutil.copy(os.path.join(bad, "env_audit.json"), os.path.join(d, "a_previous_env_audit.json"))
    edit(os.path.join(d, "a_previous_env_audit.json"), lambda j: j.update(run_id="older-run"))
    refused(d, "a stale env_audit of another run beside this run's")
    d = copy_case("cluster_bad", "stale")
    shutil.copy(os.path.join(FX, "cluster_good", "reports", "gemm_flops.json"), os.path.join(d, "a_gemm.json"))
    refused(d, "a passing gemm report of the same run id beside the failing one")
    d = copy_case("steps_failed", "stale")
    shutil.copy(os.path.join(bad, "gemm_flops.json"), os.path.join(d, "gemm_flops.json"))
    edit(os.path.join(d, "gemm_flops.json"), lambda j: j.update(run_id="older-run"))
    p = run(["merge", "--report-dir", d, "--out-dir", fresh("stale-out"), "--baseline", "none"])
    s = load(os.path.join(WORK, "stale-out", "summary.json")) if p.returncode == 5 else {"steps": []}
    st = {x["program"]: x["status"] for x in s["steps"]}
    check(
        p.returncode == 5 and st.get("gemm_flops") == "crashed" and "older-run" in p.stderr,
        "with suite_run.json, another run's report is ignored, not merged (%d, %s)" % (p.returncode, st),
    )
    # 4. report identity
    for what, fn in {
        "schema_version 2": lambda j: j.update(schema_version=2),
        'schema_version "1"': lambda j: j.update(schema_version="1"),
        "no schema_version": lambda j: j.pop("schema_version"),
        "no run_id": lambda j: j.pop("run_id"),
        "another cluster (node_count 64)": lambda j: j.update(node_count=64),
        "verdict exit code 1e300": lambda j: j["verdict"].update(exit_code=1e300),
    }.items():
        d = copy_case("cluster_good", "identity")
        edit(os.path.join(d, "gemm_flops.json"), fn)
        refused(d, "gemm_flops.json " + what)
    # 5. names that reach a scheduler or an orchestrator (issue 45, item 1): scontrol's NodeName=ALL drains every
    #    node, host lists and globs name many, a leading '-' is an option; one report so named is refused
    for name in ("ALL", "all", "All", "n[1-999]", "gpu1,gpu2", "node*", "node?", "-x", "a b", "a\tb", "x" * 254):
        for key in ("slurm_node", "host", "pod"):
            d = copy_case("cluster_good", "names")
            edit(os.path.join(d, "gemm_flops.json"), lambda j: j["nodes"][0].update({key: name}))
            refused(d, "gemm_flops.json node 0's %s %r" % (key, name[:20]))
    # 6. every string of a report is bounded (issue 45, item 2): a code, a message or a host of 100,000 characters
    for what, fn in {
        "code": lambda j: j["findings"].append(
            {"severity": "warn", "code": "X" * 100000, "message": "m", "host": None}
        ),
        "message": lambda j: j["findings"].append(
            {"severity": "warn", "code": "GEMM_X", "message": "m" * 100000, "host": None}
        ),
        "metric name": lambda j: j["metrics"][0].update(name="n" * 100000),
        "unit": lambda j: j["metrics"][0].update(unit="u" * 100000),
    }.items():
        d = copy_case("cluster_good", "lengths")
        edit(os.path.join(d, "gemm_flops.json"), fn)
        refused(d, "gemm_flops.json a %s of 100,000 characters" % what)
    # compare refuses what it cannot compare and fails what NEW lost
    good_gemm = os.path.join(FX, "cluster_good", "reports", "gemm_flops.json")
    mem = os.path.join(FX, "cluster_good", "reports", "mem_bw.json")
    tmp = fresh("cmp")

    def variant(name, fn):
        path = os.path.join(tmp, name)
        shutil.copy(good_gemm, path)
        edit(path, fn)
        return path

    p = run(["compare", good_gemm, good_gemm])
    check(p.returncode == 0, "compare a report with itself: exit 0 (%d)" % p.returncode)
    for what, new, want in (
        ("no metrics", variant("none.json", lambda j: j.update(metrics=[])), 2),
        ("gemm_flops against mem_bw", mem, 2),
        ("schema_version 99", variant("v99.json", lambda j: j.update(schema_version=99)), 2),
        ("all values null", variant("nulls.json", lambda j: [m.update(value=None) for m in j["metrics"]]), 1),
        (
            "a node missing",
            variant(
                "gone.json",
                lambda j: j.update(
                    metrics=[m for m in j["metrics"] if m.get("host") != "gpu-node-02"],
                    nodes=[n for n in j["nodes"] if n["host"] != "gpu-node-02"],
                ),
            ),
            1,
        ),
    ):
        p = run(["compare", good_gemm, new])
        check(
            p.returncode == want,
            "compare NEW %s: exit %d (%d: %s)" % (what, want, p.returncode, p.stderr.strip()[:120]),
        )
    # gpuaccept run: a step that exits 0 with a truncated report, or another run's, is no pass
    fake = fresh("fakebin-untrusted")
    os.symlink(os.path.join(BIN, "env_audit"), os.path.join(fake, "env_audit"))
    half = os.path.join(tmp, "half.json")
    with open(half, "wb") as f:
        f.write(gemm_bad[:2000])
    for name, src in (("gemm_flops", half), ("mem_bw", mem)):
        with open(os.path.join(fake, name), "w") as f:
            f.write(
                '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = --report-dir ] && d=$2; shift; done\n'
                'cp %s "$d/%s.json"\necho "[RESULT] SUCCESS"\nexit 0\n' % (src, name)
            )
        os.chmod(os.path.join(fake, name), 0o755)
    d = fresh("run-untrusted")
    p = run(["run", "--quick", "--report-dir", d, "--baseline", "none"], env={"GPUACCEPT_BIN_DIR": fake}, timeout=100)
    s = load(os.path.join(d, "summary.json"))
    st = {x["program"]: x["status"] for x in s["steps"]}
    check(
        st.get("env_audit") == "pass"
        and st.get("gemm_flops") == "bad_report"
        and st.get("mem_bw") == "bad_report"
        and p.returncode == 5
        and "STEP_BAD_REPORT" in s["verdict"]["fault_codes"]
        and os.path.exists(os.path.join(d, "gemm_flops.json.invalid")),
        "run: exit 0 with a truncated report, or another run's, is bad_report, exit 5 (%d, %s)" % (p.returncode, st),
    )
    p = run(["merge", "--report-dir", d, "--out-dir", fresh("rerun-out"), "--baseline", "none"])
    check(p.returncode == 5, "merge of that run's directory keeps the verdict (%d %s)" % (p.returncode, p.stderr[:200]))


def source_documented(src, baseline_path):
    """A source has a title, and a URL or a document of this repository (a figure measured by this project:
    "doc", relative to the repository root, which holds suite/baselines/)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(baseline_path))))
    doc = src.get("doc")
    return bool(src.get("title")) and bool(src.get("url") or (doc and os.path.isfile(os.path.join(root, doc))))


def t_baseline_sources():
    """Every figure of the shipped baselines cites a source or is labelled an estimate; the loader refuses a
    figure that cites a source the file does not list."""
    bdir = os.environ["GPUACCEPT_BASELINE_DIR"]
    files = sorted(glob.glob(os.path.join(bdir, "*.json")))
    check(len(files) >= 3, "shipped baselines found (%d)" % len(files))
    for path in files:
        b = load(path)
        srcs = {s["id"]: s for s in b.get("sources", [])}
        check(
            all(source_documented(s, path) for s in srcs.values()),
            "%s: every source has a title, and a URL or a document of this repository that exists"
            % os.path.basename(path),
        )
        for m in b["metrics"]:
            what = "%s %s/%s" % (os.path.basename(path), m["program"], m["name"])
            check(
                m.get("source") in srcs and isinstance(m.get("estimate"), bool) and m.get("note"),
                "%s: cites a listed source, says whether it is an estimate, and says what (%s)"
                % (what, m.get("source")),
            )
            check(
                not m.get("estimate") or m["note"].startswith("estimate"), "%s: an estimate's note says so first" % what
            )
            if "peak" in m:
                check(m.get("peak_source") in srcs, "%s: its peak cites a listed source" % what)
        p = run(["run", "--dry-run", "--baseline", path, "--report-dir", os.path.join(WORK, "never")])
        check(p.returncode == 0, "%s: the loader accepts it (%r)" % (os.path.basename(path), p.stderr.strip()))
    b = load(files[0])
    b["metrics"][0]["source"] = "nowhere"
    path = os.path.join(fresh("baseline-sources"), "b.json")
    with open(path, "w") as f:
        json.dump(b, f)
    p = run(["run", "--dry-run", "--baseline", path, "--report-dir", os.path.join(WORK, "never")])
    check(
        p.returncode == 2 and 'names no entry of "sources"' in p.stderr,
        "a figure citing an unlisted source: refused (%d %r)" % (p.returncode, p.stderr.strip()),
    )
