/* Cancelling a step of the Slurm job everywhere. Killing srun on this host does not always end its tasks on
 * the other nodes (a task that is stopped, or that ignores SIGTERM, outlives a srun that is SIGKILLed), and
 * the /proc sweep (proc_tree.h) sees this host only: at a step's deadline the suite asks Slurm itself to
 * cancel the step, on every node of it. */
#ifndef SLURM_STEPS_H
#define SLURM_STEPS_H

#include <stddef.h>

/* Kills the tasks of (scancel --signal=KILL JOB.STEP) and cancels (scancel JOB.STEP) every running step of
 * job `job` named `name` (srun names a step after the program it starts), as listed by `squeue -s`. ids gets
 * the cancelled step ids, comma separated. Returns how many were cancelled, or -1 when squeue could not be
 * run (err says why). Each command is bounded to a few seconds: a slurmctld that does not answer must not
 * hold up the suite. */
int suite_slurm_cancel_steps(const char *job, const char *name, char *ids, size_t idslen, char *err,
                             size_t errlen);

#endif
