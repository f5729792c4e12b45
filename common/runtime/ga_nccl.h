/* NCCL bootstrap and bounded waits (GPU builds only). Rank 0 of the MPI communicator creates the unique id,
 * MPI_Bcast sends it, every rank initialises a blocking communicator. Every call that can wait is bounded by
 * the deadline watcher (ga_deadline), armed here around the wait with the caller's bound. Only the main
 * thread calls NCCL: on expiry the watcher hands the expiry over, and the main thread, polling in its waits,
 * aborts the communicator and ends the job (exit 4, naming the operation, communicator and rank); a main
 * thread blocked inside a call that never returns is left behind, and the watcher ends the job without
 * touching NCCL (the process exit takes the kernels down). NCCL frees a communicator in ncclCommAbort and
 * forbids two threads on one communicator at once: a watcher that aborted it would leave the main thread's
 * next call a use after free. The waits on a stream also check the bound themselves and poll, yielding the
 * CPU between polls (ga_wait_pause: NCCL's proxy thread runs in this process's CPU mask and must not be
 * starved), with sleeps short enough that a timed loop still measures the GPU.
 *
 * Why blocking: a non-blocking communicator makes NCCL answer ncclInProgress at every group end, each single
 * collective included (and start a thread for it), and the caller then has to poll; with a blocking one a
 * collective call returns once enqueued. NCCL_COMM_BLOCKING=0 in the environment overrides the config: the
 * calls here then poll ncclInProgress out, within the same bounds. */
#ifndef GA_NCCL_H
#define GA_NCCL_H

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

/* Collective over comm (the world, or a subset made with MPI_Comm_split). The rank's device must be current.
 * label names the communicator in every message about it ("world", "pair 3 round 1"). timeout_s bounds the
 * init (0 or less: no bound of its own). While the communicator lives, an expiring deadline aborts it. */
ncclComm_t ga_nccl_comm_init(MPI_Comm comm, double timeout_s, const char *label);
/* The same with ncclConfig_t.CTAPolicy set (NCCL_CTA_POLICY_*; -1 leaves NCCL's default): nccl-tests' -x. */
ncclComm_t ga_nccl_comm_init_cta(MPI_Comm comm, double timeout_s, const char *label, int cta_policy);

/* Waits, polling and yielding (ga_wait_pause), for the work queued on stream, watching the communicator for
 * asynchronous errors. An asynchronous error aborts the communicator and exits 3; no completion within
 * timeout_s aborts it and exits
 * 4. what names the operation (and its size), the message adds the communicator and rank. */
void ga_nccl_wait(ncclComm_t comm, cudaStream_t stream, double timeout_s, const char *what);

/* Bounds the NCCL calls that follow (the enqueue of collectives, which may block on a blocking communicator,
 * e.g. while connecting to a peer that never comes) until ga_nccl_unbound. */
void ga_nccl_bound(ncclComm_t comm, double timeout_s, const char *what);
void ga_nccl_unbound(void);

/* For the result of an NCCL call: any error aborts the communicator and exits 3. ncclInProgress (which only a
 * non-blocking communicator returns) is waited out, polling and yielding, within timeout_s. */
void ga_nccl_enqueued(ncclComm_t comm, ncclResult_t result, double timeout_s, const char *what);

/* ncclMemAlloc of bytes (what names the buffer): out of device memory aborts the communicator and ends the
 * job with exit 5, as out of memory is everywhere in the suite; any other failure exits 3. */
void ga_nccl_mem_alloc(ncclComm_t comm, void **p, size_t bytes, const char *what);

/* Finalizes (bounded by timeout_s) and destroys the communicator. */
void ga_nccl_comm_destroy(ncclComm_t comm, double timeout_s);

/* NCCL's library version as "2.28.9" (ncclGetVersion) and the header's (NCCL_VERSION_CODE). */
void ga_nccl_versions(char *library, size_t liblen, char *header, size_t hdrlen);

#endif
