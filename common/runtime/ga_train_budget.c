/* A training step's time as a budget (ga_train_budget.h). */
#include "ga_train_budget.h"

#include <math.h>

#include "ga_deadline.h"
#include "ga_fatal.h"
#include "ga_time.h"

double ga_train_reserve(double time_left_s)
{
    double r = 0.1 * time_left_s;
    return r < 2 ? 2 : r > 60 ? 60 : r;
}

double ga_train_phase_end(double share)
{
    double run_end = ga_deadline_run_end();
    if (run_end <= 0)
        return 0;
    double now = ga_now(), left = run_end - now;
    double usable = left - ga_train_reserve(left);
    return now + (usable > 0 ? share * usable : 0);
}

int ga_train_fit(double pace_s, double time_left_s, int done, int asked)
{
    if (done >= asked)
        return asked;
    if (!(pace_s > 0))
        return asked;
    if (!(time_left_s > 0))
        return done;
    double more = floor(time_left_s / pace_s);
    return more >= (double)(asked - done) ? asked : done + (int)more;
}

int ga_train_steps_that_fit(MPI_Comm comm, double pace_s, double phase_end, int done, int asked)
{
    if (phase_end <= 0)
        return asked;
    /* one reduction of both: the largest pace and the largest shortfall (the least time left, negated) */
    double mine[2] = {pace_s, -(phase_end - ga_now())}, all[2];
    ga_deadline_arm("agreeing on the training steps that fit the time");
    GA_MPI_CHECK(MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, comm));
    ga_deadline_disarm();
    return ga_train_fit(all[0], -all[1], done, asked);
}
