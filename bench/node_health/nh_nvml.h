/* The GPU part of node_health's record, from NVML loaded at run time (dlopen of libnvidia-ml.so.1): the
 * program links no NVML and runs on nodes without a driver, where it records why the GPUs were not checked.
 */
#ifndef NH_NVML_H
#define NH_NVML_H

#include "nh_record.h"

/* Checks the node's GPUs whose NVML index i has i % local_size == local_rank (one GPU per rank when there
 * are as many ranks as GPUs, all of them when one rank runs per node). NUMA nodes from sysfs_root. */
void nh_nvml_probe(int local_rank, int local_size, const char *sysfs_root, nh_record *r);

#endif
