# shellcheck shell=bash
# Sourced by check_image.sh (which defines B, buildah_cmd, check, work, src, here, python, tag, net and the working
# containers $net-launcher and $net-worker): an MPIJob's launcher pod and its one worker pod as two containers
# of the image. As on a cluster:
#   - each pod has a network namespace of its own (a veth pair between the two), its own host name, and an
#     /etc/hosts naming both pods (the kubelet mounts one too), as the job's headless Service resolves them;
#   - the worker runs the manifest's command (sshd) as the pod's user; the launcher runs the manifest's command
#     with the manifest's env plus what the operator appends (image_json.py pods), the operator's hostfile at
#     /etc/mpi/hostfile and the job's ssh Secret at sshAuthMountPath;
#   - the launcher is rank 0's node (runLauncherAsWorker): rank 1 reaches the worker only through its sshd.

# The operator's ssh Secret (id_rsa: an ECDSA P-521 key in PEM, id_rsa.pub, authorized_keys) as the kubelet
# mounts it: the volume's directory world-writable and sticky, the files in a timestamped directory reached
# through ..data symlinks; mode 0600 at /root/.ssh (the operator's defaultMode there), else 0644; group fsGroup.
secret_volume() { # DIR MODE GID
    local dir=$1 mode=$2 gid=$3 ts=..2026_01_01_00_00_00.000000001 f
    rm -rf "$dir" && mkdir -p "$dir/$ts" || return 1
    B run --isolation chroot -v "$dir/$ts:/keys" "$net-check" -- \
        ssh-keygen -q -t ecdsa -b 521 -m PEM -N '' -C '' -f /keys/id_rsa || return 1
    cp "$dir/$ts/id_rsa.pub" "$dir/$ts/authorized_keys"
    chmod "$mode" "$dir/$ts"/* && chgrp -R "$gid" "$dir/$ts" && chmod 1777 "$dir" && ln -s "$ts" "$dir/..data"
    for f in id_rsa id_rsa.pub authorized_keys; do ln -s "..data/$f" "$dir/$f"; done
}

pods_network() { # the launcher at 10.233.0.1, the worker at 10.233.0.2
    ip netns add "$net-launcher" && ip netns add "$net-worker" &&
        ip -n "$net-launcher" link add eth0 type veth peer name peer0 &&
        ip -n "$net-launcher" link set peer0 netns "$net-worker" &&
        ip -n "$net-worker" link set peer0 name eth0 || return 1
    local i=1 ns
    for ns in "$net-launcher" "$net-worker"; do
        ip -n "$ns" link set lo up && ip -n "$ns" addr add "10.233.0.$i/24" dev eth0 &&
            ip -n "$ns" link set eth0 up || return 1
        i=$((i + 1))
    done
}

pods_down() { # the worker's sshd and whatever else runs in the two namespaces (only ours), then the namespaces
    local ns pid
    for ns in "$net-launcher" "$net-worker"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns delete "$ns" 2>/dev/null
    done
}

wait_for_sshd() { # PORT: bounded, from the launcher's namespace
    local n
    for n in $(seq 1 30); do
        ip netns exec "$net-launcher" timeout 2 bash -c "exec 3<>/dev/tcp/10.233.0.2/$1" 2>/dev/null && return 0
        sleep 1
    done
    return 1
}

# mpijob_case NAME [render.py options]: renders a 2-node job running env_audit, starts its two pods, and checks
# that the launcher exits 0 with a passing verdict, one rank in each pod, and the worker's sshd let the key in.
mpijob_case() {
    local name=$1 dir=$work/pods/$1
    shift
    local job launcher_fqdn worker_fqdn run_as ssh_path report_dir
    mkdir -p "$dir/mpi" && mkdir -m 0777 "$dir/reports" || return 1
    "$python" "$src/deploy/mpijob/render.py" --nodes 2 --gpus-per-node 1 --cpu-only --program env_audit \
        --image "$tag" --args='--quick --step-timeout 120' "$@" >"$dir/job.yaml" &&
        "$python" "$here/image_json.py" pods "$dir/job.yaml" "$dir" >/dev/null &&
        source "$dir/pod.vars" && cp "$dir/hostfile" "$dir/mpi/hostfile" ||
        { check "$name: the manifest renders and has the two pods" false; return; }
    local mode=0644 user=() wcmd lcmd envs=() kv
    [ "$ssh_path" = /root/.ssh ] && mode=0600
    [ "$run_as" = 0 ] || user=(--user "$run_as:$run_as")
    pods_network || { check "$name: the pods' network" false; pods_down; return; }
    secret_volume "$dir/ssh" "$mode" "$run_as" || { check "$name: the ssh Secret" false; pods_down; return; }
    printf '127.0.0.1 localhost\n10.233.0.1 %s\n10.233.0.2 %s\n' "$launcher_fqdn" "$worker_fqdn" >"$dir/hosts"
    mapfile -d '' -t wcmd <"$dir/worker.cmd"
    mapfile -d '' -t lcmd <"$dir/launcher.cmd"
    while IFS= read -r kv; do envs+=(-e "$kv"); done <"$dir/launcher.env"
    ip netns exec "$net-worker" "${buildah_cmd[@]}" run --isolation chroot --hostname "$job-worker-0" "${user[@]}" \
        --no-hosts -v "$dir/hosts:/etc/hosts:ro" -v "$dir/ssh:$ssh_path:ro" "$net-worker" -- "${wcmd[@]}" \
        >"$dir/worker.log" 2>&1 &
    disown # stopped by pods_down, with everything else in its namespace
    check "$name: the worker's sshd listens on port ${wcmd[-1]}" wait_for_sshd "${wcmd[-1]}"
    local rc=0
    ip netns exec "$net-launcher" timeout 240 "${buildah_cmd[@]}" run --isolation chroot --hostname "$job-launcher" \
        "${user[@]}" --no-hosts -v "$dir/hosts:/etc/hosts:ro" -v "$dir/ssh:$ssh_path:ro" -v "$dir/mpi:/etc/mpi:ro" \
        -v "$dir/reports:$report_dir" "${envs[@]}" "$net-launcher" -- "${lcmd[@]}" >"$dir/launcher.log" 2>&1 || rc=$?
    pods_down
    # a failed launcher shows its whole log (why a node was not reached is early in it), a passing one its end
    local lines=15
    [ "$rc" -eq 0 ] || lines=200
    sed '/^=== gpuaccept report/,/^=== end/d' "$dir/launcher.log" | grep -v '^\[SUITE\] not covered' | tail -n $lines
    echo "--- worker's sshd:" && tail -n $((lines / 2)) "$dir/worker.log"
    check "$name: the launcher exits 0 (got $rc)" test "$rc" -eq 0
    check "$name: a passing verdict with one rank in each pod" "$python" "$here/image_json.py" mpijob \
        "$dir/reports" "$dir/launcher.log" "$job-launcher" "$job-worker-0"
    local who=root
    [ "$run_as" = 0 ] || who=mpiuser
    check "$name: the worker's sshd accepted the job's key for $who" \
        grep -q "Accepted publickey for $who from 10.233.0.1" "$dir/worker.log"
}
