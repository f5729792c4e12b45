/* The test double's NCCL debug lines (double_nccl_log.c). */
#ifndef DOUBLE_NCCL_LOG_H
#define DOUBLE_NCCL_LOG_H

/* Writes what NCCL prints about a communicator it made (its network, nodes, paths, connections), when
 * NCCL_DEBUG asks for it. Collective over the communicator's ranks (they share their host names). */
void double_nccl_log_comm(const char *id_name, const void *comm, int rank, int nranks);

#endif
