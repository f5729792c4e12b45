#!/usr/bin/env python3
"""Every fault code the programs can emit is documented in docs/fault-codes.md, and every documented code is
emitted somewhere: the index users read cannot drift from the code."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
pattern = re.compile(r'"((?:ENV|GPU|GEMM|MEM|COMM|DDP|STEP|BASELINE)_[A-Z0-9_]+)"')
in_code = set()
for folder in ("bench", "launch", "common"):
    for path in (root / folder).rglob("*"):
        if path.suffix in (".c", ".h", ".cu"):
            in_code |= {c for c in pattern.findall(path.read_text()) if "_TEST_" not in c}
documented = set(re.findall(r"`((?:ENV|GPU|GEMM|MEM|COMM|DDP|STEP|BASELINE)_[A-Z0-9_]+)`",
                            (root / "docs" / "fault-codes.md").read_text()))
problems = [f"emitted but not documented: {c}" for c in sorted(in_code - documented)]
problems += [f"documented but never emitted: {c}" for c in sorted(documented - in_code)]
for p in problems:
    print("FAIL:", p)
print(f"{len(in_code)} codes in the code, {len(documented)} documented, {len(problems)} problems")
sys.exit(1 if problems or not in_code else 0)
