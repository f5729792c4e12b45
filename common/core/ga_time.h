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
/* Wall-clock time as ISO 8601 UTC ("2026-11-22T06:17:38Z"). */
void ga_utc_timestamp(char *buf, size_t len);
/* Wall-clock time in UTC through a strftime format (e.g. a directory name stamped with the time). */
void ga_utc_format(char *buf, size_t len, const char *fmt);

#endif
