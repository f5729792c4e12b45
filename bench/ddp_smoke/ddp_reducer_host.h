/* Gradient averaging on the host path: one MPI_Iallreduce per bucket, started as soon as the backward pass
 * completes the bucket, progressed with MPI_Testall between layers, and finished with a bounded wait. */
#ifndef DDP_REDUCER_HOST_H
#define DDP_REDUCER_HOST_H

#include <mpi.h>

#include "ddp_bucket.h"

typedef struct {
    const ddp_bucket_plan *plan;
    MPI_Comm comm;
    double *grad;
    MPI_Request req[DDP_MAX_LINEAR];
    int launched;
    double timeout_s;
} ddp_host_reducer;

void ddp_host_reducer_init(ddp_host_reducer *r, const ddp_bucket_plan *plan, MPI_Comm comm, double *grad,
                           double timeout_s);
/* A ddp_grad_ready_fn: launches the bucket `layer` completes, then lets MPI progress the others. */
void ddp_host_reducer_on_grad_ready(void *reducer, int layer);
/* Waits for every bucket of this step; returns the seconds spent waiting. Fatal after timeout_s. */
double ddp_host_reducer_finish(ddp_host_reducer *r);

#endif
