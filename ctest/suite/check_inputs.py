#!/usr/bin/env python3
"""Untrusted input stays harmless (issue 27). Usage: check_inputs.py TEST GPUACCEPT FIXTURES WORKDIR
TEST: report_rule | escaping | no_clobber | node_names | secrets | compare | schema_versions | hostfile | cli |
leftovers. The programs are taken from GPUACCEPT's directory; GA_FAULT_SHIM names ctest/common/fault_shim.c's
library and GA_MPIEXEC the launcher (leftovers). Exit 0 pass, 1 fail."""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, failures  # noqa: E402

TEST, GA, FX, WORK = sys.argv[1:5]
BIN = os.path.dirname(GA)
MPIEXEC = os.environ.get("GA_MPIEXEC", "mpiexec")


def env_of(extra=None):
    e = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for k in ("SLURM_JOB_ID", "SLURM_JOB_NODELIST", "OMPI_MCA_orte_default_hostfile", "KUBERNETES_SERVICE_HOST"):
        e.pop(k, None)
    e.update(extra or {})
    return e


def run(args, extra_env=None, timeout=120):
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True, env=env_of(extra_env), timeout=timeout)
    p.wall = time.time() - t0
    return p


def ga(args, **kw):
    return run([GA] + args, **kw)


def mpi(np_, program, args, extra_env=None, x=(), timeout=120):
    cmd = [MPIEXEC, "-np", str(np_), "--oversubscribe"]
    for v in x:
        cmd += ["-x", v]
    return run(cmd + [os.path.join(BIN, program)] + args, extra_env=extra_env, timeout=timeout)


def load(path):
    with open(path) as f:
        return json.load(f)


def dump(path, j):
    with open(path, "w") as f:
        json.dump(j, f)


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def copy_case(case, name):
    d = fresh(name)
    src = os.path.join(FX, case, "reports")
    for f in os.listdir(src):
        shutil.copy(os.path.join(src, f), d)
    return d


def merge(d, out=None, extra=()):
    out = out or fresh(os.path.basename(d) + "-out")
    p = ga(["merge", "--report-dir", d, "--out-dir", out, "--baseline", "none"] + list(extra))
    p.out = out
    return p


def refused(p, what, verb="merge"):
    lines = p.stderr.strip().splitlines()
    return check(
        p.returncode == 2
        and len(lines) == 1
        and lines[0].startswith("gpuaccept %s: " % verb)
        and not os.path.exists(os.path.join(getattr(p, "out", "/nonexistent"), "summary.json")),
        "%s: refused, exit 2, one line (exit %d: %s)" % (what, p.returncode, p.stderr.strip()[:200]),
    )


# ---- 1. what a report file is ----------------------------------------------------------------------------

FRONT_END_SCHEMAS = ("gpuaccept-summary", "gpuaccept-suite-run", "gpuaccept-baseline", "gpuaccept-compare")


def t_report_rule():
    d = copy_case("cluster_bad", "intact")
    check(merge(d).returncode == 1, "the intact failing run exits 1")
    # The case: gemm_flops.json and mem_bw.json of a failing run relabelled gpuaccept-summary.
    d = copy_case("cluster_bad", "relabelled")
    for prog in ("gemm_flops", "mem_bw"):
        j = load(os.path.join(d, prog + ".json"))
        j["schema"] = "gpuaccept-summary"
        dump(os.path.join(d, prog + ".json"), j)
    p = merge(d)
    refused(p, "gemm_flops.json and mem_bw.json relabelled gpuaccept-summary")
    check("[RESULT] SUCCESS" not in p.stdout, "no [RESULT] SUCCESS from the doctored directory")
    for schema in FRONT_END_SCHEMAS:
        for prog in ("gemm_flops", "env_audit", "node_health"):
            d = copy_case("cluster_bad", "relabel")
            j = load(os.path.join(d, prog + ".json"))
            j["schema"] = schema
            dump(os.path.join(d, prog + ".json"), j)
            refused(merge(d), "%s.json relabelled %s" % (prog, schema))
    # A report under a name that is not its program's.
    for name in ("summary.json", "a_copy.json", "mem_bw.json", "suite_run.json", "gpuaccept-k8s.json"):
        d = copy_case("cluster_bad", "renamed")
        shutil.move(os.path.join(d, "gemm_flops.json"), os.path.join(d, "tmp.x"))
        if os.path.exists(os.path.join(d, name)):
            os.unlink(os.path.join(d, name))
        shutil.move(os.path.join(d, "tmp.x"), os.path.join(d, name))
        refused(merge(d), "the failing gemm_flops report saved as %s" % name)
    # The front-end's own files, by name, stay readable: a merge over its own outputs is the same merge.
    d = copy_case("cluster_bad", "own-files")
    first = merge(d, out=d)
    again = merge(d, out=d)
    check(
        first.returncode == 1 and again.returncode == 1,
        "a directory holding its own summary.json and gpuaccept-k8s.json merges again (%d %d %s)"
        % (first.returncode, again.returncode, again.stderr.strip()[:160]),
    )
    # gpuaccept run: a step whose report is another program's under its name has no report.
    fake = fresh("fakebin")
    os.symlink(os.path.join(BIN, "env_audit"), os.path.join(fake, "env_audit"))
    gemm = os.path.join(FX, "cluster_good", "reports", "gemm_flops.json")
    with open(os.path.join(fake, "mem_bw"), "w") as f:
        f.write(
            "#!/usr/bin/env python3\nimport json, sys\na = sys.argv\n"
            "d, rid = a[a.index('--report-dir') + 1], a[a.index('--run-id') + 1]\n"
            "j = json.load(open(%r)); j['run_id'] = rid\n"
            "json.dump(j, open(d + '/mem_bw.json', 'w'))\nprint('[RESULT] SUCCESS')\n" % gemm
        )
    os.chmod(os.path.join(fake, "mem_bw"), 0o755)
    d = fresh("run-misnamed")
    p = ga(
        ["run", "--quick", "--only", "env_audit,mem_bw", "--report-dir", d, "--baseline", "none"],
        extra_env={"GPUACCEPT_BIN_DIR": fake},
        timeout=200,
    )
    s = load(os.path.join(d, "summary.json")) if os.path.exists(os.path.join(d, "summary.json")) else {"steps": []}
    st = {x["program"]: x["status"] for x in s["steps"]}
    check(
        st.get("mem_bw") == "bad_report" and os.path.exists(os.path.join(d, "mem_bw.json.invalid")),
        "run: mem_bw.json holding a gemm_flops report is no report, moved aside (%s, exit %d)" % (st, p.returncode),
    )


# ---- 2. one escaping path: the marker sweep ---------------------------------------------------------------

# Keys whose values the merge checks at the boundary (a marker there is refused, not rendered), and keys
# whose values steer what is drawn (kept real in the all-at-once pass so the sinks behind them are reached).
VALIDATED = {"schema", "program", "run_id", "host", "severity", "result", "status"}
STEERING = {"scope", "x_scale", "severity", "status", "result", "kind"}
CONTROL = "\x1b[31m\x01\x08\x0b\x0c\x7f\u0085\u009b\r\t"


def validated_at(fp):
    """Whether the merge validates the field at fp (file, path): a step's status in the run record, a report's
    verdict result, and the keys of VALIDATED wherever they are (hosts, schemas, programs, run ids)."""
    f, path = fp
    key = key_of(path)
    if key == "status":
        return f == "suite_run.json" and path[0] == "steps"
    if key == "result":
        return f != "suite_run.json" and path[:1] == ("verdict",)
    return key in ("schema", "program", "run_id") and len(path) == 1 or key in ("host", "severity")


def marker(n, control):
    m = 'MK%d<b id="mk%d">x</b>"\'&|[l](javascript:alert(%d))`c`' % (n, n, n)
    return m + CONTROL if control else m


def leaves(j, path=()):
    """(path, key) of every string in j."""
    if isinstance(j, dict):
        for k, v in j.items():
            yield from leaves(v, path + (k,))
    elif isinstance(j, list):
        for i, v in enumerate(j):
            yield from leaves(v, path + (i,))
    elif isinstance(j, str):
        yield path


def key_of(path):
    return next((p for p in reversed(path) if isinstance(p, str)), "")


def set_at(j, path, value):
    for p in path[:-1]:
        j = j[p]
    j[path[-1]] = value


class Sweep:
    """The files of one case, with markers set on chosen string fields, merged and checked."""

    def __init__(self, case, extra_run=None):
        src = os.path.join(FX, case, "reports")
        self.files = {f: load(os.path.join(src, f)) for f in os.listdir(src) if f.endswith(".json")}
        if extra_run and "suite_run.json" in self.files:
            self.files["suite_run.json"].update(extra_run)
        self.paths = [(f, p) for f, j in self.files.items() for p in leaves(j)]
        self.seen = 0  # markers found rendered, as text, somewhere
        self.passes = 0

    def merge_with(self, chosen, control, extra=()):
        d, out = fresh("sweep"), fresh("sweep-out")
        files = copy.deepcopy(self.files)
        for n, (f, p) in enumerate(chosen):
            set_at(files[f], p, marker(n, control))
        for f, j in files.items():
            dump(os.path.join(d, f), j)
        p = ga(["merge", "--report-dir", d, "--out-dir", out, "--baseline", "none"] + list(extra))
        self.passes += 1
        return p, out

    def check_outputs(self, out, what, control, parse=False):
        html = open(os.path.join(out, "summary.html"), encoding="utf-8", errors="replace").read()
        md = open(os.path.join(out, "summary.md"), encoding="utf-8", errors="replace").read()
        md_html = render_md(md)
        bad = [
            w
            for w, text in (("summary.html", html), ("summary.md rendered", md_html))
            if re.search(r'<b id="mk\d+"', text) or re.search(r'href="javascript:', text)
        ]
        check(not bad, "%s: no marker markup in %s" % (what, bad or "summary.html, summary.md"))
        ctl = [
            w
            for w, text in (("summary.html", html), ("summary.md", md))
            if re.search(r"[\x00-\x09\x0b-\x1f\x7f\x80-\x9f]", text)
        ]
        if control:
            check(not ctl, "%s: no control character in %s" % (what, ctl or "summary.html, summary.md"))
        self.seen += len(re.findall(r"MK\d+", html))
        if parse:
            parsed_checks(out, html, md_html, what, junit=not control)


def render_md(md):
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def parsed_checks(out, html, md_html, what, junit):
    """The pages as a browser's parser builds them: no element or attribute a marker could have made."""
    import html5lib
    import xml.etree.ElementTree as ET

    for name, text in (("summary.html", html), ("summary.md (CommonMark, raw HTML on)", md_html)):
        tree = html5lib.parse(text, treebuilder="etree", namespaceHTMLElements=False)
        made = [
            e
            for e in tree.iter()
            if str(e.get("id", "")).startswith("mk") or str(e.get("href", "")).startswith("javascript:")
        ]
        check(not made, "%s: html5lib finds no element a marker made in %s" % (what, name))
    if junit:
        try:
            root = ET.parse(os.path.join(out, "gpuaccept-junit.xml")).getroot()
            check(not [e for e in root.iter() if e.tag == "b"], "%s: the JUnit XML parses, no marker element" % what)
        except ET.ParseError as e:
            check(False, "%s: the JUnit XML parses (%s)" % (what, e))


def refused_leaves(sweep, chosen, control, what):
    """The fields among chosen that a merge refuses when they hold a marker (bisection); the others were
    merged and checked, in groups."""
    p, out = sweep.merge_with(chosen, control)
    if p.returncode != 2:
        sweep.check_outputs(out, "%s (%d fields)" % (what, len(chosen)), control)
        return []
    if len(chosen) == 1:
        return list(chosen)
    half = len(chosen) // 2
    return refused_leaves(sweep, chosen[:half], control, what) + refused_leaves(sweep, chosen[half:], control, what)


def sweep_case(case, extra_run=None):
    sw = Sweep(case, extra_run)
    open_paths = [fp for fp in sw.paths if key_of(fp[1]) not in VALIDATED | STEERING]
    # All at once, the fields the merge does not validate, and the pages parsed as a browser would.
    for control in (False, True):
        p, out = sw.merge_with(open_paths, control)
        if p.returncode == 2:
            structural = refused_leaves(sw, open_paths, control, case + ", the open fields")
            print(
                "note %s: %d fields refused when they hold a marker: %s"
                % (case, len(structural), sorted({key_of(x[1]) for x in structural}))
            )
            allowed = [x for x in open_paths if x not in structural]
            p, out = sw.merge_with(allowed, control)
        check(
            p.returncode in (0, 1, 3, 4, 5),
            "%s: the merge with every open field marked runs (exit %d %s)"
            % (case, p.returncode, p.stderr.strip()[:160]),
        )
        if p.returncode != 2:
            sw.check_outputs(
                out, "%s, every open field%s" % (case, " (control characters)" if control else ""), control, parse=True
            )
    # One key at a time, every other field real: the sinks behind a field's real neighbours.
    by_key = {}
    for fp in sw.paths:
        by_key.setdefault(key_of(fp[1]), []).append(fp)
    for key, paths in sorted(by_key.items()):
        paths = [fp for fp in paths if not validated_at(fp)]  # those are refused: checked below, once
        if not paths:
            continue
        refused_fields = refused_leaves(sw, paths, True, "%s, every '%s'" % (case, key))
        if refused_fields and key not in VALIDATED:
            print("note %s: %d '%s' fields refused with a marker" % (case, len(refused_fields), key))
    for key in VALIDATED & set(by_key):  # what is validated is refused, never rendered
        where = [fp for fp in by_key[key] if validated_at(fp)]
        if not where:
            continue
        p, _ = sw.merge_with(where[:1], False)
        check(
            p.returncode == 2, "%s: a marker in '%s' is refused at the boundary (exit %d)" % (case, key, p.returncode)
        )
    check(sw.seen > 50, "%s: markers were rendered, as text (%d times in %d merges)" % (case, sw.seen, sw.passes))


def t_escaping():
    sweep_case("cluster_bad")
    profile = {"profile": {"name": "p", "source": "s", "content": {}, "not_covered": ["one", "two"]}}
    sweep_case("steps_failed", extra_run=profile)
    # A baseline's own strings reach the page too (model, file, sources, units).
    d = fresh("bl")
    good = fresh("good-out")
    merge(os.path.join(FX, "cluster_good", "reports"), out=good)
    p = ga(["baseline", "--from", os.path.join(good, "summary.json"), "-o", os.path.join(d, "b.json")])
    b = load(os.path.join(d, "b.json"))
    for m in b["metrics"]:
        m["value"] = m["value"] * 2 if m["higher_is_better"] else m["value"] / 2  # every figure regresses
        m["unit"] = marker(900, True)
    b["model"], b["description"] = marker(901, True), marker(902, True)
    b["sources"][0]["title"] = marker(903, True)
    dump(os.path.join(d, "b.json"), b)
    out = fresh("bl-out")
    p = ga(
        [
            "merge",
            "--report-dir",
            os.path.join(FX, "cluster_bad", "reports"),
            "--out-dir",
            out,
            "--baseline",
            os.path.join(d, "b.json"),
        ]
    )
    check(p.returncode == 1, "a baseline with marked strings applies (exit %d %s)" % (p.returncode, p.stderr[:160]))
    if p.returncode == 1:
        sw = Sweep("cluster_bad")
        sw.check_outputs(out, "baseline strings", True, parse=False)


# ---- 3. no file clobbered ---------------------------------------------------------------------------------


def t_no_clobber():
    victim = os.path.join(fresh("victim"), "precious")
    with open(victim, "w") as f:
        f.write("precious\n")
    victim_dir = fresh("victim-dir")
    hf = os.path.join(WORK, "hostfile")
    with open(hf, "w") as f:
        f.write("localhost slots=2\n")
    for planted in ("log", "dir"):
        d = fresh("run-" + planted)
        if planted == "log":
            os.makedirs(os.path.join(d, "preflight"))
            os.symlink(victim, os.path.join(d, "preflight", "localhost.log"))
        else:
            os.symlink(victim_dir, os.path.join(d, "preflight"))
        p = ga(
            [
                "run",
                "--quick",
                "--hostfile",
                hf,
                "--only",
                "env_audit",
                "--report-dir",
                d,
                "--baseline",
                "none",
                "--preflight-timeout",
                "30",
            ],
            timeout=200,
        )
        check(
            open(victim).read() == "precious\n" and not os.listdir(victim_dir),
            "a %s planted at REPORTDIR/preflight%s: nothing written through it (exit %d)"
            % (
                "link" if planted == "log" else "directory link",
                "/localhost.log" if planted == "log" else "",
                p.returncode,
            ),
        )
        log = os.path.join(d, "preflight", "localhost.log")
        check(
            not os.path.islink(os.path.join(d, "preflight"))
            and os.path.isfile(log)
            and not os.path.islink(log)
            and "[NODE]" in open(log).read(),
            "the preflight wrote its own log in a directory of its own",
        )
        check(p.returncode == 0, "the run itself passes (%d)" % p.returncode)


# ---- 4. names validated, passed after -- -------------------------------------------------------------------


def t_node_names():
    for bad in ("--server=https://example.invalid", "-n", "../../etc/x", "a b", "x;reboot", ""):
        d = copy_case("cluster_bad", "host")
        j = load(os.path.join(d, "env_audit.json"))
        j["nodes"][0]["host"] = bad
        dump(os.path.join(d, "env_audit.json"), j)
        refused(merge(d), "a report naming host %r" % bad)
        d = copy_case("cluster_bad", "host")
        j = load(os.path.join(d, "gemm_flops.json"))
        j["findings"][-1]["host"] = bad
        dump(os.path.join(d, "gemm_flops.json"), j)
        refused(merge(d), "a finding naming host %r" % bad)
    # kubectl gets every node after "--".
    p = merge(os.path.join(FX, "cluster_bad", "reports"))
    rec, fake = os.path.join(WORK, "kubectl.log"), os.path.join(WORK, "kubectl")
    if os.path.exists(rec):
        os.unlink(rec)
    with open(fake, "w") as f:
        f.write(
            '#!/bin/sh\nfor a in "$@"; do printf "%s\\t" "$a"; done >> "$GA_KUBECTL_LOG"\necho >> "$GA_KUBECTL_LOG"\n'
        )
    os.chmod(fake, 0o755)
    r = subprocess.run(
        ["sh", os.path.join(p.out, "gpuaccept-k8s.sh")], env=env_of({"KUBECTL": fake, "GA_KUBECTL_LOG": rec})
    )
    calls = [l.rstrip("\t").split("\t") for l in open(rec).read().splitlines()] if os.path.exists(rec) else []
    hosts = {n["host"] for n in load(os.path.join(p.out, "summary.json"))["nodes"]}
    ok = bool(calls) and all(
        "--" in c
        and c.index("--") + 1 < len(c)
        and c[c.index("--") + 1] in hosts
        and not any(w in hosts for w in c[: c.index("--")])
        for c in calls
    )
    check(r.returncode == 0 and ok, "kubectl: every node name after '--' (%s)" % calls[:2])
    # Slurm: the node list comes from scontrol without a shell, after "--"; what it names must be node names.
    fakebin = fresh("fake-slurm")
    log = os.path.join(WORK, "scontrol.log")
    if os.path.exists(log):
        os.unlink(log)
    with open(os.path.join(fakebin, "scontrol"), "w") as f:
        f.write('#!/bin/sh\necho "$@" >> %s\necho node1\necho -- --evil\n' % log)
    with open(os.path.join(fakebin, "srun"), "w") as f:
        f.write("#!/bin/sh\nexit 1\n")
    for n in ("scontrol", "srun"):
        os.chmod(os.path.join(fakebin, n), 0o755)
    d = fresh("slurm-run")
    p = ga(
        ["run", "--quick", "--only", "env_audit", "--report-dir", d, "--baseline", "none", "--preflight-timeout", "10"],
        extra_env={"SLURM_JOB_ID": "77", "SLURM_JOB_NODELIST": "node[1-2]", "PATH": fakebin + ":" + os.environ["PATH"]},
        timeout=100,
    )
    args = open(log).read().split() if os.path.exists(log) else []
    check(args[:4] == ["show", "hostnames", "--", "node[1-2]"], "scontrol show hostnames -- LIST (%s)" % args)
    check(
        p.returncode != 0 and "--evil" in p.stderr and "not a node name" in p.stderr,
        "a name scontrol gives that is no node name stops the run (exit %d %s)" % (p.returncode, p.stderr[-200:]),
    )
    # node-check --drain / --label (deploy/slurm's HealthCheckProgram): a node named ALL, all, a host list or
    # an option is refused before scontrol or kubectl hears of it (issue 45, item 1)
    for bad, how in (("ALL", "--node"), ("all", "SLURMD_NODENAME"), ("n[1-9]", "--node"), ("-x", "NODE_NAME")):
        if os.path.exists(log):
            os.unlink(log)
        args = ["node-check", "--drain"] if how != "NODE_NAME" else ["node-check", "--label"]
        env = {"PATH": fakebin + ":" + os.environ["PATH"], "SLURMD_NODENAME": "node1"}
        if how == "--node":
            args += ["--node", bad]
        else:
            env[how] = bad
        with open(os.path.join(fakebin, "kubectl"), "w") as f:
            f.write('#!/bin/sh\necho "$@" >> %s\n' % log)
        os.chmod(os.path.join(fakebin, "kubectl"), 0o755)
        p = ga(args, extra_env=env, timeout=60)
        lines = p.stderr.strip().splitlines()
        check(
            p.returncode == 2 and len(lines) == 1 and "not a node name" in p.stderr and not os.path.exists(log),
            "node-check %s with the node named %r by %s: exit 2, one line, no scontrol or kubectl (%d %s)"
            % (args[1], bad, how, p.returncode, p.stderr.strip()[:200]),
        )


# ---- 5. secrets ------------------------------------------------------------------------------------------

SECRETS = {
    "NCCL_COMM_ID": ("eyJhbGciOiJIUzI1NiJ9.eyJ4IjoxfQ.SIGX", ["SIGX", "eyJ4IjoxfQ"]),
    "UCX_PROXY": ("https://user:pa/ss@mirror.example.com/repo", ["pa/ss"]),
    "NCCL_NET_OFI_CONF": ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ["wJalrXUtnFEMI"]),
    "CUDA_DOWNLOAD": ("https://example.com/f?token=EXAMPLEtok3n123&sig=EXAMPLEs1g", ["EXAMPLEtok3n123", "EXAMPLEs1g"]),
    "NVIDIA_LLM": ("sk-proj-EXAMPLEa1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ", ["EXAMPLEa1B2c3D4e5F6g7H8"]),
    "NCCL_MAPS": ("AIzaSyD-EXAMPLE_abcdefghijklmnopqrstuv", ["SyD-EXAMPLE_abcdefghijklmnopqrstuv"]),
}


def t_secrets():
    d = fresh("secrets")
    p = mpi(
        2,
        "env_audit",
        ["--report-dir", d, "--run-id", "secrets"],
        extra_env={k: v for k, (v, _) in SECRETS.items()},
        x=list(SECRETS),
    )
    check(p.returncode in (0, 1), "env_audit runs with the secrets in its environment (%d)" % p.returncode)
    p = merge(d)
    files = [os.path.join(d, "env_audit.json")] + [
        os.path.join(p.out, f) for f in ("summary.json", "summary.md", "summary.html")
    ]
    for name, (_, hidden) in SECRETS.items():
        leaked = [os.path.basename(f) for f in files if os.path.exists(f) and any(h in open(f).read() for h in hidden)]
        check(not leaked, "%s: its secret is in no report or summary (%s)" % (name, leaked))
    env = load(os.path.join(d, "env_audit.json"))["nodes"][0]["ranks"][0]["environment"]
    check(all(k in env and "<redacted>" in env[k] for k in SECRETS), "each variable is recorded, redacted")


# ---- 6, 8. compare and the schemas ---------------------------------------------------------------------------


def t_compare():
    good = fresh("cmp-good")
    merge(os.path.join(FX, "cluster_good", "reports"), out=good)
    old = os.path.join(good, "summary.json")
    s = load(old)
    m = next(x for x in s["metrics"] if isinstance(x.get("value"), (int, float)) and x["value"] > 0)
    hidden = copy.deepcopy(s)
    for x in hidden["metrics"]:
        if x == m:
            x["value"] = m["value"] / 2 if m["higher_is_better"] else m["value"] * 2
    hidden["metrics"].append(copy.deepcopy(m))  # the old value again, last: it used to win
    new = os.path.join(WORK, "hidden.json")
    dump(new, hidden)
    p = ga(["compare", old, new])
    refused(p, "compare: NEW hides a regression behind the metric given twice", verb="compare")
    no_dir = copy.deepcopy(s)
    no_dir["metrics"][0].pop("higher_is_better")
    path = os.path.join(WORK, "nodir.json")
    dump(path, no_dir)
    refused(ga(["compare", path, old]), "compare: an OLD metric without higher_is_better", verb="compare")
    turned = copy.deepcopy(s)
    turned["metrics"][0]["higher_is_better"] = not turned["metrics"][0]["higher_is_better"]
    dump(path, turned)
    refused(ga(["compare", old, path]), "compare: a metric better the other way in NEW", verb="compare")
    check(ga(["compare", old, old]).returncode == 0, "compare of a summary with itself still passes")


def t_schema_versions():
    good = fresh("sv-good")
    merge(os.path.join(FX, "cluster_good", "reports"), out=good)
    base = os.path.join(WORK, "b.json")
    p = ga(["baseline", "--from", os.path.join(good, "summary.json"), "-o", base])
    b = load(base)
    check(b.get("schema_version") == 1, "baseline --from writes schema_version 1")
    for what, v in (("0", 0), ("2", 2), ("99", 99), ('"1"', "1"), ("1.5", 1.5), ("missing", None)):
        bb = copy.deepcopy(b)
        if v is None:
            bb.pop("schema_version")
        else:
            bb["schema_version"] = v
        path = os.path.join(WORK, "bv.json")
        dump(path, bb)
        p = ga(
            [
                "merge",
                "--report-dir",
                os.path.join(FX, "cluster_good", "reports"),
                "--out-dir",
                fresh("bv-out"),
                "--baseline",
                path,
            ]
        )
        check(
            p.returncode == 2 and "schema_version" in p.stderr,
            "--baseline with schema_version %s: exit 2 (%d %s)" % (what, p.returncode, p.stderr.strip()[:120]),
        )
    bb = copy.deepcopy(b)
    bb["metrics"].append(dict(bb["metrics"][0], value=bb["metrics"][0]["value"] / 2))
    dump(os.path.join(WORK, "bdup.json"), bb)
    p = ga(
        [
            "merge",
            "--report-dir",
            os.path.join(FX, "cluster_good", "reports"),
            "--out-dir",
            fresh("bd-out"),
            "--baseline",
            os.path.join(WORK, "bdup.json"),
        ]
    )
    check(
        p.returncode == 2 and "same figure" in p.stderr,
        "a baseline giving one figure twice: exit 2 (%d %s)" % (p.returncode, p.stderr.strip()[:160]),
    )
    # issue 45, item 4: a field of the wrong type is refused wherever it is, never skipped
    for what, edit_fn in (
        ("profile 7", lambda j: j.update(profile=7)),
        ("profile []", lambda j: j.update(profile=[])),
        ("model {}", lambda j: j.update(model={})),
        ("sources 3", lambda j: j.update(sources=3)),
        ("a source without an id", lambda j: j.update(sources=[{"title": "t"}])),
        ("a metric's unit 5", lambda j: j["metrics"][0].update(unit=5)),
        ('a metric\'s world_size "8"', lambda j: j["metrics"][0].update(world_size="8")),
    ):
        bb = copy.deepcopy(b)
        edit_fn(bb)
        dump(os.path.join(WORK, "btype.json"), bb)
        p = ga(
            [
                "merge",
                "--report-dir",
                os.path.join(FX, "cluster_good", "reports"),
                "--out-dir",
                fresh("bt-out"),
                "--baseline",
                os.path.join(WORK, "btype.json"),
            ]
        )
        check(
            p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "baseline" in p.stderr,
            "a baseline with %s: exit 2, one line (%d %s)" % (what, p.returncode, p.stderr.strip()[:160]),
        )
    # 100,000 figures are checked in linear time: each against the figures before it took an hour
    bb = copy.deepcopy(b)
    bb["metrics"] = [dict(b["metrics"][0], name="figure_%d" % k) for k in range(100000)]
    dump(os.path.join(WORK, "bbig.json"), bb)
    for what, metrics in (
        ("100,000 figures", bb["metrics"]),
        ("100,000 figures, the last a repeat", bb["metrics"] + [bb["metrics"][0]]),
    ):
        dump(os.path.join(WORK, "bbig.json"), dict(bb, metrics=metrics))
        started = time.monotonic()
        p = ga(
            [
                "merge",
                "--report-dir",
                os.path.join(FX, "cluster_good", "reports"),
                "--out-dir",
                fresh("bbig-out"),
                "--baseline",
                os.path.join(WORK, "bbig.json"),
            ],
            timeout=60,
        )
        took = time.monotonic() - started
        print("benchmark: merge with a baseline of %s: %.2f s" % (what, took))
        want = 2 if "repeat" in what else 0
        check(
            p.returncode == want and took < 10,
            "a baseline of %s: exit %d in %.1f s (%d, under 10 s) %s"
            % (what, want, took, p.returncode, p.stderr.strip()[:160]),
        )
    prof = json.loads(ga(["run", "--profile", "quick", "--dump-profile"]).stdout)
    for what, v in (("1.5", 1.5), ('"1"', "1"), ("2", 2)):
        pp = dict(prof, schema_version=v)
        path = os.path.join(WORK, "prof.json")
        dump(path, pp)
        p = ga(["run", "--profile", path, "--dry-run", "--report-dir", os.path.join(WORK, "dry")])
        check(
            p.returncode == 2 and "schema_version" in p.stderr,
            "--profile with schema_version %s: exit 2 (%d)" % (what, p.returncode),
        )


# ---- 9. hostfiles --------------------------------------------------------------------------------------------


def t_hostfile():
    for text in (
        "localhost slots=2 max_slots=x",
        "localhost slots=2 max_slots=1",
        "localhost slots=x",
        "localhost slots=2 slots=3",
        "localhost frobnicate=1",
        "-np 4",
        "../../tmp/x slots=1",
        "localhost slots=2\nuser@localhost slots=2",
    ):
        hf = os.path.join(WORK, "hf")
        with open(hf, "w") as f:
            f.write(text + "\n")
        p = ga(["run", "--hostfile", hf, "--dry-run", "--only", "env_audit", "--report-dir", os.path.join(WORK, "d")])
        lines = p.stderr.strip().splitlines()
        check(
            p.returncode == 2 and len(lines) == 1 and "hostfile" in lines[0],
            "hostfile %r: exit 2 up front, one line (%d %s)" % (text, p.returncode, p.stderr.strip()[:160]),
        )
    for text in ("localhost slots=2 max_slots=4", "localhost max-slots=4 count=2", "localhost", "# only\nlocalhost"):
        with open(hf, "w") as f:
            f.write(text + "\n")
        p = ga(["run", "--hostfile", hf, "--dry-run", "--only", "env_audit", "--report-dir", os.path.join(WORK, "d")])
        check(
            p.returncode == 0,
            "hostfile %r as mpirun reads it: accepted (%d %s)" % (text, p.returncode, p.stderr.strip()[:120]),
        )


# ---- 10. command-line gaps -----------------------------------------------------------------------------------


def program_lines(stderr):
    """stderr without the launcher's boxed notices (between lines of dashes)."""
    out, boxed = [], False
    for line in stderr.splitlines():
        if re.fullmatch(r"-{20,}", line.strip()):
            boxed = not boxed
        elif not boxed and line.strip():
            out.append(line)
    return out


def one_line_2(p, what):
    lines = program_lines(p.stderr)
    return check(p.returncode == 2 and len(lines) == 1, "%s: exit 2, one line (%d, %s)" % (what, p.returncode, lines))


def t_cli():
    one_line_2(ga(["node-check", "--bogus", "x"]), "gpuaccept node-check --bogus x")
    check(ga(["node-check"]).returncode == 0, "gpuaccept node-check still answers")
    d = fresh("cli")
    one_line_2(
        mpi(1, "gemm_flops", ["--interval", "2", "--max-drop", "5", "--burn-dtype", "fp32", "--report-dir", d]),
        "gemm_flops --interval --max-drop --burn-dtype without --duration",
    )
    one_line_2(mpi(1, "node_health", ["--kernel-log", d, "--report-dir", d]), "node_health --kernel-log DIRECTORY")
    good = fresh("cli-good")
    merge(os.path.join(FX, "cluster_good", "reports"), out=good)
    summary = os.path.join(good, "summary.json")
    for args, what in (
        (["baseline", "--from", summary, "-o", ""], "baseline -o ''"),
        (["baseline", "--from", summary, "-o", d], "baseline -o DIRECTORY"),
        (["compare", "--json", "", summary, summary], "compare --json ''"),
        (["compare", "--json", "/nonexistent-dir/x.json", summary, summary], "compare --json in no directory"),
    ):
        p = ga(args)
        one_line_2(p, what)
        check(p.stdout == "", "%s: refused before doing the work (no output)" % what)
    idx = fresh("fifo")
    os.mkfifo(os.path.join(idx, "train-images-idx3-ubyte"))
    os.mkfifo(os.path.join(idx, "train-labels-idx1-ubyte"))
    p = mpi(1, "ddp_smoke", ["--data", "idx:" + idx, "--timeout", "30", "--report-dir", d], timeout=100)
    one_line_2(p, "ddp_smoke --data idx:FIFO")
    check(p.wall < 15, "... at once, not at --timeout (%.1f s)" % p.wall)


# ---- 11. leftovers and limits ----------------------------------------------------------------------------------


def t_leftovers():
    d = fresh("stale")
    for name in (".env_audit.json.AbC123", ".gemm_flops.json.XyZ789"):
        with open(os.path.join(d, name), "w") as f:
            f.write("{half")
    p = mpi(1, "env_audit", ["--report-dir", d])
    check(
        p.returncode == 0
        and not os.path.exists(os.path.join(d, ".env_audit.json.AbC123"))
        and os.path.exists(os.path.join(d, ".gemm_flops.json.XyZ789")),
        "the next env_audit write removes the .env_audit.json.XXXXXX a killed write left, only it (%s)"
        % sorted(os.listdir(d)),
    )
    # A rank killed after rank 0 wrote its report, at the final agreement.
    shim = os.environ.get("GA_FAULT_SHIM", "")
    d = fresh("killed")
    p = mpi(
        2,
        "env_audit",
        ["--report-dir", d, "--run-id", "killed"],
        x=["LD_PRELOAD=" + shim, "GA_TEST_KILL_AT_END_RANK=1"],
    )
    check(os.path.exists(shim) and p.returncode != 0, "rank 1 killed at the end: the job fails (%d)" % p.returncode)
    check(not os.path.exists(os.path.join(d, "env_audit.json")), "no env_audit.json is left behind")
    m = merge(d)
    check(
        m.returncode != 0 and "[RESULT] SUCCESS" not in m.stdout,
        "a later merge without the run record reads no pass (%d)" % m.returncode,
    )
    # A report so large its summary could not be read back.
    d = copy_case("cluster_bad", "big")
    j = load(os.path.join(d, "gemm_flops.json"))
    f0 = j["findings"][-1]
    j["findings"] += [dict(f0, message="x" * 1000 + str(i)) for i in range(38000)]
    with open(os.path.join(d, "gemm_flops.json"), "w") as f:
        json.dump(j, f, separators=(",", ":"))
    size = os.path.getsize(os.path.join(d, "gemm_flops.json"))
    p = merge(d)
    refused(p, "a %.0f MiB report whose summary would pass 64 MiB" % (size / 2**20))
    # --args and profiles cannot set what the run gives every step.
    for words in (
        "--report-dir /tmp/elsewhere",
        "--run-id other",
        "--timeout 100000",
        "--timeout=5",
        "--time 5",
        "--report-d=/tmp/x",
    ):
        p = ga(
            [
                "run",
                "--dry-run",
                "--only",
                "env_audit",
                "--args",
                "env_audit=" + words,
                "--report-dir",
                os.path.join(WORK, "dry"),
            ]
        )
        check(
            p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1,
            "--args env_audit='%s': exit 2 (%d %s)" % (words, p.returncode, p.stderr.strip()[:120]),
        )
    prof = json.loads(ga(["run", "--profile", "quick", "--dump-profile"]).stdout)
    prof["steps"]["env_audit"] = ["--timeout", "99999"]
    dump(os.path.join(WORK, "owned.json"), prof)
    p = ga(["run", "--profile", os.path.join(WORK, "owned.json"), "--dry-run", "--report-dir", os.path.join(WORK, "d")])
    check(p.returncode == 2, "a profile step setting --timeout: exit 2 (%d)" % p.returncode)


TESTS = {
    "report_rule": t_report_rule,
    "escaping": t_escaping,
    "no_clobber": t_no_clobber,
    "node_names": t_node_names,
    "secrets": t_secrets,
    "compare": t_compare,
    "schema_versions": t_schema_versions,
    "hostfile": t_hostfile,
    "cli": t_cli,
    "leftovers": t_leftovers,
}

if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    TESTS[TEST]()
    print("FAIL (%d)" % len(failures) if failures else "PASS")
    sys.exit(1 if failures else 0)
