#ifndef GA_TIME_H
#define GA_TIME_H

#include <stddef.h>

/* Monotonic seconds, for intervals. */
double ga_now(void);
/* Wall-clock time as ISO 8601 UTC ("2026-11-22T06:17:38Z"). */
void ga_utc_timestamp(char *buf, size_t len);
/* Wall-clock time in UTC through a strftime format (e.g. a directory name stamped with the time). */
void ga_utc_format(char *buf, size_t len, const char *fmt);

#endif
