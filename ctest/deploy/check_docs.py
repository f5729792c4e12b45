#!/usr/bin/python3
"""docs/deployment.md documents every knob users have: each GA_* variable the Slurm scripts read and each
option of the MPIJob and DaemonSet render.py. Fails naming what is missing.
    check_docs.py SOURCE_DIR
"""
import os
import re
import sys

src = sys.argv[1]

doc = open(os.path.join(src, "docs", "deployment.md")).read()
slurm = os.path.join(src, "deploy", "slurm")
knobs = set()
for name in os.listdir(slurm):
    knobs |= set(re.findall(r"\$\{(GA_[A-Z_]+)", open(os.path.join(slurm, name)).read()))
options = set()
for renderer in (("mpijob", "render.py"), ("daemonset", "render.py")):
    options |= set(re.findall(r'add_argument\("(--[a-z-]+)"', open(os.path.join(src, "deploy", *renderer)).read()))
missing = sorted(k for k in knobs | options if "`{}".format(k) not in doc)
print("documented: {} Slurm knobs, {} render.py options".format(len(knobs), len(options)))
if len(knobs) < 10 or len(options) < 20:
    print("FAIL: found too few knobs or options; has the parsing here gone stale?")
    sys.exit(1)
if missing:
    print("FAIL: docs/deployment.md does not mention: " + ", ".join(missing))
    sys.exit(1)
print("all knobs documented")
