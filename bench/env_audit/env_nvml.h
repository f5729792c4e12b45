/* GPU firmware through NVML (loaded with dlopen, so a build needs neither the driver nor its header): the
 * VBIOS and InfoROM versions of each GPU of the node, by PCI bus id. Without NVML, nothing changes (the VBIOS
 * from the driver's information file stays, the InfoROM is not covered). */
#ifndef ENV_NVML_H
#define ENV_NVML_H

#include <stddef.h>

#include "env_record.h"

/* Fills h->gpu_fw from NVML; 0, or -1 with why (NVML not loaded, not initialised). */
int env_nvml_firmware(env_host *h, char *why, size_t whylen);

#endif
