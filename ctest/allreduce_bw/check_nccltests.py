#!/usr/bin/env python3
"""Runs allreduce_bw (under mpiexec) and checks that its stdout is nccl-tests 2.19's, line by line, that the
parsers sites wrap around nccl-tests read it, and that its -J file has the fields nccl-tests'
tools/analyze_perf_json.py reads.

usage: check_nccltests.py --ranks N --json PATH [checks] -- COMMAND...

Every line of the nccl-tests block is parsed by its fixed columns and printed again with the format strings
of nccl-tests' src/util.cu (writeDeviceReport, writeResultHeader, writeBenchmarkLine*, writeResultFooter),
transcribed below; the output must be identical, byte for byte. The figures themselves are checked against
the -J document, and the -J document against its own per-iteration rows."""
import argparse
import json
import math
import os
import re
import subprocess
import sys

# ---- nccl-tests' format strings (src/util.cu, 2.19), as Python %-formats ----
VERSION = "# nccl-tests version %s nccl-headers=%d nccl-library=%d"
STARTING = "# Collective test starting: %s"
SETTINGS = (
    "# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d agg iters: %d "
    "validation: %d graph: %d unalign: %d"
)
BLOCKING = {
    1: "# Blocking Enabled: wait and barrier after each inner iteration (-m) ",
    2: "# Blocking Enabled: wait after each inner iteration (-m), no barrier ",
    3: "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier ",
}
DEVICE = "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s"
HEAD1 = "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
HEAD2 = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
HEAD1_I = (
    "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)                                "
    "in-place (+ per-iteration)"
)
HEAD2_I = (
    "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  " "%7s %*s"
)
PREAMBLE = "%12d  %12d  %8s  %6s  %6s"
BODY = "  %7s  %6s  %6s  %6s"
BODY_NA = "  %7s  %6s  %6s    N/A"
PER_ITER = "  %7s  %7s  %7s  %7s"
STAMP = "%21s"
FOOT_OOB = "# %-20s : %d %s"
FOOT_BW = "# %-20s : %s %s"


def star(fmt, *args):
    """C's %*s: Python's % takes the width from the arguments too."""
    return fmt % args


def float_str(v, width):
    """nccl-tests' getFloatStr."""
    for f in ("%*.2f", "%*.1f", "%*.0f"):
        s = f % (width, v)
        if len(s) <= width:
            return s
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, v)


def g6(v):
    """C's %6g."""
    return "%6g" % v


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def expect(got, want, what):
    if got != want:
        fail(f"{what}:\n  got  {got!r}\n  want {want!r}")


def header_lines(per_iter, cputime, stamps, slowest):
    t = "cputime" if cputime else "time"
    pad, label, units = (19, "timestamp", "%Y-%m-%d %H:%M:%S") if stamps else (0, "", "")
    extra = " slowest rank (max time)" if slowest else ""
    if per_iter:
        return [
            "#",
            HEAD1_I % ("", "", "", "", ""),
            star(
                HEAD2_I,
                "size",
                "count",
                "type",
                "redop",
                "root",
                t,
                "algbw",
                "busbw",
                "#wrong",
                "i_min",
                "i_max",
                "i_p99",
                "i_cv%",
                t,
                "algbw",
                "busbw",
                "#wrong",
                "i_min",
                "i_max",
                "i_p99",
                "i_cv%",
                pad,
                label,
            )
            + extra,
            star(
                HEAD2_I,
                "(B)",
                "(elements)",
                "",
                "",
                "",
                "(us)",
                "(GB/s)",
                "(GB/s)",
                "",
                "(us)",
                "(us)",
                "(us)",
                "(%)",
                "(us)",
                "(GB/s)",
                "(GB/s)",
                "",
                "(us)",
                "(us)",
                "(us)",
                "(%)",
                pad,
                units,
            ),
        ]
    return [
        "#",
        HEAD1 % ("", "", "", "", ""),
        star(
            HEAD2,
            "size",
            "count",
            "type",
            "redop",
            "root",
            t,
            "algbw",
            "busbw",
            "#wrong",
            t,
            "algbw",
            "busbw",
            "#wrong",
            pad,
            label,
        )
        + extra,
        star(
            HEAD2,
            "(B)",
            "(elements)",
            "",
            "",
            "",
            "(us)",
            "(GB/s)",
            "(GB/s)",
            "",
            "(us)",
            "(GB/s)",
            "(GB/s)",
            "",
            pad,
            units,
        ),
    ]


def render_body(cols):
    """One placement from its parsed columns [time, algbw, busbw, wrong]."""
    t, alg, bus, wrong = cols
    if wrong.strip() == "N/A":
        return BODY_NA % (float_str(float(t), 7), float_str(float(alg), 6), float_str(float(bus), 6))
    return BODY % (float_str(float(t), 7), float_str(float(alg), 6), float_str(float(bus), 6), g6(float(wrong)))


def check_data_line(line, per_iter, stamps, slowest):
    """Cuts the line at nccl-tests' column widths, prints it again with nccl-tests' formats; returns the
    fields (size, count, type, redop, root, [placement columns])."""
    pos = 0

    def take(width, sep=2):
        nonlocal pos
        pos += sep
        s = line[pos : pos + width]
        pos += width
        return s

    pos = -2
    size, count, typ, redop, root = take(12), take(12), take(8), take(6), take(6)
    out = PREAMBLE % (int(size), int(count), typ.strip(), redop.strip(), root)
    places = []
    for _ in range(2):
        cols = [take(7), take(6), take(6), take(6)]
        out += render_body(cols)
        it = None
        if per_iter:
            it = [take(7) for _ in range(4)]
            out += PER_ITER % tuple(float_str(float(x), 7) for x in it)
        places.append((cols, it))
    if stamps:
        out += STAMP % line[pos : pos + 21].strip()
        pos += 21
    if slowest:
        m = re.fullmatch(r"  rank \d+ \S+ \(\s*[0-9.e+]+ us\)", line[pos:])
        if not m:
            fail(f"--show-slowest suffix {line[pos:]!r}")
        out += line[pos:]
    expect(line, out, "table line")
    return int(size), int(count), typ.strip(), redop.strip(), int(root), places


def run_awk(program, text):
    p = subprocess.run(["awk", program], input=text, stdout=subprocess.PIPE, text=True, check=True)
    return p.stdout.splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--json", required=True, help="the -J path given in COMMAND (removed first)")
    ap.add_argument("--program", default="allreduce_bw", help="the name the run prints")
    ap.add_argument("--collective-type", default=None, help="expected type column of every line")
    ap.add_argument("--redop", default=None, help="expected redop column of every line")
    ap.add_argument("--lines", type=int, help="table lines expected")
    ap.add_argument("--op-order", help="comma-separated: the redop column runs through these in turn (-o all)")
    ap.add_argument("--expect-exit", type=int, default=0)
    ap.add_argument("--min-bw", type=float, default=-1, help="NCCL_TESTS_MIN_BW given to the run")
    ap.add_argument(
        "--split-mask",
        type=lambda v: int(v, 16),
        default=0,
        help="NCCL_TESTS_SPLIT_MASK given to the run: the Group column is rank & mask",
    )
    ap.add_argument(
        "--preexisting",
        action="store_true",
        help="create the -J file first: the run must write PATH.0 instead, as nccl-tests does",
    )
    ap.add_argument("--stderr-lines", type=int, default=0, help="warning lines expected on stderr")
    ap.add_argument("--unalign", type=int, default=0, help="-u given to the run (the settings line shows it)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    os.makedirs(os.path.dirname(a.json) or ".", exist_ok=True)
    for f in os.listdir(os.path.dirname(a.json) or "."):
        if f == os.path.basename(a.json) or f.startswith(os.path.basename(a.json) + "."):
            os.unlink(os.path.join(os.path.dirname(a.json) or ".", f))
    json_path = a.json
    if a.preexisting:
        with open(a.json, "w") as f:
            f.write("not to be overwritten\n")
        json_path = a.json + ".0"
    flags = {k: cmd[i + 1] for i, k in enumerate(cmd[:-1]) if re.fullmatch(r"-[A-Za-z]", k)}
    per_iter, stamps, cputime = flags.get("-I") == "1", flags.get("-S") == "1", flags.get("-C") == "1"
    slowest = "--show-slowest" in cmd
    blocking = int(flags.get("-z", "0"))

    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    print(p.stdout[-6000:])
    print(p.stderr[-2000:], file=sys.stderr)
    if p.returncode != a.expect_exit:
        fail(f"exit {p.returncode}, expected {a.expect_exit}")
    warnings = [l for l in p.stderr.splitlines() if l.startswith("allreduce_bw: warning:")]
    if len(warnings) != a.stderr_lines:
        fail(f"{len(warnings)} warning lines on stderr, expected {a.stderr_lines}")

    lines = p.stdout.split("\n")
    expect(lines[0], f"# Writing JSON output to {json_path}", "first line")
    if a.preexisting:
        expect(open(a.json).read(), "not to be overwritten\n", "the file that was there before the run")
    doc = json.load(open(json_path))
    i = 1
    m = re.fullmatch(r"# nccl-tests version (\S+) nccl-headers=(\d+) nccl-library=(\d+)", lines[i])
    if not m:
        fail(f"version line {lines[i]!r}")
    expect(lines[i], VERSION % (m.group(1), int(m.group(2)), int(m.group(3))), "version line")
    i += 1
    expect(lines[i], STARTING % a.program, "starting line")
    i += 1
    cfg = doc["config"]
    step = cfg.get("step_factor", cfg.get("step_bytes"))
    expect(
        lines[i],
        SETTINGS
        % (
            1,
            1,
            cfg["minimum_bytes"],
            cfg["maximum_bytes"],
            step,
            "factor" if "step_factor" in cfg else "bytes",
            cfg["warmup_iters"],
            cfg["iterations"],
            cfg["aggregated_iterations"],
            cfg["validation"],
            cfg["graph"],
            a.unalign,
        ),
        "settings line",
    )
    i += 1
    if blocking:
        expect(lines[i], BLOCKING[blocking], "blocking line")
        i += 1
    if per_iter:  # nccl-tests says "CUDA event timing"; gpuaccept's clock is the host's, and it says so
        skip = cfg["per_iter_skip"]
        want = "# Per-Iteration Report: host clock timing; i_* uses max over process rows"
        want += (f"; summary skips first {skip} iterations" if skip else "") + " "
        expect(lines[i], want, "per-iteration line")
        i += 1
    expect(lines[i], "#", "line before the devices")
    expect(lines[i + 1], "# Using devices", "devices title")
    i += 2
    devices = cfg["devices"]
    if len(devices) != a.ranks:
        fail(f"{len(devices)} devices in -J, expected {a.ranks}")
    for r in range(a.ranks):
        d = devices[r]
        expect(
            lines[i],
            DEVICE % (d["rank"], d["group"], d["pid"], d["hostname"], d["device"], d["device_hex"], d["device_info"]),
            f"device line of rank {r}",
        )
        if d["rank"] != r or not d["hostname"] or d["group"] != r & a.split_mask:
            fail(f"device entry {d}")
        i += 1
    for want in header_lines(per_iter, cputime, stamps, slowest):
        expect(lines[i], want, "header line")
        i += 1
    results = doc["results"]
    rows = []
    while i < len(lines) and lines[i] and not lines[i].startswith("#"):
        rows.append(check_data_line(lines[i], per_iter, stamps, slowest))
        i += 1
    if a.lines is not None and len(rows) != a.lines:
        fail(f"{len(rows)} table lines, expected {a.lines}")
    if len(rows) != len(results):
        fail(f"{len(rows)} table lines but {len(results)} -J results")
    if a.op_order:
        runs = [r[3] for k, r in enumerate(rows) if k == 0 or rows[k - 1][3] != r[3] or rows[k - 1][2] != r[2]]
        order = a.op_order.split(",")
        expect(runs, order * (len(runs) // len(order)), "redop order (nccl-tests': sum prod max min avg)")
    avg = doc["average_bus_bandwidth"]["bandwidth"]
    oob = doc["out_of_bounds"]["count"]
    bw_verdict = "" if a.min_bw < 0 else ("FAILED" if avg < a.min_bw * 0.9 else "OK")
    expect(lines[i], FOOT_OOB % ("Out of bounds values", oob, "FAILED" if oob else "OK"), "out-of-bounds line")
    expect(lines[i + 1], FOOT_BW % ("Avg bus bandwidth", "%g" % avg, bw_verdict), "average line")
    expect(lines[i + 2 : i + 6], ["#", STARTING.replace("starting", "concluded") % a.program, "#", ""], "end")

    # ---- the table and -J agree; the average is the mean busbw of every line and placement ----
    bws = []
    for (size, count, typ, redop, root, places), r in zip(rows, results):
        expect(
            (size, count, typ, redop, root),
            (r["size"], r["count"], r["type"], r["redop"], int(r["root"])),
            "line against -J",
        )
        if r["root"] != "%6d" % root:
            fail(f"-J root {r['root']!r} is not nccl-tests' %6i string")
        if a.collective_type and typ != a.collective_type:
            fail(f"type {typ}")
        if a.redop is not None and redop != a.redop:
            fail(f"redop {redop!r}, expected {a.redop!r}")
        for key, (cols, it) in zip(("out_of_place", "in_place"), places):
            pl = r[key]
            tkey = "cpu_time" if cputime else "time"
            expect(float_str(pl[tkey], 7), cols[0], f"{key} time")
            expect(float_str(pl["bus_bw"], 6), cols[2], f"{key} busbw")
            expect(pl["nwrong"] is None, cols[3].strip() == "N/A", f"{key} nwrong null exactly when N/A")
            bws.append(pl["bus_bw"])
            if per_iter:
                check_per_iter(r[key + "_per_iter"], it, cfg, a.ranks, f"{size} B {key}")
        if r["actual_iterations"] != cfg["iterations"] or r["experiment_name"] != "":
            fail(f"result tail {r}")
    if bws and not math.isclose(avg, sum(bws) / len(bws), rel_tol=1e-9, abs_tol=1e-12):
        fail(f"average {avg} is not the mean of {len(bws)} busbw")
    for k in (
        "version",
        "start_time",
        "args",
        "env",
        "nccl_version",
        "config",
        "results",
        "out_of_bounds",
        "average_bus_bandwidth",
        "errors",
        "end_time",
    ):
        if k not in doc:
            fail(f"-J lacks {k}")
    if doc["version"] != 3:
        fail(f"-J version {doc['version']}")
    want_okay = "unchecked" if a.min_bw < 0 else avg >= a.min_bw * 0.9
    expect(doc["average_bus_bandwidth"]["okay"], want_okay, "average okay")

    # ---- the parsers sites wrap around nccl-tests ----
    text = p.stdout
    avg_col6 = run_awk("/# Avg bus bandwidth/ {print $6}", text)
    expect(avg_col6, ["%g" % avg], "awk $6 of the average line")
    if a.min_bw < 0:
        expect(run_awk("/# Avg bus bandwidth/ {print $NF}", text), avg_col6, "awk $NF of the average line")
    grep = subprocess.run(
        ["grep", "-c", "# Out of bounds values : 0 OK"], input=text, stdout=subprocess.PIPE, text=True
    )
    expect(grep.stdout.strip(), "1" if oob == 0 else "0", "grep of the out-of-bounds line")
    if not per_iter and not stamps and not slowest:
        # data lines have nccl-tests' 13 fields (12 where the redop column is empty): $NF is in-place #wrong
        fields = run_awk("$1 ~ /^[0-9]+$/ {print NF, $1, $(NF-1), $NF}", text)
        if len(fields) != len(rows):
            fail(f"awk found {len(fields)} data lines, expected {len(rows)}")
        for f, r in zip(fields, results):
            n, size, bus_ip, wrong_ip = f.split()
            want_nf = 13 if r["redop"] else 12
            expect(int(n), want_nf, "fields per data line")
            expect(int(size), r["size"], "awk $1")
            expect(bus_ip, float_str(r["in_place"]["bus_bw"], 6).strip(), "awk busbw in place")
            expect(wrong_ip, "N/A" if r["in_place"]["nwrong"] is None else "%g" % r["in_place"]["nwrong"], "awk $NF")
    print("OK")


def check_per_iter(pi, cols, cfg, ranks, where):
    """The fields analyze_perf_json.py reads, and the analyzer's own consistency rule."""
    iters = cfg["iterations"]
    skip = cfg["per_iter_skip"]
    for k in (
        "skipped_iterations",
        "min_us",
        "max_us",
        "avg_us",
        "p50_us",
        "p95_us",
        "p99_us",
        "stdev_us",
        "cv_pct",
        "times_us",
    ):
        if k not in pi:
            fail(f"{where}: per-iteration entry lacks {k}")
    times = pi["times_us"]
    if len(times) != iters or pi["skipped_iterations"] != skip:
        fail(f"{where}: {len(times)} iteration times, skip {pi['skipped_iterations']}")
    procs = pi.get("per_process_max_times_us")
    if ranks > 1:
        if procs is None or len(procs) != ranks or any(len(row) != iters for row in procs):
            fail(f"{where}: per_process_max_times_us is not {ranks} rows of {iters}")
        for i in range(iters):
            if abs(times[i] - max(row[i] for row in procs)) >= 0.001:
                fail(f"{where}: times_us[{i}] is not the max over process rows")
    s = sorted(times[skip:])
    n = len(s)
    mean = sum(s) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in s) / n)
    p99 = s[min(n - 1, (n * 99 + 99) // 100 - 1)]
    for k, v in (
        ("min_us", s[0]),
        ("max_us", s[-1]),
        ("avg_us", mean),
        ("p50_us", s[n // 2]),
        ("p99_us", p99),
        ("stdev_us", sd),
        ("cv_pct", sd / mean * 100 if mean > 0 else 0),
    ):
        if not math.isclose(pi[k], v, rel_tol=1e-6, abs_tol=1e-6):
            fail(f"{where}: {k} {pi[k]} != {v}")
    expect(
        [c for c in cols],
        [
            float_str(pi["min_us"], 7),
            float_str(pi["max_us"], 7),
            float_str(pi["p99_us"], 7),
            float_str(pi["cv_pct"], 7),
        ],
        f"{where}: i_min i_max i_p99 i_cv% columns",
    )


if __name__ == "__main__":
    main()
