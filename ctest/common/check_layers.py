#!/usr/bin/env python3
"""The core/runtime layering on what was built. Exit 0 when every check holds, 1 with one line per breach.

- Each core header compiles on its own, with only the core's and jansson's include paths (a header that
  pulls in the runtime fails here: mpi.h is not on those paths).
- No core header or source reaches an MPI, CUDA, NCCL or hwloc header, whatever the include paths (hwloc.h
  sits in /usr/include, where a plain compile would find it), nor a header of common/ outside the core
  (common/runtime/, MPI-free ones such as ga_deadline.h included, whatever the include paths).
- No core-only executable (the front-end, the analysis tests) loads libmpi, libcudart, libnccl, libcublas,
  libcuda or libhwloc; a runtime program does load libmpi, which shows that the probe sees what it looks for.
"""
import argparse
import os
import re
import subprocess
import sys

FORBIDDEN_HEADER = re.compile(
    r"(^|/)(mpi\.h|mpi_portable_platform\.h|hwloc\.h|hwloc/|cuda[^/]*\.h|" r"cublas[^/]*\.h|nccl\.h)"
)
FORBIDDEN_LIB = re.compile(r"\blib(mpi|cudart|cuda|nccl|cublas|cublasLt|hwloc)\b[^ ]*\.so")


def compile_flags(args):
    flags = ["-std=c17", "-D_GNU_SOURCE"]
    for d in args.include:
        flags += ["-I", d]
    return flags


def dependencies(args, path, language_c):
    """The files the preprocessor opens for path, or None with the compiler's message when it fails."""
    cmd = [args.cc] + compile_flags(args) + (["-x", "c"] if language_c else []) + ["-M", path]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[:3]
    words = p.stdout.replace("\\\n", " ").split()
    return [w for w in words[1:] if not w.endswith(":")], None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--common-dir", required=True, help="the folder of both layers (common)")
    ap.add_argument("--include", nargs="*", default=[])
    ap.add_argument("--files", nargs="+", required=True, help="the core target's sources and headers")
    ap.add_argument("--core-exe", nargs="*", default=[])
    ap.add_argument("--runtime-exe", required=True)
    args = ap.parse_args()

    breaches = []
    files = [f if os.path.isabs(f) else os.path.join(args.common_dir, f) for f in args.files]
    headers = [f for f in files if f.endswith(".h")]
    common_dir = os.path.realpath(args.common_dir)
    core = {os.path.realpath(f) for f in files}
    if not headers or not any(f.endswith(".c") for f in files):
        breaches.append("no core headers or sources given: the check would prove nothing")

    for path in files:
        name = os.path.basename(path)
        if path.endswith(".h"):
            # Alone, as the first thing a translation unit includes.
            p = subprocess.run(
                [args.cc] + compile_flags(args) + ["-x", "c", "-fsyntax-only", path], capture_output=True, text=True
            )
            if p.returncode != 0:
                first = (p.stderr.strip().splitlines() or ["?"])[0]
                breaches.append(f"{name} does not compile alone with the core's include paths: {first}")
                continue
        deps, err = dependencies(args, path, path.endswith(".h"))
        if deps is None:
            breaches.append(f"{name}: the preprocessor failed: {' / '.join(err)}")
            continue
        bad = sorted({d for d in deps if FORBIDDEN_HEADER.search(d)})
        if bad:
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            breaches.append(f"{name} reaches {bad[0]}{more}")
        # A runtime header reached by a relative path ("../runtime/..."), which no include path keeps out.
        runtime = sorted(
            {
                os.path.basename(d)
                for d in deps
                if os.path.realpath(d).startswith(common_dir + os.sep) and os.path.realpath(d) not in core
            }
        )
        if runtime:
            breaches.append(f"{name} includes {', '.join(runtime)}, which the core does not own")

    def loaded(exe):
        """The forbidden libraries among those ldd lists for exe."""
        p = subprocess.run(["ldd", exe], capture_output=True, text=True)
        if p.returncode != 0:
            breaches.append(f"ldd {exe} failed: {p.stderr.strip()}")
            return []
        names = [line.split()[0] for line in p.stdout.splitlines() if line.split()]
        return [n for n in names if FORBIDDEN_LIB.search(n)]

    for exe in args.core_exe:
        bad = loaded(exe)
        if bad:
            breaches.append(f"{os.path.basename(exe)} is core-only but loads {', '.join(bad)}")
    if not any(lib.startswith("libmpi") for lib in loaded(args.runtime_exe)):
        breaches.append(
            f"{os.path.basename(args.runtime_exe)} (a runtime program) shows no libmpi under ldd: "
            "the probe cannot see what it looks for"
        )
    if not args.core_exe:
        breaches.append("no core-only executable given")

    for b in breaches:
        print("FAIL", b)
    print(
        f"{len(headers)} core headers, {len(files) - len(headers)} core sources, "
        f"{len(args.core_exe)} core-only executables checked: {len(breaches)} breach(es)"
    )
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
