#!/usr/bin/env python3
"""A bad command line exits 2 with exactly one line on stderr, and nothing else from the program.
usage: check_usage.py PROGRAM ARGS..."""
import subprocess
import sys

p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
err = p.stderr.splitlines()
print(f"exit {p.returncode}; stderr: {p.stderr!r}")
if p.returncode != 2:
    sys.exit(f"FAIL: exit {p.returncode}, expected 2")
if len(err) != 1 or not err[0].startswith("allreduce_bw: "):
    sys.exit(f"FAIL: {len(err)} stderr lines, expected one 'allreduce_bw: ...' line")
print("OK")
