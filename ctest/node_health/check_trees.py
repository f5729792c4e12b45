#!/usr/bin/env python3
"""The committed sysfs trees (ctest/node_health/data/trees/) are what make_trees.py writes: same files, same
contents, nothing more. A tree edited by hand, or a generator changed without rerunning it, fails here.
usage: check_trees.py NODE_HEALTH_TEST_DIR"""
import filecmp
import os
import subprocess
import sys
import tempfile

here = os.path.realpath(sys.argv[1])
committed = os.path.join(here, "data", "trees")


def files(root):
    """Every file and every symbolic link (a VF's device/physfn), relative to root; links are not followed."""
    out = set()
    for dirpath, dirs, names in os.walk(root):
        for n in names + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def same(a, b):
    if os.path.islink(a) or os.path.islink(b):
        return os.path.islink(a) and os.path.islink(b) and os.readlink(a) == os.readlink(b)
    return filecmp.cmp(a, b, shallow=False)


def differences(a, b):
    fa, fb = files(a), files(b)
    diff = ["only in the committed trees: %s" % f for f in sorted(fa - fb)]
    diff += ["missing from the committed trees: %s" % f for f in sorted(fb - fa)]
    diff += ["differs: %s" % f for f in sorted(fa & fb) if not same(os.path.join(a, f), os.path.join(b, f))]
    return diff


with tempfile.TemporaryDirectory() as work:
    made = os.path.join(work, "trees")
    subprocess.run([sys.executable, os.path.join(here, "make_trees.py"), made], check=True)
    # the check must see an edit: one changed file in a copy of the generated trees is a difference
    probe = os.path.join(work, "probe")
    subprocess.run(["cp", "-a", made, probe], check=True)
    with open(os.path.join(probe, "healthy/class/infiniband/mlx5_0/ports/1/state"), "w") as f:
        f.write("1: DOWN\n")
    if not differences(probe, made):
        sys.exit("FAIL: an edited tree matched the generator: the check proves nothing")
    bad = differences(committed, made)
for b in bad:
    print("FAIL:", b)
print("%d files in the committed trees, %d differences from make_trees.py" % (len(files(committed)), len(bad)))
sys.exit(1 if bad else 0)
