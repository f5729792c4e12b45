#!/usr/bin/python3
"""Static checks of deploy/container/Dockerfile as users build it, on CUDA's bases (CI builds and runs it on a
Debian base instead: ctest/container/): what it copies and runs exists in the repository, and it installs the
suite where the Slurm runner and the MPIJob manifests expect it, with the sshd the workers start.
    check_container.py SOURCE_DIR
"""
import os
import re
import sys

src = sys.argv[1]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(src, "deploy", "mpijob"))
import render  # noqa: E402
from deploy_helpers import check, finish  # noqa: E402


text = open(os.path.join(src, "deploy", "container", "Dockerfile")).read()
# One instruction per logical line: join continuations, drop comments.
lines = [l for l in re.sub(r"\\\n", " ", text).splitlines() if l.strip() and not l.lstrip().startswith("#")]
instr = [(l.split(None, 1)[0].upper(), l.split(None, 1)[1] if " " in l.strip() else "") for l in lines]
# The bases are build arguments (CI builds on Debian, ctest/container/): their defaults, expanded, are CUDA's.
args = {}
for i, a in instr:
    if i == "ARG" and "=" in a:
        k, v = a.split("=", 1)
        args[k] = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), v)
stages = [
    re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), a.split()[0]) for i, a in instr if i == "FROM"
]
check(
    len(stages) == 2
    and stages[0].startswith("nvidia/cuda:")
    and "devel" in stages[0]
    and stages[1].startswith("nvidia/cuda:")
    and "runtime" in stages[1],
    "two stages, by default CUDA devel to build and CUDA runtime to run: {}".format(stages),
)

for i, a in instr:
    if i == "COPY" and not a.startswith("--from"):
        for s in a.split()[:-1]:
            check(s == "." or os.path.exists(os.path.join(src, s)), "COPY source {} exists".format(s))
runs = " ".join(a for i, a in instr if i == "RUN")
scripts = set(re.findall(r"(?<![\w/])((?:launch|deploy)/[\w./-]+\.sh)", runs))
check("launch/install-deps.sh" in scripts, "the build stage installs dependencies with CI's launch/install-deps.sh")
for s in sorted(scripts):
    check(os.access(os.path.join(src, s), os.X_OK), "{} exists and is executable".format(s))
check(re.search(r"launch/dev\.sh install", runs) is not None, "the suite is installed with CI's launch/dev.sh")
dev = open(os.path.join(src, "launch", "dev.sh")).read()
check(
    "-DGPUACCEPT_REQUIRE_CUDA=ON" in dev and "cmake --install" in dev,
    "dev.sh install fails rather than silently leaving out the GPU paths, and installs",
)

prefixes = set(re.findall(r"ARG GA_PREFIX=(\S+)", text))
srun_default = re.search(
    r"GA_PREFIX:-([^}]+)\}", open(os.path.join(src, "deploy", "slurm", "gpuaccept-srun.sh")).read()
)
mpijob_default = render.parse_args([]).prefix
check(
    prefixes == {mpijob_default} and srun_default and srun_default.group(1) == mpijob_default,
    "one install prefix: Dockerfile {}, MPIJob {}, Slurm {}".format(
        sorted(prefixes), mpijob_default, srun_default and srun_default.group(1)
    ),
)
check("openmpi-bin" in runs and "openssh-server" in runs, "runtime has Open MPI and sshd")
worker = render.mpijob(render.with_defaults(render.parse_args([])), "suite")["spec"]["mpiReplicaSpecs"]["Worker"]
check(
    worker["template"]["spec"]["containers"][0]["command"][0] == "/usr/sbin/sshd" and "mkdir -p /run/sshd" in runs,
    "workers start /usr/sbin/sshd, whose privilege-separation directory the image creates",
)
ignore = open(os.path.join(src, "deploy", "container", "Dockerfile.dockerignore")).read().split()
check(".git" in ignore and any(p.startswith("build") for p in ignore), "build trees and .git stay out of the context")

finish()
