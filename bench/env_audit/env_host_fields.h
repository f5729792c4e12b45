/* The host settings' values as the audit compares them (one text per node, from its first rank's record; ""
 * when not covered) and the detail naming the part that deviates. Pure. */
#ifndef ENV_HOST_FIELDS_H
#define ENV_HOST_FIELDS_H

#include <stddef.h>

#include "env_record.h"

void env_hf_dimms(const env_record *r, char *out, size_t len);
void env_hf_cpu_topology(const env_record *r, char *out, size_t len);
void env_hf_vbios(const env_record *r, char *out, size_t len);
void env_hf_inforom(const env_record *r, char *out, size_t len);
void env_hf_hca_fw(const env_record *r, char *out, size_t len);
void env_hf_link_layer(const env_record *r, char *out, size_t len);
void env_hf_acs(const env_record *r, char *out, size_t len);
void env_hf_iommu(const env_record *r, char *out, size_t len);
void env_hf_cmdline(const env_record *r, char *out, size_t len);
void env_hf_hugepages(const env_record *r, char *out, size_t len);
void env_hf_clocksource(const env_record *r, char *out, size_t len);
void env_hf_time_sync(const env_record *r, char *out, size_t len);

/* The parts whose value is not among the majority's ("mlx5_3 28.40.1000", "0000:1b:00.0 96.00.99.00.01"). */
void env_hf_vbios_detail(const env_record *r, const char *majority, char *out, size_t len);
void env_hf_inforom_detail(const env_record *r, const char *majority, char *out, size_t len);
void env_hf_hca_fw_detail(const env_record *r, const char *majority, char *out, size_t len);
void env_hf_link_layer_detail(const env_record *r, const char *majority, char *out, size_t len);
/* The switch port whose ACS is on ("on at 0000:17:01.0 (ACSCtl ...)": "0000:17:01.0"), "" otherwise. */
void env_hf_acs_detail(const env_record *r, const char *required, char *out, size_t len);

#endif
