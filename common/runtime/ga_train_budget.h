/* A training step's time as a budget (ddp_smoke, lm_train): the phase gets a share of what the whole-run
 * bound
 * (--timeout, which gpuaccept run sets from the step's share) leaves after a reserve for the gather, the
 * analysis and the report; the steps that fit are planned from the pace of the steps already taken, and every
 * rank plans from the same figures, reduced across the ranks, so that all stop at the same step. */
#ifndef GA_TRAIN_BUDGET_H
#define GA_TRAIN_BUDGET_H

#include <mpi.h>

/* Seconds kept back from time_left_s for what follows training: a tenth, 2 to 60 s. */
double ga_train_reserve(double time_left_s);

/* When a phase given share (0..1] of what is left after the reserve must end, on ga_now()'s clock; 0 when
 * the run has no bound. */
double ga_train_phase_end(double share);

/* Collective over comm: how many steps in all the phase may take, at most asked, given done steps taken so
 * far at pace_s seconds each on this rank. The slowest rank's pace and the least time left decide (one
 * MPI_Allreduce of both), so every rank returns the same count, and a slow rank shortens the phase, never
 * lengthens the run. At least done (stop now); asked when phase_end is 0. */
int ga_train_steps_that_fit(MPI_Comm comm, double pace_s, double phase_end, int done, int asked);

/* Pure: the count ga_train_steps_that_fit returns from the reduced figures. */
int ga_train_fit(double pace_s, double time_left_s, int done, int asked);

#endif
