#!/usr/bin/env python3
"""Every fault code is documented where users read it, and every documented code is emitted somewhere: a
program's codes in the "Fault codes" section of its page docs/<program>.md, the front-end's in
docs/fault-codes.md. The prefixes come from the program registry (`gpuaccept run --list-programs`); a program's
folder emits only codes with its prefixes and its page lists exactly the codes its folder emits.

    check_fault_codes.py SOURCE_DIR GPUACCEPT"""
import pathlib
import re
import subprocess
import sys

root, gpuaccept = pathlib.Path(sys.argv[1]), sys.argv[2]
# The front-end's own codes (suite/summary/merge.c, suite/summary/baseline.c, suite/run/preflight.c, suite/handoff/handoff.h): it is no program of the
# registry.
FRONT_END = ["STEP", "BASELINE", "PREFLIGHT", "HANDOFF"]

listing = subprocess.run([gpuaccept, "run", "--list-programs"], capture_output=True, text=True, timeout=30)
if listing.returncode != 0:
    sys.exit("FAIL: gpuaccept run --list-programs: exit {} {}".format(listing.returncode, listing.stderr))
programs = {}
for line in listing.stdout.splitlines():
    cols = line.split("\t")
    programs[cols[1]] = cols[2].split(",")
prefixes = sorted({p for ps in programs.values() for p in ps} | set(FRONT_END))
alternatives = "|".join(prefixes)
pattern = re.compile(r'"((?:%s)_[A-Z0-9_]+)"' % alternatives)


def codes_in(folder):
    found = set()
    for path in folder.rglob("*"):
        if path.suffix in (".c", ".h", ".cu"):
            found |= {c for c in pattern.findall(path.read_text()) if "_TEST_" not in c}
    return found


in_code = set()
for folder in ("bench", "suite", "common"):
    in_code |= codes_in(root / folder)
code_re = r"`((?:%s)_[A-Z0-9_]+)`" % alternatives
row_re = r"^\| `([A-Z][A-Z0-9]*_[A-Z0-9_]+)` \|"
problems = []


def fault_code_section(page):
    """The codes of the page's '## Fault codes' section, and the code rows whose prefix nobody claims."""
    text = page.read_text() if page.is_file() else ""
    m = re.search(r"^## Fault codes\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        return None, []
    body = m.group(1)
    codes = set(re.findall(code_re, body))
    return codes, sorted(set(re.findall(row_re, body, re.M)) - codes)


# The shared libraries emit codes for the program whose prefix they carry (common/core/ga_transport_check.c's
# COMM_TRANSPORT_* are allreduce_bw's).
in_common = codes_in(root / "common")
documented = set()
for name, own in programs.items():
    if not (root / "bench" / name).is_dir():
        problems.append(f"{name}: in the registry but no bench/{name}/")
        continue
    emitted = codes_in(root / "bench" / name)
    for c in sorted(emitted):
        if c.split("_")[0] not in own:
            problems.append(f"{name}: emits {c}, not one of its prefixes {own}")
    emitted |= {c for c in in_common if c.split("_")[0] in own}
    listed, unclaimed = fault_code_section(root / "docs" / (name + ".md"))
    if listed is None:
        problems.append(f"{name}: no '## Fault codes' section in docs/{name}.md")
        continue
    problems += [
        f"{name}: docs/{name}.md lists {c}, a prefix neither a program nor the front-end claims" for c in unclaimed
    ]
    problems += [f"{name}: emits {c}, not in docs/{name}.md's Fault codes" for c in sorted(emitted - listed)]
    problems += [
        f"{name}: docs/{name}.md lists {c}, which neither bench/{name}/ nor common/ emits"
        for c in sorted(listed - emitted)
    ]
    documented |= listed

# The front-end's codes: docs/fault-codes.md, which lists no program's code itself.
index = (root / "docs" / "fault-codes.md").read_text()
front = set(re.findall(code_re, index))
for c in sorted(set(re.findall(row_re, index, re.M)) - front):
    problems.append(f"docs/fault-codes.md: {c} has a prefix neither a program nor the front-end claims")
problems += [
    f"docs/fault-codes.md lists {c}, a program's code (its page lists it)"
    for c in sorted(front)
    if c.split("_")[0] not in FRONT_END
]
front_emitted = {c for c in in_code if c.split("_")[0] in FRONT_END}
problems += [f"emitted but not in docs/fault-codes.md: {c}" for c in sorted(front_emitted - front)]
problems += [f"docs/fault-codes.md lists {c}, never emitted" for c in sorted(front - in_code)]
documented |= front
problems += [f"emitted but documented nowhere: {c}" for c in sorted(in_code - documented)]
for p in problems:
    print("FAIL:", p)
print(
    f"{len(programs)} programs, prefixes {prefixes}; {len(in_code)} codes in the code, {len(documented)} "
    f"documented, {len(problems)} problems"
)
sys.exit(1 if problems or not in_code or not programs else 0)
