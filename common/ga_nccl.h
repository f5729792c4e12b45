/* NCCL bootstrap and bounded waits (GPU builds only). Rank 0 of the MPI communicator creates the unique id,
 * MPI_Bcast sends it, every rank initialises non-blocking and polls with a deadline. On expiry or error the
 * NCCL communicator is aborted and the job taken down through ga_fatal: no rank is left waiting. */
#ifndef GA_NCCL_H
#define GA_NCCL_H

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

/* Collective over comm (the world, or a subset made with MPI_Comm_split). The rank's device must be current.
 */
ncclComm_t ga_nccl_comm_init(MPI_Comm comm, double timeout_s, const char *what);

/* Waits for the work queued on stream, watching the communicator for asynchronous errors. Fatal on timeout.
 */
void ga_nccl_wait(ncclComm_t comm, cudaStream_t stream, double timeout_s, const char *what);

/* For the result of an NCCL call on a communicator made by ga_nccl_comm_init (non-blocking): ncclInProgress
 * means still being enqueued, and the communicator must be idle before the next NCCL call, so wait for it
 * (bounded). Any other error is fatal after aborting the communicator. */
void ga_nccl_enqueued(ncclComm_t comm, ncclResult_t result, double timeout_s, const char *what);

void ga_nccl_comm_destroy(ncclComm_t comm);

/* NCCL's library version as "2.28.9" (ncclGetVersion) and the header's (NCCL_VERSION_CODE). */
void ga_nccl_versions(char *library, size_t liblen, char *header, size_t hdrlen);

#endif
