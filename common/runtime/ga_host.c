#include "ga_host.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_topo.h"

void ga_host_cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        char *v = strchr(line, ':');
        if (!v)
            break;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = '\0';
        snprintf(buf, len, "%s", v);
        break;
    }
    fclose(f);
}

int ga_host_threads(int local_size)
{
    hwloc_topology_t t = ga_topo_get();
    if (!t)
        return 1;
    int cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    int share = cores / (local_size > 0 ? local_size : 1);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) == 0) {
        int mine = hwloc_get_nbobjs_inside_cpuset_by_type(t, set, HWLOC_OBJ_CORE);
        if (mine > 0 && mine < share)
            share = mine;
    }
    hwloc_bitmap_free(set);
    return share > 0 ? share : 1;
}

int ga_host_numa_node(void)
{
    hwloc_topology_t t = ga_topo_get();
    if (!t)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int found = -1;
    if (set && hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) == 0) {
        hwloc_obj_t numa = NULL;
        while ((numa = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, numa))) {
            if (numa->cpuset && hwloc_bitmap_isincluded(set, numa->cpuset)) {
                found = (int)numa->logical_index;
                break;
            }
        }
    }
    hwloc_bitmap_free(set);
    return found;
}

void *ga_host_alloc_on_numa(size_t bytes, int numa, bool *bound)
{
    *bound = false;
    hwloc_topology_t t = ga_topo_get();
    hwloc_obj_t node = t && numa >= 0 ? hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)numa) : NULL;
    if (node) {
        void *p = hwloc_alloc_membind(t, bytes, node->nodeset, HWLOC_MEMBIND_BIND,
                                      HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
        if (p) {
            *bound = true;
            return p;
        }
    }
    void *p = NULL;
    return posix_memalign(&p, 4096, bytes) == 0 ? p : NULL;
}

void ga_host_free(void *p, size_t bytes, bool bound)
{
    if (!p)
        return;
    if (bound)
        hwloc_free(ga_topo_get(), p, bytes);
    else
        free(p);
}

size_t ga_host_llc_bytes(void)
{
    hwloc_topology_t t = ga_topo_get();
    if (!t)
        return 0;
    static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE};
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        size_t total = 0;
        hwloc_obj_t c = NULL;
        while ((c = hwloc_get_next_obj_by_type(t, levels[l], c)))
            total += (size_t)c->attr->cache.size;
        if (total)
            return total;
    }
    return 0;
}
