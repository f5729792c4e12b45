/* Clocks: monotonic intervals, CPU time and run-queue wait (the host paths' fair timing), UTC stamps. */
#ifndef GA_TIME_H
#define GA_TIME_H

#include <stddef.h>

/* Monotonic seconds, for intervals. */
double ga_now(void);
/* CPU seconds this thread has run, and this process (all its threads): the host paths time their work by
 * them, as the GPU paths time theirs on the GPU, so that the time the scheduler gave to another process on a
 * shared host is not counted as the cores' slowness (docs/testing.md, "False alarms"). */
double ga_thread_cpu_now(void);
double ga_process_cpu_now(void);
/* Seconds this thread has spent runnable but waiting for a CPU (Linux schedstat's run-queue delay), or -1
 * where the kernel does not say. A collective is slow either because its link or peer is, or because a rank
 * had work to do and no CPU to do it on: this tells the second apart (a host busy with another job), so that
 * a relative check does not blame a member for its host's contention. */
double ga_run_queue_wait_now(void);
/* The pause between two polls of a wait on the GPU (a stream, an NCCL ncclInProgress) that has lasted
 * waited_s so far: 0 means yield the CPU only (sched_yield), more means sleep that long. Why: NCCL's proxy
 * thread, which posts every network transfer, runs inside the process's CPU mask (one CPU under Slurm's
 * default binding of --ntasks-per-node=8); a main thread that spins without yielding takes that CPU from it
 * and the inter-node figures collapse. nccl-tests yields at every idle poll (src/common.cu,
 * testStreamSynchronize: "We might want to let other threads (including NCCL threads) use the CPU. if (idle)
 * sched_yield();"). Yield only for the first GA_WAIT_YIELD_ONLY_S, so that a small collective (microseconds)
 * is seen complete as soon as it is; then sleep waited_s / 200, at most GA_WAIT_SLEEP_MAX_S: a completion is
 * seen at most one pause late, 0.5 % of the time already waited plus the kernel's timer slack (50 us by
 * default, prctl(2) PR_SET_TIMERSLACK), under 1 % of any wait that reaches the sleeps. A timed loop waits
 * once after many operations, so its figure moves by less than that. Pure. */
#define GA_WAIT_YIELD_ONLY_S 10e-3
#define GA_WAIT_SLEEP_MAX_S 100e-6
double ga_wait_pause_s(double waited_s);
/* Pauses as ga_wait_pause_s says (sched_yield, or nanosleep). */
void ga_wait_pause(double waited_s);
/* Wall-clock time as ISO 8601 UTC ("2026-11-22T06:17:38Z"). */
void ga_utc_timestamp(char *buf, size_t len);
/* Wall-clock time in UTC through a strftime format (e.g. a directory name stamped with the time). */
void ga_utc_format(char *buf, size_t len, const char *fmt);

#endif
