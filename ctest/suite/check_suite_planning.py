"""Issue 41: a plan checked before anything launches (the programs' arguments, the not-covered lines, the
allocation's time left, the preflight's retry and the shared report directory)."""
import os

from suite_helpers import run, WORK, check
from check_suite_plans import dry_commands, not_covered, after_prog


def t_check_args():
    """Item 6: a bad --args is refused by --dry-run (and run) with exit 2 and the program's own line, before any
    step starts; good ones pass. Observation 7: a not-covered line only when its cause is there."""
    d = os.path.join(WORK, "never")
    nogpu = {"CUDA_VISIBLE_DEVICES": ""}
    for args, want in ((["--args", "ddp_smoke=--stepz 3"], "ddp_smoke: unknown option '--stepz'"),
                       (["--args", "mem_bw=--min-efficiency lots"], "mem_bw: --min-efficiency"),
                       (["--quick", "--args", "allreduce_bw=stray"], "allreduce_bw: unexpected argument 'stray'")):
        for dry in (["--dry-run"], []):
            p = run(["run", "--report-dir", os.path.join(WORK, "r")] + dry + args, env=nogpu)
            check(p.returncode == 2 and want in p.stderr and len(p.stderr.strip().splitlines()) == 1
                  and "[SUITE] step" not in p.stdout,
                  "%s %s: exit 2 with the program's line, no step started (%d, %r)"
                  % (" ".join(dry), args[-1], p.returncode, p.stderr.strip()))
    ok = run(["run", "--dry-run", "--report-dir", d, "--args", "ddp_smoke=--steps 3"], env=nogpu)
    check(ok.returncode == 0, "good --args: the dry run passes (%d, %s)" % (ok.returncode, ok.stderr.strip()))

    bdir = os.environ["GPUACCEPT_BASELINE_DIR"]
    h100 = os.path.join(bdir, "h100-sxm.json")
    p = run(["run", "--dry-run", "--np", "8", "--baseline", h100, "--report-dir", d], env=nogpu)
    ar = after_prog(dry_commands(p)["allreduce_bw"], "allreduce_bw")
    check("--min-node-busbw" in ar and not any("no --min-node-busbw" in l for l in not_covered(p)),
          "standard, H100 baseline: --min-node-busbw in the command and no line saying it is absent (%s | %s)"
          % (ar, not_covered(p)))
    p = run(["run", "--dry-run", "--np", "8", "--baseline", "none", "--report-dir", d], env=nogpu)
    check("--min-node-busbw" not in after_prog(dry_commands(p)["allreduce_bw"], "allreduce_bw")
          and any("no --min-node-busbw" in l for l in not_covered(p)),
          "standard, no baseline: no --min-node-busbw, and said (%s)" % not_covered(p))
    p = run(["run", "--dry-run", "--np", "8", "--baseline", "none", "--report-dir", d,
             "--args", "allreduce_bw=--min-node-busbw 100"], env=nogpu)
    check(not any("no --min-node-busbw" in l for l in not_covered(p)),
          "--args gave --min-node-busbw: not said to be absent (%s)" % not_covered(p))
