/* Logging with the tags users of nccl-tests and DCGM-style tools read: [ENV], [COMPUTE], [TRAIN], [DDP],
 * [COMM], [RESULT]. ga_log prints on rank 0 only; ga_log_rank prints on any rank with its host and rank. */
#ifndef GA_LOG_H
#define GA_LOG_H

#include <stdbool.h>

void ga_log_set_rank(int world_rank, const char *host);
void ga_log_set_verbose(bool verbose);
bool ga_log_verbose(void);

void ga_log(const char *tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ga_log_rank(const char *tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like ga_log, only with --verbose. */
void ga_debug(const char *tag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line on stderr from rank 0 only: for usage errors, which every rank detects identically. */
void ga_error_once(const char *program, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
