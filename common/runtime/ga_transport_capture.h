/* The capture of the transport a program's collectives used (the record and its check: ga_transport.h).
 *
 * NCCL: before a process's first NCCL call, NCCL's debug output is directed to a file of this rank's own
 * (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS with INIT,NET,GRAPH, NCCL_DEBUG_FILE in a directory of the process's
 * own, made mode 0700 by mkdtemp and read only as a regular file; a NCCL_DEBUG_FILE the user set is read
 * instead, and kept). ga_nccl brackets every communicator's life with ga_nccl_debug_comm_begin/_end: the
 * lines NCCL writes in between are that communicator's (a process holds its communicators one after another).
 * NCCL's warnings, which now go to the file, are printed on stderr as they are read; with a NCCL_DEBUG=INFO
 * of the user's own, every line is printed on stdout.
 *
 * Open MPI: the components in use, from the MPI_T categories still valid after MPI_Init. */
#ifndef GA_TRANSPORT_CAPTURE_H
#define GA_TRANSPORT_CAPTURE_H

#include <jansson.h>

#include "ga_findings.h"
#include "ga_runtime.h"
#include "ga_transport.h"

/* Before a communicator's init (and so before the process's first NCCL call): directs NCCL's debug output
 * the first time, then marks where the communicator's lines start. */
void ga_nccl_debug_comm_begin(const char *label);
/* After the communicator's last use (before it is finalized): its lines are read and recorded. */
void ga_nccl_debug_comm_end(const char *label);

/* What this rank's communicators of one scope (GA_TR_*) used so far, the ones ended read (never NULL). */
const ga_transport_scope *ga_transport_scope_mine(int scope);

/* Removes the debug file gpuaccept made and its private directory, now (the fatal path's end: a process
 * killed before it would leave them, which the next capture on this host removes). */
void ga_nccl_debug_abandon(void);

/* Collective over the world: every rank's record (NCCL's communicators, read to the end; the environment;
 * Open MPI's components) gathered to rank 0, which checks them against pol, adds the findings to f and
 * returns the report's "transport" object (NULL on other ranks). Removes the debug files gpuaccept made. */
json_t *ga_transport_collect(const ga_ctx *ctx, const ga_transport_policy *pol, ga_findings *f);

#endif
