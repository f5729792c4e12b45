"""The HTML summary in a real browser (Chromium): its pixels, its DOM, and a 512-node report."""
import glob
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

from suite_helpers import FX, load, fresh, merge, merge_dir, check


def png_pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + n]
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
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
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
    check(
        "<script" not in text
        and "http://" not in text.replace("http://www.w3.org/2000/svg", "")
        and "https://" not in text,
        "self-contained: no script, nothing fetched",
    )
    prof = fresh("chromium-profile")
    shot = os.path.join(d, "summary.png")
    base = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--user-data-dir=" + prof,
        "--hide-scrollbars",
        "--window-size=1200,2000",
    ]
    env = dict(os.environ, HOME=prof)
    r = subprocess.run(
        base + ["--screenshot=" + shot, "file://" + html], capture_output=True, text=True, timeout=90, env=env
    )
    check(r.returncode == 0 and os.path.exists(shot), "chromium took a screenshot (%d)" % r.returncode)
    dom = subprocess.run(
        base + ["--dump-dom", "file://" + html], capture_output=True, text=True, timeout=90, env=env
    ).stdout
    check("Cluster acceptance: FAIL" in dom, "the DOM holds the verdict")
    abnormal = sorted(n["host"] for n in json.load(open(os.path.join(d, "summary.json")))["abnormal_nodes"])
    check(
        abnormal == ["gpu-node-02", "gpu-node-03"]
        and 'Abnormal nodes, to copy: <code class="hostlist">gpu-node-[02-03]</code>' in dom,
        "the DOM holds the abnormal nodes %s as one Slurm host list" % abnormal,
    )
    check(dom.count("<svg") >= 5, "the DOM holds the SVG charts (%d)" % dom.count("<svg"))
    for s in (
        "gpu-node-02",
        "ENV_KERNEL_MISMATCH",
        "gpu-node-03",
        "GEMM_BELOW_MEDIAN",
        "allreduce busbw against message size",
        "fp64 TFLOP/s per rank against the median",
        "Verdict of each check on each node",
        "Training loss by step",
    ):
        check(s in dom, "the DOM holds '%s'" % s)
    if not os.path.exists(shot):
        return
    w, h, bpp, rows = png_pixels(shot)
    check(w == 1200 and h == 2000, "screenshot 1200x2000 (%dx%d)" % (w, h))
    colours, nonwhite, total = set(), 0, 0
    for y in range(0, h, 4):
        row = rows[y]
        for x in range(0, w, 4):
            px = row[x * bpp : x * bpp + 3]
            colours.add(px)
            total += 1
            nonwhite += px != b"\xff\xff\xff"
    check(len(colours) > 50, "a real render: %d colours" % len(colours))
    check(nonwhite / total > 0.3, "not blank: %.0f%% of pixels not white" % (100 * nonwhite / total))

    def near(px, rgb):
        return all(abs(px[i] - rgb[i]) < 12 for i in range(3))

    top = rows[20]
    check(
        sum(near(top[x * bpp : x * bpp + 3], (214, 69, 65)) for x in range(w)) > w // 2,
        "the red FAIL banner is at the top",
    )
    green = sum(near(rows[y][x * bpp : x * bpp + 3], (46, 158, 91)) for y in range(0, h, 4) for x in range(0, w, 4))
    check(green > 50, "the grid's green pass cells are drawn (%d samples)" % green)


def chromium_dom(chromium, html, name):
    """The DOM of html as headless Chromium renders it (with its layout, so hidden text is not counted as
    laid out: SVG <text> and table cells are)."""
    prof = fresh(name + "-profile")
    r = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--user-data-dir=" + prof,
            "--window-size=1200,2000",
            "--dump-dom",
            "file://" + html,
        ],
        capture_output=True,
        text=True,
        timeout=100,
        env=dict(os.environ, HOME=prof),
    )
    check(r.returncode == 0 and "</html>" in r.stdout, "chromium rendered %s (exit %d)" % (name, r.returncode))
    return r.stdout


def hostlist(hosts):
    """The Slurm host list of names sharing one prefix and a fixed-width number, as a person would write it."""
    if not hosts:
        return ""
    pre = re.match(r"(.*?)(\d+)$", hosts[0]).group(1)
    nums = sorted(h[len(pre) :] for h in hosts)
    runs, start = [], 0
    for i in range(1, len(nums) + 1):
        if i == len(nums) or int(nums[i]) != int(nums[i - 1]) + 1:
            runs.append(nums[start] if start == i - 1 else nums[start] + "-" + nums[i - 1])
            start = i
    return pre + ("[" + ",".join(runs) + "]" if len(nums) > 1 else nums[0])


def t_html_scale():
    """summary.html at 4 nodes (bars) and at 512 nodes x 8 GPUs (heatmap, labelled outliers, host list, no
    place written twice), rendered by Chromium; the 512-node reports come from launch/bench-merge.py's
    generator with a few GPUs made slow by declared edits."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: no chromium (apt-get install chromium)")
        sys.exit(77)
    p, d = merge("cluster_bad", "small", [])
    dom = chromium_dom(chromium, os.path.join(d, "summary.html"), "small")
    check(
        'class="heatmap"' not in dom and "fp64 TFLOP/s per rank against the median" in dom,
        "4 nodes: per-device figures drawn as bars, no heatmap",
    )

    spec = importlib.util.spec_from_file_location(
        "bench_merge", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "launch", "bench-merge.py")
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # Declared edits: three GPUs of gemm_flops 18-25% slow, flagged as the program flags them, with its
    # finding (whose message names the place, as the programs' messages do).
    slow = {(37, 5): 0.82, (300, 0): 0.75, (512, 7): 0.79}

    def edit(report):
        if report["program"] != "gemm_flops":
            return
        for m in report["metrics"]:
            node = m["node_index"] + 1
            if (node, m["gpu"]) in slow:
                m["value"] *= slow[(node, m["gpu"])]
                m["flagged"] = True
                report["findings"].append(
                    {
                        "severity": "fail",
                        "code": "GEMM_BELOW_MEDIAN",
                        "host": m["host"],
                        "node_index": m["node_index"],
                        "rank": m["rank"],
                        "gpu": m["gpu"],
                        "message": "node %d (%s) rank %d GPU %d: bf16 TFLOP/s %.4g is below the median"
                        % (m["node_index"], m["host"], m["rank"], m["gpu"], m["value"]),
                    }
                )

    work = fresh("n512")
    rd = os.path.join(work, "reports")
    bench.write_reports(rd, 512, 8, edit=edit)
    bench.write_baseline(os.path.join(work, "baseline.json"), factor=0.9)  # only the slow GPUs regress
    p, d = merge_dir(rd, "n512-out", ["--baseline", os.path.join(work, "baseline.json")])
    check(p.returncode == 1, "merge of 512 x 8 GPUs: exit 1 (%d %s)" % (p.returncode, p.stderr[-300:]))
    html = os.path.join(d, "summary.html")
    size = os.path.getsize(html)
    check(size < 3_000_000, "512 nodes: summary.html is %d bytes (under 3 MB)" % size)
    text = open(html).read()
    check(
        "<script" not in text
        and "https://" not in text
        and "http://" not in text.replace("http://www.w3.org/2000/svg", ""),
        "512 nodes: self-contained",
    )
    dom = chromium_dom(chromium, html, "n512")
    s = load(os.path.join(d, "summary.json"))
    check(
        dom.count('class="heatmap-figure"') == 2
        and dom.count('<svg xmlns="http://www.w3.org/2000/svg" ' 'class="heatmap"') == 8,
        "512 nodes: a heatmap per per-device figure, 4 panels of 128 nodes each (%d figures, %d panels)"
        % (dom.count('class="heatmap-figure"'), dom.count('class="heatmap"')),
    )
    check(
        "node x GPU" in dom
        and "bf16 TFLOP/s per GPU against the median" not in dom
        and "tflops_bf16 TFLOP/s per GPU against the median" not in dom,
        "512 nodes: no bar chart",
    )
    values = sorted(m["value"] for m in s["metrics"] if m["name"] == "tflops_bf16")
    median = (values[(len(values) - 1) // 2] + values[len(values) // 2]) / 2
    labels = []
    for m in s["metrics"]:
        if m["name"] == "tflops_bf16" and m.get("flagged"):
            dev = (m["value"] - median) / abs(median) * 100
            labels.append((dev, "%s GPU %d: %.4g TFLOP/s (%+.1f%%) flagged" % (m["host"], m["gpu"], m["value"], dev)))
    check(len(labels) == 3, "the three slow GPUs are flagged in summary.json (%d)" % len(labels))
    for dev, lab in labels:
        check(
            re.search(r'<text class="hm-label"[^>]*>' + re.escape(lab) + "</text>", dom) is not None,
            "512 nodes: the outlier is labelled as visible SVG text: '%s'" % lab,
        )
    listed = re.findall(
        r"<tr><td class=\"num\">(\d+)</td><td>(gpu-node-\d+ GPU \d)</td>",
        dom.split('class="hm-outliers"')[1].split("</table>")[0] if 'class="hm-outliers"' in dom else "",
    )
    want = [lab.split(":")[0] for dev, lab in sorted(labels)]
    check(
        [w for _, w in listed[:3]] == want,
        "512 nodes: the outlier list starts with the slow GPUs, worst "
        "first (%s, want %s)" % ([w for _, w in listed[:3]], want),
    )
    abnormal = [n["host"] for n in s["abnormal_nodes"]]
    want_list = hostlist(abnormal)
    check(
        len(abnormal) > 10 and 'Abnormal nodes, to copy: <code class="hostlist">%s</code>' % want_list in dom,
        "512 nodes: the %d abnormal nodes as one host list (%s...)" % (len(abnormal), want_list[:60]),
    )
    # No text node names a host twice: "gpu-node-0037 GPU 5: ... on gpu-node-0037 GPU 5" was written by the
    # abnormal-node table and the verdict's reasons.
    twice = [
        t
        for t in re.findall(r">([^<]+)<", dom)
        if any(n > 1 for n in map(t.count, set(re.findall(r"gpu-node-\d{4}\b", t))))
    ]
    check(not twice, "512 nodes: no text names its place twice (%d do, e.g. %r)" % (len(twice), twice[:2]))
    check(
        re.search(r"gemm_flops tflops_bf16 [0-9.]+ TFLOP/s on gpu-node-0037 GPU 5 is below", dom) is not None,
        "512 nodes: the baseline's regression of gpu-node-0037 GPU 5 is shown with its place",
    )


def with_findings(case, out, host, extra, first=()):
    """The case's reports with node_health's findings on host: first before the report's own, extra after."""
    d = fresh(out)
    for path in glob.glob(os.path.join(FX, case, "reports", "*.json")):
        r = load(path)
        if r.get("program") == "node_health":
            node = next(n for n in r["nodes"] if n["host"] == host)
            mk = [
                {
                    "severity": sev,
                    "code": code,
                    "host": host,
                    "node_index": node["node_index"],
                    "rank": None,
                    "gpu": None,
                    "pci_bus_id": None,
                    "message": msg,
                }
                for sev, code, msg in list(first) + list(extra)
            ]
            r["findings"] = mk[: len(first)] + r["findings"] + mk[len(first) :]
        with open(os.path.join(d, os.path.basename(path)), "w") as f:
            json.dump(r, f)
    return d


def t_html_found():
    """An abnormal node with a warning found before seven failures (issue 41, observation 10): its fault codes
    list the failing codes first, in summary.json and summary.md; the HTML shows four of its failures and
    "and N more", and the "what was found" column stays readable beside seven codes (measured in
    Chromium: it was one or two words wide)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: no chromium (apt-get install chromium)")
        sys.exit(77)
    host = "gpu-node-02"
    fails = [
        (
            "fail",
            "HEALTH_%s" % c,
            "GPU %d on %s: %s, found by the check of this kind on this node" % (i, host, c.lower().replace("_", " ")),
        )
        for i, c in enumerate(
            [
                "ECC_UNCORRECTABLE",
                "GPU_LOST",
                "IB_PORT_DOWN",
                "NVLINK_DOWN",
                "IB_RATE_LOW",
                "GPU_MISSING",
                "FABRIC_NOT_READY",
            ]
        )
    ]
    rd = with_findings(
        "cluster_bad",
        "found-reports",
        host,
        fails,
        first=[("warn", "HEALTH_ECC_CORRECTABLE", "correctable ECC errors on GPU 0")],
    )
    p, d = merge_dir(rd, "found-out", [])
    s = load(os.path.join(d, "summary.json"))
    node = next((a for a in s["abnormal_nodes"] if a["host"] == host), {"fault_codes": []})
    codes = node["fault_codes"]
    sev = {f["code"]: f["severity"] for f in s["findings"] if f.get("host") == host}
    ranks = [0 if sev.get(c) == "fail" else 1 for c in codes]
    check(
        len(codes) >= 8 and ranks == sorted(ranks),
        "the abnormal node's fault codes list failures before warnings: %s" % codes,
    )
    md = open(os.path.join(d, "summary.md")).read()
    row = next((l for l in md.splitlines() if l.startswith("| " + host + " | ") and "HEALTH_" in l), "")
    check(
        row.find("HEALTH_ECC_UNCORRECTABLE") < row.find("HEALTH_ECC_CORRECTABLE`"),
        "summary.md: the failing codes come first: %s" % row[:160],
    )
    html = os.path.join(d, "summary.html")
    text = open(html).read()
    more = sum(1 for f in s["findings"] if f.get("host") == host and f["severity"] == "fail") - 4
    check(
        more >= 3 and "and %d more failures" % more in text,
        "summary.html: four failures shown beside the node and 'and %d more failures'" % more,
    )
    # Chromium lays the page out; a script added to a copy measures the cell (the summary has none).
    probe = os.path.join(d, "probe.html")
    js = (
        "<script>var w=-1;document.querySelectorAll('#abnormal tr').forEach(function(tr){var c=tr.cells;"
        "if(c.length>2&&c[0].textContent=='%s')w=Math.round(c[2].getBoundingClientRect().width);});"
        "document.body.setAttribute('data-found-width',w);</script>" % host
    )
    with open(probe, "w") as f:
        f.write(text.replace("</body>", js + "</body>"))
    dom = chromium_dom(chromium, probe, "found")
    m = re.search(r'data-found-width="(-?\d+)"', dom)
    width = int(m.group(1)) if m else -1
    check(
        "rank 5: rank 5" not in text and "gpu-node-03 rank 5: fp64 GEMM" in text,
        "a message that starts with its rank is not given the rank twice ('gpu-node-03 rank 5: fp64 GEMM')",
    )
    check(
        width >= 300,
        "in a 1200-pixel window the 'what was found' cell beside seven codes is %d px wide " "(at least 300)" % width,
    )


def t_plurals():
    """One failure on one abnormal node reads "1 failure", "1 abnormal node", never "1 nodes" (issue 41,
    observation 10), in summary.md, summary.html and the front-end's verdict line."""
    rd = with_findings(
        "cluster_good", "plural-reports", "gpu-node-01", [("fail", "HEALTH_GPU_LOST", "GPU 1 fell off the bus")]
    )
    p, d = merge_dir(rd, "plural-out", [])
    s = load(os.path.join(d, "summary.json"))
    check(
        s["verdict"]["failures"] == 1 and s["verdict"]["abnormal_node_count"] == 1,
        "one failure on one abnormal node (%s)" % s["verdict"].get("failures"),
    )
    bad = re.compile(r"\b1 (nodes|failures|warnings|GPUs|regressions|figures|findings)\b")
    md = open(os.path.join(d, "summary.md")).read()
    html = open(os.path.join(d, "summary.html")).read()
    for name, text in (("summary.md", md), ("summary.html", html), ("the verdict line", p.stdout + p.stderr)):
        m = bad.search(text)
        check(m is None, "%s: no '1 <plural>' (%s)" % (name, m.group(0) if m else "none"))
    check("1 failure" in md and "1 abnormal node" in md, "summary.md says '1 failure' and '1 abnormal node'")
