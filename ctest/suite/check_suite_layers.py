#!/usr/bin/env python3
"""The front-end's layers (suite/CMakeLists.txt): no file of a layer reaches a header of a layer above it or
beside it, whatever the include paths (a relative "../run/step_runner.h" included), and no file reaches a
program's header (bench/): the front-end knows the programs through the registry alone (each program's estimate
through the generated table, docs/architecture.md). Each file is preprocessed
with its own layer's include paths, and every header it opens is held to the layer's allowed folders.
Before judging, a file made to break the rule must be caught, so that the check is shown able to fail.
usage: check_suite_layers.py CC SUITE_DIR -- INCLUDE_DIR... Exit 0 when the layering holds, 1 with a line per
breach."""
import os
import subprocess
import sys
import tempfile

# Each layer, lowest first, with the layers it may read (its own and those below).
ALLOWED = {
    "summary": ["summary"],
    "render": ["render", "summary"],
    "handoff": ["handoff", "render", "summary"],
    "run": ["run", "summary"],
    "commands": ["commands", "run", "handoff", "render", "summary"],
}

cc, suite = sys.argv[1], os.path.realpath(sys.argv[2])
bench = os.path.join(os.path.dirname(suite), "bench")
extra = sys.argv[sys.argv.index("--") + 1 :]


def breaches_of(path, layer):
    flags = ["-std=c17", "-D_GNU_SOURCE"] + [f"-I{os.path.join(suite, d)}" for d in ALLOWED[layer]]
    flags += [f"-I{d}" for d in extra]
    p = subprocess.run([cc] + flags + ["-M", path], capture_output=True, text=True)
    if p.returncode != 0:
        return [
            f"{os.path.relpath(path, suite)}: does not preprocess with the {layer} layer's include paths: "
            + (p.stderr.strip().splitlines() or ["?"])[0]
        ]
    deps = [w for w in p.stdout.replace("\\\n", " ").split()[1:] if not w.endswith(":")]
    out = []
    for d in deps:
        real = os.path.realpath(d)
        if real.startswith(bench + os.sep):
            out.append(
                f"{os.path.relpath(path, suite)} ({layer}) includes {os.path.relpath(real, bench)}: a "
                "program's header (the front-end reaches a program through the registry)"
            )
            continue
        if not real.startswith(suite + os.sep):
            continue
        folder = os.path.relpath(real, suite).split(os.sep)[0]
        if folder not in ALLOWED[layer]:
            out.append(
                f"{os.path.relpath(path, suite)} ({layer}) includes {os.path.relpath(real, suite)} "
                f"({folder}: not below it)"
            )
    return out


# The check must catch a summary file that reaches the runner by a relative path.
with tempfile.NamedTemporaryFile("w", suffix=".c", dir=os.path.join(suite, "summary"), delete=False) as t:
    t.write('#include "../run/step_runner.h"\n')
try:
    caught = breaches_of(t.name, "summary")
finally:
    os.unlink(t.name)
if not caught:
    sys.exit("FAIL: a summary file including ../run/step_runner.h was not caught: the check proves nothing")
# And a runner file that reaches a program's header by a relative path (as estimate_ar.c once did ar_opts.h).
with tempfile.NamedTemporaryFile("w", suffix=".c", dir=os.path.join(suite, "run"), delete=False) as t:
    t.write('#include "../../bench/allreduce_bw/ar_opts.h"\n')
try:
    caught_program = breaches_of(t.name, "run")
finally:
    os.unlink(t.name)
if not caught_program:
    sys.exit("FAIL: a run file including bench/allreduce_bw/ar_opts.h was not caught: the check proves nothing")

breaches, files = [], 0
for layer in ALLOWED:
    folder = os.path.join(suite, layer)
    for name in sorted(os.listdir(folder)):
        if name.endswith((".c", ".h")):
            files += 1
            breaches += breaches_of(os.path.join(folder, name), layer)
for b in breaches:
    print("FAIL:", b)
print(f"{files} files in {len(ALLOWED)} layers, {len(breaches)} breaches (control caught: {caught[0]})")
sys.exit(1 if breaches or files == 0 else 0)
