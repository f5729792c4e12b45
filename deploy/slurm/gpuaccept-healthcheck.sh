#!/bin/sh
# gpuaccept's fast node check for Slurm (docs/deployment.md, "The fast node check"): install on every node and
# name it in slurm.conf as HealthCheckProgram (with HealthCheckInterval), Prolog or Epilog. slurmd runs it as
# root, so node_health can read the kernel log (Xids) even under kernel.dmesg_restrict=1. It checks this node
# alone with node_health (about a second, no MPI job), prints one line, drains the node on a failure
# ("gpuaccept: <code> <message>") and resumes it once healthy if gpuaccept drained it. Exit 0 healthy, 1 not:
# Slurm ignores a HealthCheckProgram's exit code; a Prolog's non-zero exit also requeues the job, held.
#
# slurmd passes no environment to a HealthCheckProgram: set the options in $GA_HEALTHCHECK_CONF
# (default /etc/default/gpuaccept-healthcheck), e.g.
#   GA_PREFIX=/opt/gpuaccept                  (or GA_BIN_DIR=, where gpuaccept and node_health are)
#   GA_NODE_HEALTH_ARGS="--expect-gpus 8 --sku dgx-h100 --xid-since 86400"
GA_HEALTHCHECK_CONF=${GA_HEALTHCHECK_CONF:-/etc/default/gpuaccept-healthcheck}
# shellcheck disable=SC1090
[ ! -r "$GA_HEALTHCHECK_CONF" ] || . "$GA_HEALTHCHECK_CONF"
GA_PREFIX=${GA_PREFIX:-/opt/gpuaccept}
GA_BIN_DIR=${GA_BIN_DIR:-$GA_PREFIX/bin} # gpuaccept and node_health, as in the sbatch files
GA_NODE_HEALTH_ARGS=${GA_NODE_HEALTH_ARGS:-}
rc=0
# node_health's options are split at blanks on purpose (no paths with spaces).
# shellcheck disable=SC2086
out=$(GPUACCEPT_BIN_DIR="$GA_BIN_DIR" "$GA_BIN_DIR/gpuaccept" node-check --drain -- $GA_NODE_HEALTH_ARGS 2>&1) ||
    rc=$?
printf '%s\n' "$out"
# slurmd keeps no output of a HealthCheckProgram: the line goes to the system log too
! command -v logger >/dev/null 2>&1 || logger -t gpuaccept-healthcheck -- "$out"
exit "$rc"
