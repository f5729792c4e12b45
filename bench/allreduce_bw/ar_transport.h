/* The transport allreduce_bw's communicators used (ga_transport), into the report and checked. */
#ifndef AR_TRANSPORT_H
#define AR_TRANSPORT_H

#include <jansson.h>
#include <stdbool.h>

#include "ar_opts.h"
#include "ga_findings.h"
#include "ga_runtime.h"

/* Collective, after the last pattern: every rank's transport gathered; rank 0 adds the report's "transport",
 * its findings (--expect-net, --allow-sockets) to f, and one line saying what went between nodes. */
void ar_transport_report(const ga_ctx *ctx, const ar_opts *o, bool nccl, json_t *report, ga_findings *f);

#endif
