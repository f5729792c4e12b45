/* The processes a step left on this machine, found from /proc: every process of the step's session, every
 * descendant of its leader, and every orphan this process inherited as a child subreaper. Open MPI puts each
 * local rank in a process group of its own, so a signal to the step's process group misses them; the
 * session and the parent links do not. Linux only: elsewhere nothing is found and only the group is
 * signalled. */
#ifndef PROC_TREE_H
#define PROC_TREE_H

#include <stdbool.h>
#include <sys/types.h>

/* Makes this process the reaper of orphaned descendants (a rank whose mpirun died is re-parented here, not to
 * init, so it can still be found and killed). Returns 0, or -1 where the system has no such thing. */
int suite_proc_become_subreaper(void);

/* Sends sig to every live process of the step (leader's session sid, its descendants, orphans re-parented
 * here), the leader last. Returns how many were signalled (0: nothing of the step is left), -1 if /proc could
 * not be read. */
int suite_proc_signal_step(pid_t leader, pid_t sid, int sig);

/* SIGKILL to the step until nothing of it is alive or limit_s has passed; reaps the orphans re-parented here
 * (never the leader: its status is the caller's). Returns the number still alive at the end (0 on success).
 */
int suite_proc_kill_step(pid_t leader, pid_t sid, double limit_s);

#endif
