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
/* Wall-clock time as ISO 8601 UTC ("2026-11-22T06:17:38Z"). */
void ga_utc_timestamp(char *buf, size_t len);
/* Wall-clock time in UTC through a strftime format (e.g. a directory name stamped with the time). */
void ga_utc_format(char *buf, size_t len, const char *fmt);

#endif
