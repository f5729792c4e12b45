/* What gemm_flops and mem_bw share for their command lines and reports. */
#ifndef TP_REPORT_H
#define TP_REPORT_H

#include <jansson.h>

#include "ga_cli.h"
#include "ga_findings.h"
#include "ga_backend.h"
#include "ga_record.h"

/* Parses a --dtype style list ("fp32,bf16" or "all") into a bit mask of tp_dtype; 0, or -1 with a message. */
int tp_parse_dtypes(const char *arg, unsigned *mask, bool *is_all, char *err, size_t errlen);

/* Indices of n gathered records (each starting with a ga_record_header) in device order: node, then GPU
 * index, then rank. */
void tp_record_order(const void *records, int n, size_t record_size, int *idx);

#endif
