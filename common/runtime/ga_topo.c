#include "ga_topo.h"

#include <stddef.h>

static hwloc_topology_t topo_cache;

hwloc_topology_t ga_topo_get(void)
{
    if (topo_cache)
        return topo_cache;
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return NULL;
    /* GPUs and network adapters are I/O objects, filtered out by default. */
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return NULL;
    }
    topo_cache = t;
    return topo_cache;
}

void ga_topo_release(void)
{
    if (topo_cache)
        hwloc_topology_destroy(topo_cache);
    topo_cache = NULL;
}

int ga_topo_numa_of_obj(hwloc_topology_t topo, hwloc_obj_t obj)
{
    if (!topo || !obj)
        return -1;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);
    if (!anc || !anc->nodeset)
        return -1;
    int numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    /* Attached to the machine as a whole: no locality, unless there is only one NUMA node anyway. */
    if (anc == hwloc_get_root_obj(topo) && numa_nodes > 1)
        return -1;
    hwloc_obj_t numa = NULL;
    while ((numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa)))
        if (hwloc_bitmap_isincluded(numa->nodeset, anc->nodeset))
            return (int)numa->logical_index;
    return -1;
}

int ga_topo_numa_of_pci(hwloc_topology_t topo, const char *pci_bus_id)
{
    if (!topo || !pci_bus_id || !*pci_bus_id)
        return -1;
    return ga_topo_numa_of_obj(topo, hwloc_get_pcidev_by_busidstring(topo, pci_bus_id));
}
