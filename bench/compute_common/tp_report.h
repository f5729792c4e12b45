/* The end of a throughput program on rank 0: verdict, atomic report, report path, [RESULT] line. */
#ifndef TP_REPORT_H
#define TP_REPORT_H

#include <jansson.h>

#include "ga_cli.h"
#include "ga_findings.h"

/* Returns the exit code: the findings' one, or GA_EXIT_ENV when the report cannot be written. */
int tp_report_finish(json_t *report, const ga_findings *f, const ga_common_opts *common, const char *program,
                     const char *tag);

/* Parses a --dtype style list ("fp32,bf16" or "all") into a bit mask of tp_dtype; 0, or -1 with a message. */
int tp_parse_dtypes(const char *arg, unsigned *mask, bool *is_all, char *err, size_t errlen);

#endif
