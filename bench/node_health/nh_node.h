/* The node's state as files say it: InfiniBand / RoCE ports and GPUDirect RDMA from a sysfs tree, Xids from
 * a kernel log's text. Plain file reading under a root directory (the live /sys, or a copy being replayed):
 * no MPI, no NVML, so the fixture tests run the very code the program runs on a tree in the test folder. */
#ifndef NH_NODE_H
#define NH_NODE_H

#include <stddef.h>

#include "nh_record.h"

/* 0 when root is a directory that can be listed, else -1 with a one-line reason. */
int nh_sysfs_root_check(const char *root, char *err, size_t errlen);

/* Fills the InfiniBand part of r (ib_read, hca_count, ports with is_vf) from root/class/infiniband, and the
 * GPUDirect RDMA paths (peermem, nv_mem, nvidia_open) from root/module and root/kernel/mm/memory_peers. A
 * value that is missing or malformed is -1/"" with the file's name in the port's `unreadable`; never fails on
 * content. The ports' roles are chosen later, on rank 0 (nh_ports.h). */
void nh_sysfs_read_node(const char *root, nh_record *r);

/* NUMA node of a PCI device given as NVML writes it (00000000:1B:00.0), from root/bus/pci/devices; -1. */
int nh_sysfs_pci_numa(const char *root, const char *pci_bus_id);

/* Adds the Xid lines of a kernel log's text to r (xids, one entry per GPU and Xid with its count), and the
 * NVSwitch SXid lines (sxids, one entry per switch and SXid, fatal or not as the line says). since_s > 0
 * keeps only the lines logged in the last since_s seconds before now_s (seconds since boot, the kernel's
 * timestamps; now_s < 0: the newest timestamp of the text) and counts the others in r->xids_older and
 * r->sxids_older; a line without a timestamp is kept. Timestamps: dmesg's "[ 123.456789]" and /dev/kmsg's
 * "6,1234,123456789,-;".
 */
void nh_kernel_log_parse(const char *text, size_t len, double since_s, double now_s, nh_record *r);

/* Reads a kernel log file whole into a malloc'd, NUL-terminated buffer; NULL with why in err. */
char *nh_read_text_file(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* Whether two PCI addresses name the same device (domain, bus, device; the function and the case and width
 * of the digits aside): the kernel log's 0000:1b:00 and NVML's 00000000:1B:00.0 do. */
int nh_pci_same_device(const char *a, const char *b);

#endif
