/* The end of a throughput program on rank 0: verdict, atomic report, report path, [RESULT] line. */
#ifndef TP_REPORT_H
#define TP_REPORT_H

#include <jansson.h>

#include "ga_cli.h"
#include "ga_findings.h"
#include "ga_gpu.h"
#include "ga_record.h"

/* Returns the exit code: the findings' one, or GA_EXIT_ENV when the report cannot be written. */
int tp_report_finish(json_t *report, const ga_findings *f, const ga_common_opts *common, const char *program,
                     const char *tag);

/* Parses a --dtype style list ("fp32,bf16" or "all") into a bit mask of tp_dtype; 0, or -1 with a message. */
int tp_parse_dtypes(const char *arg, unsigned *mask, bool *is_all, char *err, size_t errlen);

/* --device gpu|cpu|auto (cpu also spelt host) into a ga_backend; 0, or -1 with a message. */
int tp_parse_device(const char *arg, int *backend, char *err, size_t errlen);

/* Records the rank's GPU in its header. */
void tp_header_set_gpu(ga_record_header *hdr, const ga_gpu_info *gpu);

/* Indices of n gathered records (each starting with a ga_record_header) in device order: node, then GPU
 * index, then rank. */
void tp_record_order(const void *records, int n, size_t record_size, int *idx);

#endif
