#!/bin/sh
# Starts one rank of the namespace cluster on its rail (cluster.sh up N SLOTS RAILS): the rank of local index K
# talks to other nodes over interface railK alone, as GPU K of an HGX node does over NIC K. mpirun runs
#   rank_rail.sh PROGRAM ARGS...
# in place of the program; Open MPI gives each rank its local index, and the TCP BTL reads its interfaces
# from the environment at MPI_Init, which the program has not reached yet.
k=${OMPI_COMM_WORLD_LOCAL_RANK:?rank_rail.sh: not started by mpirun}
# /proc/sys/net shows this node's own interfaces: a rank without a rail of its index is an error, not eth0.
if [ ! -d "/proc/sys/net/ipv4/conf/rail$k" ]; then
    echo "rank_rail.sh: $(hostname) has no interface rail$k for local rank $k" >&2
    exit 2
fi
export OMPI_MCA_btl_tcp_if_include="rail$k"
exec "$@"
