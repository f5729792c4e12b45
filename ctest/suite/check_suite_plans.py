"""What a run would do, without running it: the profiles' commands and the dry run's estimates."""
import json
import os
import re
import time

from suite_helpers import PROGRAMS, run, load, fresh, hostfile, after_prog, WORK, check


def dry_commands(p):
    """program -> its command words as --dry-run prints them (the run id word dropped), shell-split."""
    import shlex

    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("[SUITE]   ") and not line.startswith("[SUITE]   ("):  # "(the {...} words are ...)"
            words = shlex.split(line[len("[SUITE]   ") :])
            i = words.index("--run-id")
            del words[i : i + 2]
            prog = next(os.path.basename(w) for w in words if os.path.basename(w) in PROGRAMS)
            out[prog] = words
    return out


def not_covered(p):
    return [l[len("[SUITE] not covered: ") :] for l in p.stdout.splitlines() if l.startswith("[SUITE] not covered: ")]


def t_profiles():
    """--profile, --dump-profile, --args and --dry-run: what each profile would run, and what is refused."""
    d = os.path.join(WORK, "never")
    nogpu = {"CUDA_VISIBLE_DEVICES": ""}
    dumped = {}
    for name in ("quick", "standard", "full"):
        p = run(["run", "--profile", name, "--dump-profile"])
        prof = json.loads(p.stdout) if p.returncode == 0 else {}
        check(
            prof.get("name") == name and prof.get("schema") == "gpuaccept-profile",
            "--profile %s --dump-profile prints the profile in the file format (%d)" % (name, p.returncode),
        )
        path = os.path.join(fresh("profile-" + name), name + ".json")
        with open(path, "w") as f:
            f.write(p.stdout)
        dumped[name] = path
        a = run(["run", "--profile", name, "--dry-run", "--report-dir", d], env=nogpu)
        b = run(["run", "--profile", path, "--dry-run", "--report-dir", d], env=nogpu)
        check(
            a.returncode == 0
            and b.returncode == 0
            and dry_commands(a) == dry_commands(b)
            and len(dry_commands(a)) == len(PROGRAMS),
            "%s: the dumped file, given with --profile FILE, runs the same commands as the built-in" % name,
        )
        check(
            "[SUITE] profile %s (built-in)" % name in a.stdout and "[SUITE] profile %s (%s)" % (name, path) in b.stdout,
            "%s: the dry run names the profile and where it came from" % name,
        )
        check(not os.path.exists(d), "%s: a dry run creates nothing" % name)
    q = run(["run", "--profile", "quick", "--dry-run", "--report-dir", d], env=nogpu)
    cmds = dry_commands(q)
    relative_warn = ("gemm_flops", "mem_bw")  # issue 32: the quick profile accepts nothing, so it fails on no peer
    check(
        all(
            after_prog(w, prog) == (["--quick", "--relative", "warn"] if prog in relative_warn else ["--quick"])
            and "--timeout" in w
            and w[w.index("--timeout") + 1] == "580"
            for prog, w in cmds.items()
        ),
        "quick: every program with --quick (gemm_flops and mem_bw with --relative warn), --timeout 580 (%s)" % cmds,
    )
    check(
        dry_commands(run(["run", "--quick", "--dry-run", "--report-dir", d], env=nogpu)) == cmds,
        "--quick is --profile quick",
    )
    check(
        "no burn: quick profile" in not_covered(q) and "no pairs isolation: quick profile" in not_covered(q),
        "quick: says it runs no burn and no pairs isolation (%s)" % not_covered(q),
    )
    check(
        all(
            any(l.startswith("relative only, as a warning: %s compares" % x) for l in not_covered(q))
            for x in ("gemm_flops", "mem_bw")
        )
        and "relative only, as a warning: ddp_smoke's straggler check" in not_covered(q),
        "quick: says which checks were relative only, and that they warn (%s)" % not_covered(q),
    )
    st = run(["run", "--dry-run", "--report-dir", d], env=nogpu)
    cmds = dry_commands(st)
    ar = after_prog(cmds.get("allreduce_bw", ["allreduce_bw"]), "allreduce_bw")
    check("[SUITE] profile standard (built-in)" in st.stdout, "the default profile is standard")
    check(
        ar[ar.index("--pattern") + 1 : ar.index("--pattern") + 4] == ["world,node,pairs", "--rounds", "all"]
        if "--pattern" in ar
        else False,
        "standard: allreduce_bw --pattern world,node,pairs --rounds all (%s)" % ar,
    )
    check(not any("--quick" in w or "--duration" in w for w in cmds.values()), "standard: no --quick, no burn")
    # one rank (a one-GPU machine, issue 30): no pairs to isolate, said, instead of allreduce_bw's usage error
    one = run(["run", "--np", "1", "--dry-run", "--report-dir", d], env=nogpu)
    ar1 = after_prog(dry_commands(one).get("allreduce_bw", ["allreduce_bw"]), "allreduce_bw")
    check(
        one.returncode == 0 and ar1[ar1.index("--pattern") + 1 : ar1.index("--pattern") + 2] == ["world,node"]
        if "--pattern" in ar1
        else False,
        "standard, one rank: allreduce_bw --pattern world,node (%s)" % ar1,
    )
    check(
        "no pairs isolation for allreduce_bw: one rank, nothing to pair it with" in not_covered(one),
        "standard, one rank: says that no pairs were isolated (%s)" % not_covered(one),
    )
    check(
        any(l.startswith("no SKU thresholds: GPU model unknown") for l in not_covered(st))
        and not any("--min-busbw" in w or "--min-efficiency" in w for w in cmds.values()),
        "standard without a GPU: no invented thresholds, and it says why (%s)" % not_covered(st),
    )
    check(
        any(l.startswith("no --expect-gpus: ") for l in not_covered(st))
        and not any("--expect-gpus" in w for w in cmds.values()),
        "standard, no hostfile, no GPU: no --expect-gpus, and it says why",
    )
    check(
        all(
            any(l.startswith(x) for l in not_covered(st))
            for x in (
                "relative only: gemm_flops",
                "relative only: mem_bw",
                "relative only: allreduce_bw's per-node collectives",
                "relative only, as a warning: ddp_smoke",
            )
        ),
        "standard without a SKU: gemm_flops and mem_bw, the node and pairs patterns and the straggler check are "
        "said to be relative only (%s)" % not_covered(st),
    )
    # The SKU thresholds, from a baseline file: the figure less its tolerance, and a percentage of the peak.
    bdir = os.environ["GPUACCEPT_BASELINE_DIR"]
    h100 = load(os.path.join(bdir, "h100-sxm.json"))
    names = {"allreduce_bw": "busbw_at_max", "gemm_flops": "tflops_bf16", "mem_bw": "GBps_device_copy"}
    fig = {m["program"]: m for m in h100["metrics"] if names.get(m["program"]) == m["name"]}
    p2p = [m for m in h100["metrics"] if m["name"] == "GBps_p2p_pair"][0]
    tol = h100["tolerance_pct"] / 100
    p = run(
        ["run", "--dry-run", "--np", "8", "--baseline", os.path.join(bdir, "h100-sxm.json"), "--report-dir", d],
        env=nogpu,
    )
    cmds = dry_commands(p)

    def opt(prog, name):
        w = after_prog(cmds[prog], prog)
        return float(w[w.index(name) + 1].rstrip("%")) if name in w else None

    # exactly, not rounded (issue 26: 0.6376 was written 0.6)
    check(
        opt("allreduce_bw", "--min-busbw") == fig["allreduce_bw"]["value"] * (1 - tol),
        "standard, H100 baseline, 8 ranks: --min-busbw is the baseline busbw less 10%% (%s)"
        % opt("allreduce_bw", "--min-busbw"),
    )
    for prog in ("gemm_flops", "mem_bw"):
        want = 100 * fig[prog]["value"] * (1 - tol) / fig[prog]["peak"]
        check(
            opt(prog, "--min-efficiency") == want,
            "%s --min-efficiency %s%% of the peak (%s)" % (prog, want, opt(prog, "--min-efficiency")),
        )
    # issue 46: one node of 8 GPUs: mem_bw's GPU-pair matrix, each pair against its node's own; no floor while
    # the SKU's per-pair figure is an estimate (an unmeasured figure cannot fail a node)
    check(
        p2p.get("estimate") is True
        and "--p2p" in after_prog(cmds["mem_bw"], "mem_bw")
        and "--min-p2p" not in after_prog(cmds["mem_bw"], "mem_bw"),
        "standard, 8 ranks: mem_bw --p2p without --min-p2p: %s" % after_prog(cmds["mem_bw"], "mem_bw"),
    )
    p = run(
        ["run", "--dry-run", "--np", "2", "--baseline", os.path.join(bdir, "h100-sxm.json"), "--report-dir", d],
        env=nogpu,
    )
    check(
        "--min-busbw" not in " ".join(dry_commands(p)["allreduce_bw"])
        and "no --min-busbw for allreduce_bw: the baseline figure allreduce_bw/busbw_at_max holds for 8 ranks, "
        "this run has 2" in not_covered(p),
        "an 8-GPU busbw is no threshold for 2 ranks: left out, and said (%s)" % not_covered(p),
    )
    f = run(["run", "--profile", "full", "--burn", "120", "--dry-run", "--report-dir", d], env=nogpu)
    g = after_prog(dry_commands(f)["gemm_flops"], "gemm_flops")
    check(g[-2:] == ["--duration", "120"], "full --burn 120: gemm_flops --duration 120 (%s)" % g)
    check(
        "-e" not in after_prog(dry_commands(f)["allreduce_bw"], "allreduce_bw")
        and "no -e 8G for allreduce_bw: no GPU (host path)" in not_covered(f),
        "full on the host path: no 8G sweep, and it says so",
    )
    f = run(["run", "--profile", "full", "--dry-run", "--report-dir", d], env={"CUDA_VISIBLE_DEVICES": "0,1"})
    check(
        after_prog(dry_commands(f)["allreduce_bw"], "allreduce_bw")[-2:] == ["-e", "8G"]
        and after_prog(dry_commands(f)["gemm_flops"], "gemm_flops") == ["--datatype", "bf16", "--duration", "600"]
        and after_prog(dry_commands(f)["env_audit"], "env_audit")[-2:] == ["--expect-gpus", "2"],
        "full with 2 GPUs: -e 8G, a 600 s bf16 burn, --expect-gpus 2",
    )
    # --args: split like a shell, no expansion, after the profile's arguments.
    # (words ddp_smoke accepts: every step's arguments are parsed before anything runs, issue 41 item 6)
    words = 'ddp_smoke=--steps 3 --data \'idx:a b\' --data "idx:c\\"d" --data idx:$HOME'
    p = run(
        ["run", "--dry-run", "--quick", "--report-dir", d, "--args", words, "--args", "ddp_smoke=--lr 0.1"], env=nogpu
    )
    check(
        after_prog(dry_commands(p)["ddp_smoke"], "ddp_smoke")
        == ["--quick", "--steps", "3", "--data", "idx:a b", "--data", 'idx:c"d', "--data", "idx:$HOME", "--lr", "0.1"],
        "--args: quotes, escapes, no expansion, repeatable, after the profile's (%s)"
        % after_prog(dry_commands(p)["ddp_smoke"], "ddp_smoke"),
    )
    # Refused with exit 2 and one line, before anything runs.
    bad = {
        "unknown key": {"frob": 1},
        "unknown program": {"steps": {"nccl_tests": []}},
        "non-string argument": {"steps": {"mem_bw": [3]}},
        "unknown placeholder": {"steps": {"mem_bw": ["{gpus}"]}},
        "placeholder without its parameter": {"steps": {"mem_bw": ["{sku_min}"]}},
        "schema": {"schema": "gpuaccept-baseline"},
        "no steps": {"steps": {}},
        "bad step timeout": {"step_timeout_s": 0},
    }
    base = load(dumped["standard"])
    for what, edit_ in bad.items():
        prof = dict(base)
        prof.update(edit_)
        path = os.path.join(WORK, "bad-profile.json")
        with open(path, "w") as fh:
            json.dump(prof, fh)
        p = run(["run", "--profile", path, "--dry-run", "--report-dir", d])
        check(
            p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "[SUITE] step" not in p.stdout,
            "profile with %s: exit 2, one line (%d, %r)" % (what, p.returncode, p.stderr.strip()),
        )
    with open(os.path.join(WORK, "not-json.json"), "w") as fh:
        fh.write("node_health: --expect-gpus 8\n")
    for args, what in (
        (["--profile", os.path.join(WORK, "not-json.json")], "a profile that is not JSON"),
        (["--profile", "medium"], "an unknown profile name"),
        (["--args", "nccl_tests=-b 8"], "--args for an unknown program"),
        (["--args", "ddp_smoke"], "--args without ="),
        (["--args", "ddp_smoke=--tag 'a b"], "--args with an unterminated quote"),
        (["--burn", "0"], "--burn 0"),
    ):
        p = run(["run", "--dry-run", "--report-dir", d] + args)
        check(
            p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1,
            "%s: exit 2, one line (%d, %r)" % (what, p.returncode, p.stderr.strip()),
        )


EST_LINE = re.compile(r"^\[SUITE\] (\w+) estimate: (\d+) s fault-free, (\d+) s with one slow node \(model: (.+)\)$")


def estimates(p):
    """program -> (fault-free s, slow-node s, model) from a dry run's estimate lines."""
    return {
        m.group(1): (int(m.group(2)), int(m.group(3)), m.group(4))
        for m in map(EST_LINE.match, p.stdout.splitlines())
        if m
    }


def t_estimate():
    """Issue 24 item 6: --dry-run on 512 generated nodes x 8 GPUs (H100 baseline) prints each step's estimate,
    fault-free and with one slow node; allreduce_bw's slow-node estimate stays within 3x the fault-free one; with
    the check on the GPU (issue 44) the whole plan of --rounds all fits the step's limit: every pair, nothing cut."""
    d = fresh("estimate")
    # IP literals resolve without DNS: the dry run checks the hostfile, not the hosts
    hosts = hostfile(d, "".join("10.%d.%d.1 slots=8\n" % (i // 250, i % 250) for i in range(512)))
    h100 = os.path.join(os.environ["GPUACCEPT_BASELINE_DIR"], "h100-sxm.json")
    p = run(
        ["run", "--dry-run", "--hostfile", hosts, "--baseline", h100, "--report-dir", os.path.join(d, "r")], timeout=60
    )
    print(p.stdout[-6000:], p.stderr[-1000:])
    check(p.returncode == 0, "the dry run on 512 nodes exits 0 (%d)" % p.returncode)
    est = estimates(p)
    check(sorted(est) == sorted(PROGRAMS), "every step has its estimate line (%s)" % sorted(est))
    check(
        all(0 < ff and 0 < slow and model for ff, slow, model in est.values()),
        "each estimate is positive and states its model",
    )
    ff, slow, model = est.get("allreduce_bw", (0, 0, ""))
    check(
        0 < slow <= 3 * ff, "allreduce_bw: one slow node's estimate %d s is within 3x the fault-free %d s" % (slow, ff)
    )
    check(
        "busbw" in model and "NCCL init" in model and "60x slower" in model,
        "allreduce_bw's model names its figures (%s)" % model[:200],
    )
    limit = 1800
    check(ff <= limit, "the plan's fault-free estimate %d s fits the step's limit %d s" % (ff, limit))
    note = re.search(
        r"^\[SUITE\] allreduce_bw estimate: pairs: (\d+) of (\d+) pairs tested \((\d+) of (\d+) rounds.*"
        r"--rounds all is (\d+) rounds, (\d+) s of pairs; --rounds 3: (\d+) s of pairs",
        p.stdout,
        re.M,
    )
    check(note is not None, "the pairs' coverage and the cost of --rounds all and --rounds 3 are printed")
    if note:
        tested, total, ran, asked, all_rounds, all_s, three_s = map(int, note.groups())
        check(
            total == 512 * 511 // 2 and asked == all_rounds == ran == 511 and tested == total,
            "coverage: every pair, %d of %d pairs, %d of %d rounds of 256 pairs" % (tested, total, ran, asked),
        )
        check(
            all_s <= limit and three_s * 10 < all_s,
            "--rounds all needs %d s of pairs, inside the limit (the check on the GPU, issue 44); --rounds 3 %d s"
            % (all_s, three_s),
        )
        check("cut: pairs" not in p.stdout, "the whole plan fits the limit: no round of pairs is cut")
    total = re.search(
        r"^\[SUITE\] estimate: total (\d+) s fault-free, (\d+) s with one slow node, for 512 nodes x 8 "
        r"ranks, GPU paths",
        p.stdout,
        re.M,
    )
    check(
        total is not None and abs(int(total.group(1)) - sum(v[0] for v in est.values())) <= len(est),
        "the total is the sum of the steps' estimates (each rounded to a second)",
    )
    # --rounds 3 covers every node in every round: nothing cut;
    p = run(
        [
            "run",
            "--dry-run",
            "--hostfile",
            hosts,
            "--baseline",
            h100,
            "--only",
            "allreduce_bw",
            "--args",
            "allreduce_bw=--rounds 3",
            "--report-dir",
            os.path.join(d, "r"),
        ],
        timeout=60,
    )
    # and, fewer than every round, the ring neighbours' 2 rounds first (the pairs the world's ring used): 512
    # pairs, then 3 circle rounds of 256 less the ring neighbours they hold
    three = re.search(r"allreduce_bw estimate: pairs: (\d+) of 130816 pairs tested \(5 of 5 rounds", p.stdout)
    check(
        three is not None
        and 3 * 256 < int(three.group(1)) < 512 + 3 * 256
        and "ring neighbours: 512 of 512 tested" in p.stdout
        and "cut:" not in p.stdout,
        "--rounds 3: the ring neighbours' 2 rounds and 3 of the circle, every ring neighbour, nothing cut",
    )
    # the host paths without a baseline: still an estimate, and it says which paths it assumed
    p = run(
        [
            "run",
            "--dry-run",
            "--hostfile",
            hosts,
            "--baseline",
            "none",
            "--only",
            "allreduce_bw",
            "--report-dir",
            os.path.join(d, "r"),
        ],
        timeout=60,
    )
    check(
        "allreduce_bw" in estimates(p) and "host paths (no SKU baseline)" in p.stdout,
        "without a SKU the estimate is of the host paths, and says so",
    )
    # 100,000 ranks on this machine (issue 45, item 6): the pairs counted past an int's range, not wrapped round
    # (UBSan's signed overflow in the ASan build), and the plan of 99,999 rounds made in seconds
    started = time.monotonic()
    p = run(
        ["run", "--dry-run", "--np", "100000", "--only", "allreduce_bw", "--report-dir", os.path.join(d, "r")],
        timeout=60,
    )
    took = time.monotonic() - started
    print("benchmark: dry run of 100000 ranks in %.2f s" % took)
    check(
        p.returncode == 0 and "of 4999950000 pairs tested (" in p.stdout and "runtime error" not in p.stderr,
        "--np 100000: 4999950000 pairs in all (%d, %s)" % (p.returncode, p.stderr.strip()[-300:]),
    )
    check(took < 30, "--np 100000 planned in %.1f s, under 30 s" % took)
