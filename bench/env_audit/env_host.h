/* Host settings from procfs and sysfs, read under a root directory ("" for the machine itself; a test's fake
 * tree otherwise): DIMMs (EDAC), RDMA adapters' firmware and link layer, PCIe ACS between GPU and NIC, IOMMU
 * mode, the kernel command line's audited keys, huge pages, clock source, GPU VBIOS. Nothing here needs root
 * or runs a program; what cannot be read stays "" (not covered). Pure file reading: no MPI, no CUDA. */
#ifndef ENV_HOST_H
#define ENV_HOST_H

#include <stddef.h>

#include "env_record.h"

void env_host_probe(const char *root, env_host *h);

/* The PCIe ACS state of the bridges between each GPU and its nearest RDMA adapter (env_acs.c). */
void env_host_probe_acs(const char *root, env_host *h);

/* Reads root/path into buf (trailing newline removed): 0, or -1 when it cannot be read. */
int env_host_read(const char *root, const char *path, char *buf, size_t len);

/* Sorted, distinct PCI addresses of NVIDIA GPUs (vendor 0x10de, display class) under root/sys/bus/pci. */
int env_host_gpus(const char *root, char (*bdf)[24], int max);

#endif
