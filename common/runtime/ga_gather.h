/* Records on the runtime side: a rank's header filled from its context and the GPU it uses, and the one
 * MPI_Gather that brings every rank's fixed-size record to rank 0. */
#ifndef GA_GATHER_H
#define GA_GATHER_H

#include <stddef.h>

#include "ga_record.h"
#include "ga_runtime.h"

/* Identity fields from the context, status pass, and the device ga_gpu_select chose (device -1 when none was:
 * the host path, or a header made before the selection). */
void ga_record_header_init(const ga_ctx *ctx, ga_record_header *hdr);

/* Gathers one record of record_size bytes from every rank. On rank 0, *all receives a malloc'd array of
 * world_size records in rank order (free it); elsewhere *all is NULL. Collective. */
void ga_gather_records(const ga_ctx *ctx, const void *mine, size_t record_size, void **all);

#endif
