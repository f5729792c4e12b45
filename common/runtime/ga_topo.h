/* hwloc: one topology per process, loaded once with I/O devices, as the single source of truth for cores,
 * memory, NUMA nodes and where GPUs and network adapters attach. */
#ifndef GA_TOPO_H
#define GA_TOPO_H

#include <hwloc.h>

/* The process's topology (loaded on first use, I/O devices included); NULL if hwloc fails. */
hwloc_topology_t ga_topo_get(void);
void ga_topo_release(void);

/* NUMA node (logical index) closest to a PCI device given as "0000:3b:00.0", or -1 if unknown. */
int ga_topo_numa_of_pci(hwloc_topology_t topo, const char *pci_bus_id);
/* NUMA node of an hwloc object (walks up to the first non-I/O ancestor), or -1. */
int ga_topo_numa_of_obj(hwloc_topology_t topo, hwloc_obj_t obj);

#endif
