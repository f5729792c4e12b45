#include "ddp_reducer_host.h"

#include <sched.h>

#include "ga_exit.h"
#include "ga_deadline.h"
#include "ga_fatal.h"
#include "ga_testhook.h"
#include "ga_time.h"

void ddp_host_reducer_init(ddp_host_reducer *r, const ddp_bucket_plan *plan, MPI_Comm comm, double *grad,
                           double timeout_s)
{
    r->plan = plan;
    r->comm = comm;
    r->grad = grad;
    r->launched = 0;
    r->timeout_s = timeout_s;
    for (int k = 0; k < DDP_MAX_LINEAR; k++)
        r->req[k] = MPI_REQUEST_NULL;
}

void ddp_host_reducer_on_grad_ready(void *reducer, int layer)
{
    ddp_host_reducer *r = reducer;
    int k = ddp_bucket_completed_by(r->plan, layer);
    if (k >= 0) {
        const ddp_bucket *b = &r->plan->b[k];
        /* Buckets start in the same order on every rank: the backward pass is the same program everywhere. */
        GA_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, r->grad + b->offset, (int)b->count, MPI_DOUBLE, MPI_SUM,
                                    r->comm, &r->req[k]));
        r->launched++;
    }
    int done = 0;
    GA_MPI_CHECK(MPI_Testall(r->launched, r->req, &done, MPI_STATUSES_IGNORE));
}

double ddp_host_reducer_finish(ddp_host_reducer *r)
{
    double t0 = ga_now(), deadline = t0 + r->timeout_s;
    ga_test_delay(ga_test_comm_delay_s()); /* the test hook (a slow fabric): 0 unless set */
    for (;;) {
        int done = 0;
        GA_MPI_CHECK(MPI_Testall(r->launched, r->req, &done, MPI_STATUSES_IGNORE));
        if (done)
            break;
        if (ga_now() > deadline)
            ga_deadline_expired("timeout: gradient allreduce (%d buckets) did not complete within %g s",
                                r->launched, r->timeout_s);
        sched_yield(); /* ranks may share cores: let the peer we wait for run */
    }
    r->launched = 0;
    return ga_now() - t0;
}
