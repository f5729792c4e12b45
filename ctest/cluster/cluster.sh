#!/usr/bin/env bash
# A small cluster of "nodes" inside this machine, for testing what gpuaccept says about several nodes.
#
#   cluster.sh up N [SLOTS [RAILS]]  N nodes node01..nodeNN (SLOTS ranks each in the hostfile, default 2),
#                                  each with RAILS interfaces rail0.. besides eth0 (default 0; at most 4)
#   cluster.sh down                remove everything `up` made (also done by `up` first)
#   cluster.sh slow NODE RATE      rate-limit all traffic in and out of NODE (tc tbf; RATE as tc: 40mbit)
#   cluster.sh slow-link A B RATE  rate-limit only the traffic between nodes A and B, both ways (tc htb)
#   cluster.sh slow-rail NODE K RATE  rate-limit rail K of NODE, both ways (tc tbf)
#   cluster.sh counters            print NODE IFACE RX_BYTES TX_BYTES for every interface of every node
#   cluster.sh fabric RATE         every link (eth0 and rails) at RATE: the normal, what clear returns to
#   cluster.sh clear               remove every fault (back to the fabric rate, or unshaped)
#   cluster.sh setenv NODE VAR=VALUE...      daemons (and so ranks) started on NODE get these variables
#   cluster.sh unreachable NODE    nothing can be launched on NODE any more, as with its sshd down
#   cluster.sh run CMD...          run CMD on node01 (the head node) with Open MPI pointed at the cluster
#   cluster.sh hostfile            print the hostfile's path
#
# Each node is a network namespace plus a UTS namespace (its own hostname, which is what the programs
# report), with an address on a private subnet and a veth into a bridge. The bridge lives in a namespace of
# its own ("switch"), so nothing is added to the host's own network and no packet can leave the machine.
# Open MPI's rsh launcher starts real orted daemons through agent.sh (nsenter instead of ssh); ranks talk
# over the TCP BTL between nodes and shared memory inside one.
#
# Rails (issue 46): on an HGX node GPU i reaches the network through NIC i. Here rail K of a node is a veth
# railK into the same bridge, with an address of its own on the same subnet, and a rank reaches the others over
# rail K when rank_rail.sh starts it (Open MPI's TCP BTL on railK alone, from the rank's local index). Rails
# share one subnet so that a rank on rail 0 still reaches one on rail 1 of another node (the world's
# collectives); which interface a packet leaves by follows its source address (a routing table per rail), and
# only the interface owning an address answers ARP for it, so a rail's traffic crosses that rail at both ends.
#
# GA_CLUSTER_NAME (default gacl) prefixes every name, so two clusters can coexist; the subnet is fixed per
# name by GA_CLUSTER_NET (default 10.231.0; a /24). Needs root: without it, exit 77 (ctest's skip code).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=${GA_CLUSTER_NAME:-gacl}
net=${GA_CLUSTER_NET:-10.231.0}
state=/run/$name
sw=$name-sw

die() { echo "cluster.sh: $*" >&2; exit 1; }
need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "cluster.sh: SKIP: needs root (network and UTS namespaces, tc); run as root or in CI" >&2
        exit 77
    fi
    for t in ip tc nsenter unshare mpirun; do
        command -v $t >/dev/null 2>&1 || { echo "cluster.sh: SKIP: '$t' not found" >&2; exit 77; }
    done
}
node_name() { printf 'node%02d' "$1"; }
node_ip() { echo "$net.$((10 + $1))"; }
node_index() { # node01 -> 1; refuses names that are not ours
    case "$1" in node[0-9][0-9]) echo $((10#${1#node})) ;; *) die "unknown node '$1'" ;; esac
}
rail_ip() { echo "$net.$((64 + 32 * $2 + $1 - 1))"; } # NODE_INDEX RAIL: .64-.95 rail 0, .96-.127 rail 1...
nodes() { [ -f "$state/nodes" ] && cat "$state/nodes" || true; }
rails() { [ -s "$state/rails" ] && cat "$state/rails" || echo 0; }
in_node() { # NODE CMD...: run CMD inside the node's namespaces
    local n=$1
    shift
    [ -e "/run/netns/$name-$n" ] || die "node $n is not up"
    nsenter --net="/run/netns/$name-$n" --uts="$state/uts/$n" "$@"
}
in_sw() { ip netns exec "$sw" "$@"; }

down() {
    # Whatever is still running in a node (an orted left by a killed test) goes first.
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$name-" || true); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns delete "$ns" 2>/dev/null || true
    done
    if [ -d "$state/uts" ]; then
        for f in "$state"/uts/*; do
            [ -e "$f" ] || continue
            umount "$f" 2>/dev/null || true
        done
    fi
    if mountpoint -q "$state" 2>/dev/null; then umount "$state" 2>/dev/null || umount -l "$state"; fi
    rm -rf "$state"
}

# Rail K of node I (index): a veth railK into the bridge, its address without a route in the main table (eth0
# keeps the subnet's route, so the daemons' traffic stays on eth0), a table of its own chosen by source address.
add_rail() {
    local i=$1 k=$2 nd ip
    nd=$(node_name "$i")
    ip=$(rail_ip "$i" "$k")
    in_sw ip link add "r$k$nd" type veth peer name "rail$k"
    in_sw ip link set "rail$k" netns "$name-$nd"
    in_sw ip link set "r$k$nd" master br0 up
    in_node "$nd" ip addr add "$ip/24" dev "rail$k" noprefixroute
    in_node "$nd" ip link set "rail$k" up
    in_node "$nd" ip route add "$net.0/24" dev "rail$k" src "$ip" table $((100 + k))
    in_node "$nd" ip rule add from "$ip" table $((100 + k)) pref $((100 + k))
}

rail_sysctls() { # NODE: ARP answered only by the interface owning the address; no reverse-path filter
    local nd=$1
    for c in all default; do
        in_node "$nd" sysctl -qw "net.ipv4.conf.$c.arp_ignore=1" "net.ipv4.conf.$c.arp_announce=2" \
            "net.ipv4.conf.$c.rp_filter=0"
    done
}

up() {
    local n=${1:?usage: cluster.sh up N [SLOTS [RAILS]]} slots=${2:-2} nrails=${3:-0}
    [ "$n" -ge 1 ] && [ "$n" -le 32 ] || die "N must be 1..32"
    [ "$nrails" -ge 0 ] && [ "$nrails" -le 4 ] || die "RAILS must be 0..4"
    down
    mkdir -p "$state"
    # The UTS namespaces are kept alive by bind mounts under $state, which must be a private mount for that.
    mount --bind "$state" "$state"
    mount --make-private "$state"
    mkdir -p "$state/uts" "$state/env"
    ip netns add "$sw"
    in_sw ip link set lo up
    in_sw ip link add br0 type bridge
    in_sw ip link set br0 up
    : >"$state/hostfile"
    for i in $(seq 1 "$n"); do
        local nd
        nd=$(node_name "$i")
        ip netns add "$name-$nd"
        # Created in the switch, one end moved into the node: no interface ever appears on the host.
        in_sw ip link add "v$nd" type veth peer name eth0
        in_sw ip link set eth0 netns "$name-$nd"
        in_sw ip link set "v$nd" master br0 up
        touch "$state/uts/$nd"
        unshare --uts="$state/uts/$nd" hostname "$nd"
        in_node "$nd" ip link set lo up
        in_node "$nd" ip addr add "$(node_ip "$i")/24" dev eth0
        in_node "$nd" ip link set eth0 up
        [ "$nrails" -eq 0 ] || rail_sysctls "$nd"
        for k in $(seq 0 $((nrails - 1))); do add_rail "$i" "$k"; done
        echo "$nd" >>"$state/nodes"
        echo "$nd slots=$slots" >>"$state/hostfile"
        : >"$state/env/$nd"
    done
    # Open MPI needs no name resolution (the agent maps names to namespaces, and the daemons report their own
    # addresses), but gpuaccept run checks that every hostfile entry resolves before launching anything: `run`
    # gives its command a hosts file naming the nodes, bind-mounted over /etc/hosts in a mount namespace of
    # its own, so the machine's /etc/hosts is never touched.
    cp /etc/hosts "$state/hosts"
    for i in $(seq 1 "$n"); do echo "$(node_ip "$i") $(node_name "$i")" >>"$state/hosts"; done
    echo "$nrails" >"$state/rails"
    echo "cluster.sh: up: $n nodes ($(nodes | tr '\n' ' ')), $slots slots each, $nrails rails, subnet $net.0/24"
}

# tbf and htb only: netem (delay) is a module many CI kernels, this one included, do not ship.
shape_iface() { # NODE IFACE SWITCH_PORT RATE: both directions, the node's egress and the switch port's towards it
    local nd=$1 dev=$2 port=$3 rate=$4
    local args=(tbf rate "$rate" burst 64kb latency 2s)
    in_node "$nd" tc qdisc replace dev "$dev" root "${args[@]}"
    in_sw tc qdisc replace dev "$port" root "${args[@]}"
}
shape_node() { shape_iface "$1" eth0 "v$1" "$2"; } # NODE RATE: its eth0 (rails are links of their own)
shape_rail() { shape_iface "$1" "rail$2" "r$2$1" "$3"; } # NODE K RATE

shape_link_end() { # NODE PEER_IP RATE: NODE's traffic to PEER_IP only
    local nd=$1 peer=$2 rate=$3
    in_node "$nd" tc qdisc del dev eth0 root 2>/dev/null || true
    # Unmatched traffic to class 1:10 (far above what a veth carries here), the peer's packets to 1:20.
    in_node "$nd" tc qdisc add dev eth0 root handle 1: htb default 10
    in_node "$nd" tc class add dev eth0 parent 1: classid 1:10 htb rate "$(fabric_rate)" quantum 60000
    in_node "$nd" tc class add dev eth0 parent 1: classid 1:20 htb rate "$rate" quantum 60000
    in_node "$nd" tc filter add dev eth0 protocol ip parent 1: prio 1 u32 match ip dst "$peer/32" flowid 1:20
}

# An unshaped veth is as fast as the CPU copies, so on a busy machine a pair's time is scheduling noise; a
# fabric rate makes every link's time its bandwidth, as on a real network.
fabric_rate() { [ -s "$state/fabric" ] && cat "$state/fabric" || echo 100gbit; }

clear_shaping() {
    for nd in $(nodes); do
        in_node "$nd" tc qdisc del dev eth0 root 2>/dev/null || true
        in_sw tc qdisc del dev "v$nd" root 2>/dev/null || true
        if [ -s "$state/fabric" ]; then shape_node "$nd" "$(cat "$state/fabric")"; fi
        for k in $(seq 0 $(($(rails) - 1))); do
            in_node "$nd" tc qdisc del dev "rail$k" root 2>/dev/null || true
            in_sw tc qdisc del dev "r$k$nd" root 2>/dev/null || true
            if [ -s "$state/fabric" ]; then shape_rail "$nd" "$k" "$(cat "$state/fabric")"; fi
        done
    done
}

counters() { # NODE IFACE RX_BYTES TX_BYTES, from each node's /proc/net/dev (which shows the reader's namespace)
    for nd in $(nodes); do
        in_node "$nd" cat /proc/net/dev | awk -v nd="$nd" 'NR > 2 { sub(":", " "); print nd, $1, $2, $10 }'
    done
}

run() {
    [ -s "$state/hostfile" ] || die "no cluster is up (cluster.sh up N)"
    local head ifs="$net.0/24"
    head=$(head -n1 "$state/nodes")
    # With rails, eth0 by default: a rank started by rank_rail.sh replaces it with its rail.
    [ "$(rails)" -eq 0 ] || ifs=eth0
    # Open MPI: the agent instead of ssh, TCP between nodes on our subnet only, shared memory inside a node.
    # The out-of-band channel (daemons to mpirun) is kept on the subnet as well. Every node's ranks share this
    # machine's few cores, which Open MPI cannot see from a hostfile of separate nodes: idle ranks yield the
    # core (as mpirun --oversubscribe makes them do), else a busy-polling rank holds it for a scheduler tick
    # and every small message waits that long (17 ms instead of 0.5 ms for 8 bytes among 6 nodes here).
    in_node "$head" env \
        OMPI_MCA_mpi_yield_when_idle=1 \
        GA_CLUSTER_NAME="$name" GA_CLUSTER_HOSTFILE="$state/hostfile" \
        OMPI_MCA_plm_rsh_agent="$here/agent.sh" \
        OMPI_MCA_btl=tcp,self,vader \
        OMPI_MCA_btl_tcp_if_include="$ifs" \
        OMPI_MCA_oob_tcp_if_include="$ifs" \
        OMPI_MCA_btl_vader_single_copy_mechanism=none \
        OMPI_MCA_orte_keep_fqdn_hostnames=1 \
        unshare --mount --propagation private sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$state/hosts" "$@"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
up) need_root; up "$@" ;;
down) need_root; down ;;
slow)
    need_root
    [ $# -eq 2 ] || die "usage: cluster.sh slow NODE RATE"
    node_index "$1" >/dev/null
    shape_node "$@"
    ;;
slow-link)
    need_root
    [ $# -eq 3 ] || die "usage: cluster.sh slow-link A B RATE"
    a=$1 b=$2
    shift 2
    shape_link_end "$a" "$(node_ip "$(node_index "$b")")" "$1"
    shape_link_end "$b" "$(node_ip "$(node_index "$a")")" "$1"
    ;;
slow-rail)
    need_root
    [ $# -eq 3 ] || die "usage: cluster.sh slow-rail NODE K RATE"
    node_index "$1" >/dev/null
    [ "$2" -ge 0 ] 2>/dev/null && [ "$2" -lt "$(rails)" ] || die "no rail '$2' (the cluster has $(rails))"
    shape_rail "$@"
    ;;
counters) need_root; counters ;;
clear) need_root; clear_shaping ;;
fabric)
    need_root
    [ $# -eq 1 ] || die "usage: cluster.sh fabric RATE"
    [ -s "$state/hostfile" ] || die "no cluster is up (cluster.sh up N)"
    echo "$1" >"$state/fabric"
    clear_shaping
    ;;
setenv)
    need_root
    nd=${1:?usage: cluster.sh setenv NODE VAR=VALUE...}
    shift
    [ -f "$state/env/$nd" ] || die "node $nd is not up"
    for kv in "$@"; do
        case "$kv" in [A-Za-z_]*=*) printf '%s\n' "$kv" >>"$state/env/$nd" ;; *) die "not VAR=VALUE: $kv" ;; esac
    done
    ;;
unreachable)
    need_root
    nd=${1:?usage: cluster.sh unreachable NODE}
    [ -f "$state/env/$nd" ] || die "node $nd is not up"
    mkdir -p "$state/unreachable"
    : >"$state/unreachable/$nd"
    ;;
run) need_root; run "$@" ;;
hostfile) echo "$state/hostfile" ;;
*)
    sed -n '2,16p' "$0" >&2
    exit 2
    ;;
esac
