/* A re-armable deadline for every blocking wait of the sweep (nccl-tests' -T): arm it with what is being
 * waited for, disarm after. A watcher thread takes the job down on expiry: it runs the abort hook (the NCCL
 * communicators) and then ga_fatal, which prints host, rank and what hung and calls MPI_Abort.
 * Proposed for common/ (ga_deadline_*): every program with blocking MPI collectives needs it; the whole-run
 * --timeout watchdog cannot say which wait hung and would kill a long healthy run. */
#ifndef AR_DEADLINE_H
#define AR_DEADLINE_H

typedef void (*ar_abort_hook)(void *user);

/* Starts the watcher; timeout_s <= 0 disables every deadline. */
void ar_deadline_start(double timeout_s);
void ar_deadline_stop(void);
/* Called on expiry before the job is aborted (NULL to clear). */
void ar_deadline_set_abort_hook(ar_abort_hook hook, void *user);

void ar_deadline_arm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with a bound of its own, for a wait that spans many bounded operations of other ranks (a rank
 * sitting out a round of pairs waits for the whole round). */
void ar_deadline_arm_for(double seconds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ar_deadline_disarm(void);
double ar_deadline_timeout(void);

#endif
