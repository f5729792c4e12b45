/* The time left in the Slurm allocation the run is inside, so that a plan that cannot end before the job is
 * killed is said before it starts (issue 41, item 4). */
#ifndef ALLOCATION_H
#define ALLOCATION_H

#include <stddef.h>

/* Seconds left in the job $SLURM_JOB_ID: from $SLURM_JOB_END_TIME (a UNIX time, where Slurm sets it), else
 * `squeue -h -j $SLURM_JOB_ID -o %L` (squeue(1): "Time left for the job to execute in
 * days-hours:minutes:seconds ... "NOT_SET" if not yet established or "UNLIMITED" for no limit"). 0 with
 * *left_s and where it came from in source, or -1: not in Slurm, no limit, or it could not be read (why in
 * source). */
int suite_alloc_time_left(double *left_s, char *source, size_t len);

/* "[D-]H:MM:SS", "M:SS" or "S" (squeue's %L) in seconds; -1 when it is none of them. */
double suite_alloc_parse_left(const char *s);

#endif
