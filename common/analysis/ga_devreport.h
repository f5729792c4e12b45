/* What gemm_flops and mem_bw share for their command lines and reports. */
#ifndef GA_DEVREPORT_H
#define GA_DEVREPORT_H

#include <jansson.h>

#include "ga_cli.h"
#include "ga_findings.h"
#include "ga_backend.h"
#include "ga_record.h"
#include "ga_devflag.h"

/* Parses a --dtype style list ("fp32,bf16" or "all") into a bit mask of ga_dtype; 0, or -1 with a message. */
int ga_dtype_parse_list(const char *arg, unsigned *mask, bool *is_all, char *err, size_t errlen);

/* Indices of n gathered records (each starting with a ga_record_header) in device order: node, then GPU
 * index, then rank. */
void ga_dev_record_order(const void *records, int n, size_t record_size, int *idx);

/* "<name>: median X <unit> over N GPUs, peak P" under tag, when anything was measured. */
void ga_dev_figure_log(const ga_dev_figure *fig, const char *tag);

/* The figure as a per-device headline of report (its median, against the peak when known). label: what a
 * person reads ("bf16"). */
void ga_dev_figure_headline(json_t *report, const ga_dev_figure *fig, bool higher_is_better);

#endif
