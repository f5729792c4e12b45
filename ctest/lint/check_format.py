#!/usr/bin/env python3
"""Every C and CUDA file of the source tree is as clang-format (the tree's .clang-format) writes it.
usage: check_format.py CLANG_FORMAT SOURCE_DIR. Exit 0 when all are, 1 naming each that is not.
A file made badly formatted must be caught first, so that the check is shown able to fail."""
import os
import subprocess
import sys
import tempfile

clang_format, root = sys.argv[1], os.path.realpath(sys.argv[2])
FOLDERS = ("common", "bench", "suite", "ctest")


def unformatted(path):
    try:
        p = subprocess.run(
            [clang_format, "--dry-run", "--Werror", f"--style=file:{root}/.clang-format", path],
            capture_output=True,
            text=True,
        )
    except FileNotFoundError:
        sys.exit(f"FAIL: {clang_format} not found (launch/install-deps.sh --test installs clang-format)")
    return p.returncode != 0


with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as t:
    t.write("int   f( int x ){return x;}\n")
try:
    if not unformatted(t.name):
        sys.exit("FAIL: a badly formatted file passed: the check proves nothing")
finally:
    os.unlink(t.name)

files = []
for folder in FOLDERS:
    for d, _, names in os.walk(os.path.join(root, folder)):
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith((".c", ".h", ".cu"))]
bad = [f for f in files if unformatted(f)]
for f in bad:
    rel = os.path.relpath(f, root)
    print(f"FAIL: {rel} is not as clang-format writes it (clang-format -i {rel})")
print(f"{len(files)} files, {len(bad)} not formatted")
sys.exit(1 if bad or not files else 0)
