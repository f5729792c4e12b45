#!/usr/bin/env python3
"""Every fault code the programs can emit is documented in docs/fault-codes.md, and every documented code is
emitted somewhere: the index users read cannot drift from the code. The prefixes come from the program
registry (`gpuaccept run --list-programs`), and each program's codes carry its own prefixes, in its code and
in its section of the index.

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
index = (root / "docs" / "fault-codes.md").read_text()
documented = set(re.findall(r"`((?:%s)_[A-Z0-9_]+)`" % alternatives, index))
# Every code row of the index, whatever its prefix: a prefix no program claims would hide its codes above.
for c in sorted(set(re.findall(r"^\| `([A-Z][A-Z0-9]*_[A-Z0-9_]+)` \|", index, re.M)) - documented):
    print("FAIL: documented with a prefix neither a program (registry) nor the front-end claims:", c)
    documented.add(c)
problems = [f"emitted but not documented: {c}" for c in sorted(in_code - documented)]
problems += [f"documented but never emitted: {c}" for c in sorted(documented - in_code)]

# Each program's own folder emits only codes with its prefixes, and its section of the index lists only those.
sections = dict(re.findall(r"^## (\w+)[^\n]*\n(.*?)(?=^## |\Z)", index, re.M | re.S))
for name, own in programs.items():
    if not (root / "bench" / name).is_dir():
        problems.append(f"{name}: in the registry but no bench/{name}/")
        continue
    for c in sorted(codes_in(root / "bench" / name)):
        if c.split("_")[0] not in own:
            problems.append(f"{name}: emits {c}, not one of its prefixes {own}")
    if name not in sections:
        problems.append(f"{name}: no '## {name}' section in docs/fault-codes.md")
        continue
    for c in sorted(set(re.findall(r"`((?:%s)_[A-Z0-9_]+)`" % alternatives, sections[name]))):
        if c.split("_")[0] not in own:
            problems.append(f"{name}: documents {c}, not one of its prefixes {own}")
for p in problems:
    print("FAIL:", p)
print(f"{len(programs)} programs, prefixes {prefixes}; {len(in_code)} codes in the code, {len(documented)} "
      f"documented, {len(problems)} problems")
sys.exit(1 if problems or not in_code or not programs else 0)
