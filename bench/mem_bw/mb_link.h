/* The GPU's PCIe link as NVML reports it, sampled while mem_bw's host-link tests copy: an idle GPU downshifts
 * its link, so only a reading under load says what generation and width the link trained at. NVML is loaded
 * at run time (dlopen of libnvidia-ml.so.1); without it nothing is recorded. GPU builds only. */
#ifndef MB_LINK_H
#define MB_LINK_H

#include "mb_record.h"

typedef struct mb_link mb_link;

/* NULL when NVML or the GPU (by its PCI bus id) cannot be had. Records the link's maximum generation and
 * width (nvmlDeviceGetMaxPcieLink*: the most both the GPU and its slot can do) into r. */
mb_link *mb_link_open(const char *pci_bus_id, mb_record *r);
/* Keeps into r the highest generation and width seen so far during the copies. */
void mb_link_sample(mb_link *l, mb_record *r);
void mb_link_close(mb_link *l);

#endif
