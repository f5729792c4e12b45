/* The one fatal-error path: print host, rank and file:line, then take the whole job down with MPI_Abort so
 * that no rank is ever left waiting in a collective. */
#ifndef GA_FATAL_H
#define GA_FATAL_H

#include <mpi.h>

#include "ga_exit.h"

/* Called once start-up knows who this process is; before that, "?" and -1 are printed. */
void ga_fatal_set_identity(const char *host, int world_rank);

/* Called by ga_init, on the main thread, with the thread level MPI provided. A fatal error on another thread
 * (the deadline watcher) calls MPI_Abort only where MPI_THREAD_MULTIPLE makes that legal; otherwise it ends
 * the process with the exit code, and the launcher takes the job down. */
void ga_fatal_set_thread_level(int provided);

_Noreturn void ga_fatal_at(const char *file, int line, int exit_code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define GA_FATAL(exit_code, ...) ga_fatal_at(__FILE__, __LINE__, (exit_code), __VA_ARGS__)

/* The same, for a fault this process saw in another one: the line leads with that rank's host and rank (so
 * that what reads it blames the right node), and the message says who saw it. Used by the watchdog to name
 * the rank that did not arrive. */
_Noreturn void ga_fatal_for_at(const char *host, int world_rank, const char *file, int line, int exit_code,
                               const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* The same, for a fault of the job rather than of a node (a timeout that every rank reached at the same wait:
 * the limit was too short for the work): "[FATAL] job (file:line): ...", which names no host, so that nothing
 * reading it blames one. */
_Noreturn void ga_fatal_job_at(const char *file, int line, int exit_code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Ends this process as part of a fatal error another rank is reporting: no line of its own, so that the
 * job's output names the one rank that was at fault. MPI_Abort where legal, else _exit. */
_Noreturn void ga_fatal_quiet(int exit_code);

/* Collective over MPI_COMM_WORLD, for a failure that some ranks may hit and others not (out of memory): every
 * rank passes its own message, or NULL when it is fine. Returns 0 when no rank failed; otherwise the lowest
 * failed rank has printed one "[FATAL] HOST rank R (file:line): MSG" line, and every rank gets exit_code, so
 * that all of them take the same path afterwards (no rank enters a collective the others skip). */
int ga_agree_failure_at(const char *file, int line, int exit_code, const char *msg_or_null);

#define GA_AGREE_FAILURE(exit_code, msg) ga_agree_failure_at(__FILE__, __LINE__, (exit_code), (msg))

/* At a normal end with a non-zero exit code of this rank's own: prints "[EXIT] HOST rank R code N (NAME)", so
 * that the launcher's output names the failing node (mpirun's own notice names a rank but not its host). */
void ga_exit_notice(int exit_code);

/* MPI errors are fatal: there is no sensible local recovery from a broken collective. */
#define GA_MPI_CHECK(call)                                                                                   \
    do {                                                                                                     \
        int ga_mpi_rc_ = (call);                                                                             \
        if (ga_mpi_rc_ != MPI_SUCCESS)                                                                       \
            GA_FATAL(GA_EXIT_INTERNAL, "%s failed (MPI error %d)", #call, ga_mpi_rc_);                       \
    } while (0)

#endif
