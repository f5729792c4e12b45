"""What the Kubernetes deployment tests (check_mpijob_manifests.py, check_daemonset.py) share: the check list and
its ending, running a validator or a renderer as a user would, and breaking one field of a valid object.
The tests set sys.dont_write_bytecode before importing this, so the source tree stays clean.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gatest import check, failures as failed  # noqa: E402


def finish():
    """Prints the outcome and exits: 1 when any check failed."""
    print("{} failed".format(len(failed)) if failed else "all checks passed")
    sys.exit(1 if failed else 0)


def validate(script, args):
    """Runs a validator script on manifests, its report printed into the test's log; True when it exits 0."""
    r = subprocess.run([sys.executable, script] + args, stdout=subprocess.PIPE, universal_newlines=True)
    print(r.stdout, end="")
    return r.returncode == 0


def write_rendered(directory, texts):
    """Writes each rendered manifest to its own numbered file in directory; returns their paths."""
    paths = []
    for i, text in enumerate(texts):
        paths.append(os.path.join(directory, "{:03d}.yaml".format(i)))
        with open(paths[-1], "w") as f:
            f.write(text)
    return paths


def check_refused(script, cases):
    """(options, phrase) cases: the renderer run with the options exits 2, writes nothing to stdout and one
    line to stderr, which holds the phrase."""
    for args, phrase in cases:
        r = subprocess.run(
            [sys.executable, script] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True
        )
        lines = r.stderr.strip().split("\n")
        check(
            r.returncode == 2 and r.stdout == "" and len(lines) == 1 and phrase in lines[0],
            "refuses {}: exit {}, {!r}".format(args, r.returncode, r.stderr.strip()),
        )


def set_path(doc, path, value):
    """Sets doc[path...] = value; value None deletes the key."""
    for k in path[:-1]:
        doc = doc[k]
    if value is None:
        del doc[path[-1]]
    else:
        doc[path[-1]] = value
