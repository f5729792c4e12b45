/* Host-side facts and memory placement for the host paths and the pinned buffers of the GPU paths, through
 * the process's hwloc topology (ga_topo). No MPI. */
#ifndef GA_HOST_H
#define GA_HOST_H

#include <stdbool.h>
#include <stddef.h>

/* CPU model from /proc/cpuinfo ("AMD EPYC 9654 96-Core Processor"), or "unknown CPU". */
void ga_host_cpu_model(char *buf, size_t len);

/* Threads a rank should use for host compute: the node's cores shared evenly among its local_size ranks, and
 * no more than the cores the rank is bound to. At least 1. */
int ga_host_threads(int local_size);

/* Logical index of the NUMA node holding every CPU this process is bound to, or -1 when it spans several or
 * is unknown. */
int ga_host_numa_node(void);

/* Total bytes of the machine's last-level caches (every L3, else every L2), 0 when unknown: sizes of
 * bandwidth buffers must exceed it, as STREAM's rule asks (four times). */
size_t ga_host_llc_bytes(void);

/* Memory on NUMA node numa (logical index) through hwloc; *bound says whether the binding took. Falls back to
 * plain page-aligned memory when numa < 0 or binding fails. NULL when out of memory. Free with ga_host_free.
 */
void *ga_host_alloc_on_numa(size_t bytes, int numa, bool *bound);
void ga_host_free(void *p, size_t bytes, bool bound);

#endif
