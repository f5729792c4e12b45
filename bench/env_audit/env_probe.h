/* Fills this rank's env_record from the machine: OS, CPU, memory and NUMA (hwloc), GPUs (CUDA runtime),
 * network adapters (hwloc OS devices), library versions and the allow-listed environment. */
#ifndef ENV_PROBE_H
#define ENV_PROBE_H

#include "env_record.h"
#include "ga_runtime.h"

void env_probe(const ga_ctx *ctx, env_record *rec);

#endif
