/* What gemm_flops and mem_bw share for their command lines and reports. */
#ifndef TP_REPORT_H
#define TP_REPORT_H

#include <jansson.h>

#include "ga_cli.h"
#include "ga_findings.h"
#include "ga_backend.h"
#include "ga_record.h"
#include "tp_flag.h"

/* Parses a --dtype style list ("fp32,bf16" or "all") into a bit mask of tp_dtype; 0, or -1 with a message. */
int tp_parse_dtypes(const char *arg, unsigned *mask, bool *is_all, char *err, size_t errlen);

/* Indices of n gathered records (each starting with a ga_record_header) in device order: node, then GPU
 * index, then rank. */
void tp_record_order(const void *records, int n, size_t record_size, int *idx);

/* "<name>: median X <unit> over N GPUs, peak P" under tag, when anything was measured. */
void tp_figure_log(const tp_figure *fig, const char *tag);

/* The figure as a per-device headline of report (its median, against the peak when known). label: what a
 * person reads ("bf16"). */
void tp_figure_headline(json_t *report, const tp_figure *fig, bool higher_is_better);

#endif
