#!/usr/bin/env bash
# Open MPI's launch agent for the namespace cluster (cluster.sh), in place of ssh: mpirun calls
#   agent.sh HOST COMMAND WORDS...
# and, as ssh would, the words are one shell command line run on HOST: here inside HOST's network and UTS
# namespaces, with the variables `cluster.sh setenv HOST` gave that node.
set -eu
name=${GA_CLUSTER_NAME:-gacl}
state=/run/$name
# ssh options Open MPI may pass first (-x, -o ...) are meaningless here.
while [ $# -gt 0 ]; do
    case "$1" in
    -x | -n | -T) shift ;;
    -o) shift 2 ;;
    *) break ;;
    esac
done
host=${1:?agent.sh: no host}
shift
case "$host" in
node[0-9][0-9]) ;;
*) echo "agent.sh: '$host' is not a node of cluster $name" >&2; exit 255 ;;
esac
[ -e "/run/netns/$name-$host" ] || { echo "agent.sh: node $host is not up" >&2; exit 255; }
# `cluster.sh unreachable HOST`: what ssh says and does when the node's sshd is down.
if [ -e "$state/unreachable/$host" ]; then
    echo "ssh: connect to host $host port 22: Connection refused" >&2
    exit 255
fi
envs=()
if [ -s "$state/env/$host" ]; then
    while IFS= read -r kv; do envs+=("$kv"); done <"$state/env/$host"
fi
exec nsenter --net="/run/netns/$name-$host" --uts="$state/uts/$host" env "${envs[@]}" /bin/sh -c "$*"
