/* PCI bus ids, the one name of a GPU that every numbering agrees on. The CUDA ordinal depends on
 * CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER (with one GPU bound per rank every GPU is device 0), and NVML
 * numbers all of a node's GPUs: only the bus id is the same in both. NVML writes it with an 8-digit domain in
 * upper case ("00000000:1B:00.0", nvmlPciInfo_t.busId), the CUDA runtime with a 4-digit one
 * ("0000:1B:00.0", cudaDeviceGetPCIBusId); sysfs and lspci write "0000:1b:00.0". One form is kept. */
#ifndef GA_PCI_H
#define GA_PCI_H

#include <stdbool.h>
#include <stddef.h>

/* The normal form "dddd:bb:dd.f", lower case: "0000:1b:00.0". 24 bytes hold it with room to spare. */
#define GA_PCI_BUS_ID_LEN 24

/* Writes in's normal form to out (out may be in) and returns 0; -1 (out "") when in is not a bus id of the
 * form [domain:]bus:device.function in hex, or its domain does not fit in 16 bits. */
int ga_pci_normalise(const char *in, char *out, size_t len);

/* Whether two bus ids name the same device, in whatever form each was written; false when either is not
 * one. */
bool ga_pci_same(const char *a, const char *b);

#endif
