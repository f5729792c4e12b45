#!/usr/bin/env python3
"""End-to-end checks of the gpuaccept front-end. Usage: check_suite.py TEST GPUACCEPT FIXTURES WORKDIR
TEST: cli | baseline_compare | run_quick | run_faults | run_nodes | html_chromium | html_scale | html_found | plurals |
untrusted | profiles | baseline_sources | run_profiles | run_budget | estimate | run_quick_relative. Exit 0 pass, 1 fail, 77 skipped.

The checks live by topic: check_suite_reports.py (reports given to the front-end), check_suite_runs.py (real
runs), check_suite_plans.py (profiles and estimates, nothing run), check_suite_html.py (the browser); their
shared helpers in suite_helpers.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_suite_html as html  # noqa: E402
import check_suite_plans as plans  # noqa: E402
import check_suite_planning as planning  # noqa: E402
import check_suite_reports as reports  # noqa: E402
import check_suite_runs as runs  # noqa: E402
from suite_helpers import TEST, failures  # noqa: E402

CHECKS = {
    "cli": reports.t_cli,
    "baseline_compare": reports.t_baseline_compare,
    "untrusted": reports.t_untrusted,
    "baseline_sources": reports.t_baseline_sources,
    "run_quick": runs.t_run_quick,
    "run_faults": runs.t_run_faults,
    "run_nodes": runs.t_run_nodes,
    "run_profiles": runs.t_run_profiles,
    "run_budget": runs.t_run_budget,
    "run_quick_relative": runs.t_run_quick_relative,
    "run_train_cut": runs.t_run_train_cut,
    "profiles": plans.t_profiles,
    "estimate": plans.t_estimate,
    "check_args": planning.t_check_args,
    "preflight_retry": planning.t_preflight_retry,
    "allocation": planning.t_allocation,
    "sweep_cut": planning.t_sweep_cut,
    "cpu_cluster": planning.t_cpu_cluster,
    "html_chromium": html.t_html_chromium,
    "html_scale": html.t_html_scale,
    "html_found": html.t_html_found,
    "plurals": html.t_plurals,
}
if TEST not in CHECKS:
    sys.exit("unknown check %r (one of %s)" % (TEST, ", ".join(CHECKS)))
CHECKS[TEST]()
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
