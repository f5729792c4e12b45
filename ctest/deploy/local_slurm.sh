#!/usr/bin/env bash
# A private one-node Slurm for the deployment tests: munged, slurmctld and slurmd, all started here with
# their keys, sockets, ports, state, spool, pid and log files under one temporary directory, so the test
# needs no system configuration and can never touch a site's real Slurm. Source it, then:
#   ga_slurm_start || exit 1; trap ga_slurm_stop EXIT
# Clients find this cluster through SLURM_CONF, which ga_slurm_start exports. ga_slurm_stop kills only
# the process ids this file started. Needs root (slurmd launches tasks) and the packages of
# launch/install-deps.sh --slurm (on Debian 12 the pmix plugin also needs libpmix-dev).

GA_SLURM_WAIT=${GA_SLURM_WAIT:-60} # seconds any single wait below may take
ga_slurm_pids=()

ga_slurm_log() { echo "local-slurm: $*" >&2; }

# Polls "$@" once a second until it succeeds or GA_SLURM_WAIT seconds pass.
ga_slurm_wait_for() {
    local i
    for ((i = 0; i < GA_SLURM_WAIT; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 1
    done
    return 1
}

# Ports the kernel says are free now; the daemons bind them a moment later (a race we accept in tests).
ga_slurm_free_ports() {
    /usr/bin/python3 - "$1" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

ga_slurm_start() {
    local p
    for p in munged mungekey slurmctld slurmd sinfo srun sbatch; do
        command -v "$p" >/dev/null || {
            ga_slurm_log "'$p' not found: run launch/install-deps.sh --slurm"
            return 1
        }
    done
    [ "$(id -u)" -eq 0 ] || {
        ga_slurm_log "must run as root (slurmd starts tasks as the submitting user)"
        return 1
    }
    GA_SLURM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ga-slurm.XXXXXX") || return 1
    chmod 700 "$GA_SLURM_DIR"
    local d=$GA_SLURM_DIR
    mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log" "$d/run"
    chmod 700 "$d/munge"

    mungekey --create --keyfile="$d/munge/munge.key" || return 1
    # --force: munged otherwise insists that every user can reach its socket, and this directory is 0700.
    munged --foreground --force --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
        --pid-file="$d/run/munged.pid" --log-file="$d/log/munged.log" --seed-file="$d/munge/seed" \
        >"$d/log/munged.out" 2>&1 &
    ga_slurm_pids+=($!)
    ga_slurm_wait_for test -S "$d/munge/munge.socket" || {
        ga_slurm_log "munged did not start; log:"
        cat "$d/log/munged.log" >&2
        return 1
    }

    local host ports ctld_port slurmd_port node
    host=$(hostname -s)
    # GA_SLURM_NODENAME: a NodeName other than the host name (NodeHostname), as some sites name their nodes.
    node=${GA_SLURM_NODENAME:-$host}
    ports=$(ga_slurm_free_ports 2) || return 1
    read -r ctld_port slurmd_port <<<"$ports"
    # CPUs=8 with config_overrides lets a 2-core machine accept 4 (or 8) tasks, as a GPU node would.
    cat >"$d/slurm.conf" <<CONF
ClusterName=gatest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=ga Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
    # GA_SLURM_EXTRA_CONF: lines a test adds (HealthCheckProgram=..., HealthCheckInterval=...).
    [ -z "${GA_SLURM_EXTRA_CONF:-}" ] || printf '%s\n' "$GA_SLURM_EXTRA_CONF" >>"$d/slurm.conf"
    # PMIx's per-step client directories under this instance's directory, not /tmp/spmix_appdir_<uid>_<step>:
    # every instance numbers its jobs from 1, and a directory an earlier instance left for step 3.1 made this
    # one's step 3.1 fail to launch ("File exists"), as when CI runs this test in each of its build trees.
    mkdir -p "$d/pmix"
    echo "PMIxCliTmpDirBase=$d/pmix" >"$d/mpi.conf"
    export SLURM_CONF=$d/slurm.conf
    slurmctld -D -i >"$d/log/slurmctld.out" 2>&1 &
    ga_slurm_pids+=($!)
    slurmd -D -N "$node" >"$d/log/slurmd.out" 2>&1 &
    ga_slurm_pids+=($!)
    if ! ga_slurm_wait_for ga_slurm_node_idle; then
        ga_slurm_log "node never became idle; logs:"
        tail -n 30 "$d/log/slurmctld.log" "$d/log/slurmd.log" >&2
        return 1
    fi
    ga_slurm_log "up in $d (slurmctld :$ctld_port, slurmd :$slurmd_port)"
}

ga_slurm_node_idle() { sinfo -h -o %T | grep -qx idle; }

# Stops what ga_slurm_start started, newest first, and removes its directory unless GA_SLURM_KEEP=1.
ga_slurm_stop() {
    [ -n "${SLURM_CONF:-}" ] && [ "${#ga_slurm_pids[@]}" -gt 1 ] && scancel --full --quiet -p ga 2>/dev/null
    local i pid
    for ((i = ${#ga_slurm_pids[@]} - 1; i >= 0; i--)); do
        pid=${ga_slurm_pids[i]}
        kill "$pid" 2>/dev/null || continue
        GA_SLURM_WAIT=15 ga_slurm_wait_for ga_slurm_gone "$pid" || kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    ga_slurm_pids=()
    if [ -n "${GA_SLURM_DIR:-}" ] && [ "${GA_SLURM_KEEP:-0}" != 1 ]; then
        rm -rf "$GA_SLURM_DIR"
    fi
}

ga_slurm_gone() { ! kill -0 "$1" 2>/dev/null; }
