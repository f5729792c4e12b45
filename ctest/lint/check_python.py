#!/usr/bin/env python3
"""The Python of the tree, by two tools: `format` (black --check --diff, with the tree's pyproject.toml: every
file as black writes it) and `lint` (pyflakes: no unused import or variable, no undefined name).
usage: check_python.py format|lint TOOL SOURCE_DIR. Exit 0 when every tracked .py file passes, 1 naming each
that does not. A made-up bad file must be caught first, so that the check is shown able to fail; a tree
without the tool fails (launch/install-deps.sh --test installs black and python3-pyflakes), never skips."""
import os
import subprocess
import sys
import tempfile

mode, tool, root = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
BAD = {"format": "x = {  'a':1 }\n", "lint": "import os\n"}


def python_files():
    """The tracked .py files (git ls-files); in a tree without git, every .py outside build trees."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.py"], capture_output=True, check=True)
        return sorted(os.path.join(root, f) for f in out.stdout.decode().split("\0") if f)
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(("build", "."))]
            found += [os.path.join(d, n) for n in names if n.endswith(".py")]
        return sorted(found)


def run(paths):
    if mode == "format":
        cmd = [tool, "--check", "--diff", "--quiet", "--config", os.path.join(root, "pyproject.toml")]
    else:
        cmd = [tool]
    try:
        return subprocess.run(cmd + paths, capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit(f"FAIL: {tool} not found (launch/install-deps.sh --test installs black and python3-pyflakes)")


with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as t:
    t.write(BAD[mode])
try:
    if run([t.name]).returncode == 0:
        sys.exit(f"FAIL: a made-up bad file passed {mode}: the check proves nothing")
finally:
    os.unlink(t.name)

files = [f for f in python_files() if os.path.exists(f)]
p = run(files)
sys.stdout.write(p.stdout.replace(root + os.sep, ""))
sys.stdout.write(p.stderr.replace(root + os.sep, ""))
if p.returncode != 0:
    print(f"FAIL: {mode}: see above" + (" (black -l 120 FILE, or black . at the root)" if mode == "format" else ""))
print(f"{len(files)} files, {mode} {'failed' if p.returncode else 'clean'}")
sys.exit(1 if p.returncode != 0 or not files else 0)
