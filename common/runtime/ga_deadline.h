/* Bounds on time, watched by one thread per process: the whole run (--timeout, with the phase named by
 * ga_phase) and the wait in progress (armed around each blocking call: a collective, a barrier, a gather,
 * NCCL init). On expiry ga_fatal takes the job down, naming what hung, on which host and rank; while the main
 * thread holds a library only it may call (an NCCL communicator), the expiry is first handed to it. The
 * wait bound says which wait hung; the whole-run bound alone could not, and would have to be long enough for
 * the longest healthy run. */
#ifndef GA_DEADLINE_H
#define GA_DEADLINE_H

#include <stdbool.h>
#include <stddef.h>

/* The bound of the start-up (0: none), counted from now, before MPI_Init: on expiry, while no rank can be
 * asked, this process prints one "[FATAL] start-up: ..." line naming itself as the one that saw it (who) and
 * exits 4, which makes the launcher end the job. ga_deadline_start_run ends the start-up. */
void ga_deadline_start_startup(double timeout_s, const char *who);
/* The whole-run bound (0: none), counted from now. Started by ga_program_begin from --timeout; a program may
 * restart it with a longer default when the user gave none (gemm_flops adds its --duration). */
void ga_deadline_start_run(double run_timeout_s);
/* When the whole-run bound expires, on ga_now()'s clock (0: no bound): what a program plans its work within.
 */
double ga_deadline_run_end(void);
/* The default bound of ga_deadline_arm (0: waits are not bounded individually). */
void ga_deadline_set_wait_timeout(double wait_timeout_s);
double ga_deadline_wait_timeout(void);
/* Collective over MPI_COMM_WORLD, called once by ga_init: lets the watcher ask the other ranks, on expiry,
 * which of them did not arrive (a communicator of its own, every rank's host). Without MPI_THREAD_MULTIPLE or
 * with one rank it does nothing, and an expiry names this rank only. */
void ga_deadline_attach_mpi(const char *host, int world_rank, int world_size, int thread_level);
/* Stops the watcher (and its MPI side); ga_program_end calls it. */
void ga_deadline_stop(void);

/* Names the phase the program is in, for the whole-run message. Cheap; call freely. */
void ga_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* How far the work has got and at what rate ("size 3 of 4 of the world sweep, 0.45 s per operation, about 30
 * s more"): a timeout with no rank behind names no node but says this, so that the user sees what the limit
 * cut short and how much longer the work needed. */
void ga_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Bounds the wait that follows with the default wait timeout (no effect while it is 0), or with its own
 * bound (seconds > 0: always armed, whatever the default; e.g. NCCL waits with their caller's bound). One
 * wait is armed at a time: arming replaces the previous one. On expiry the watcher thread calls GA_FATAL
 * (MPI_Abort) from its own thread, which MPI_THREAD_MULTIPLE (ga_init) makes legal. */
void ga_deadline_arm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ga_deadline_arm_for(double seconds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ga_deadline_disarm(void);
/* Starts the armed wait's bound afresh, keeping what it names: a loop of waits arms once and re-arms before
 * each, so that -T bounds every wait and not the whole loop. Cheap (no formatting); no effect when unarmed.
 */
void ga_deadline_rearm(void);

/* For a wait the program bounds itself (a polling loop): it has expired. Ends the job with exit 4 as the
 * watcher does, naming the rank(s) that did not arrive when the others can be asked, else this rank. */
void ga_deadline_expired(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* The report's commit check (ga_report_set_commit_check): when the whole-run bound has passed by the clock,
 * even if the watcher thread has not run yet (a loaded host), the temporary report is removed and the job
 * ends with exit 4, so that a run past its --timeout never leaves a report. */
void ga_deadline_check_before_commit(const char *tmp_path);

/* While on, an expiry is handed to the main thread first: the watcher publishes it
 * (ga_deadline_expiry_pending) and waits up to a second for the main thread to act on it (abort what only it
 * may touch, e.g. its NCCL communicator, then ga_deadline_expired); a main thread blocked inside a call that
 * never returns is left behind, and the watcher ends the job itself, calling nothing of the main thread's:
 * the process exit takes the GPU work down. NCCL forbids calls on one communicator from two threads at once
 * (ga_nccl sets this). */
void ga_deadline_hand_expiry_to_main(bool on);
/* Main thread: whether the watcher has handed over an expiry; its message into msg. Cheap (one atomic load)
 * until it has. */
bool ga_deadline_expiry_pending(char *msg, size_t len);

#endif
