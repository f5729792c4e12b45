#include "env_host_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct non-empty items, sorted, joined by ", ": one value per node however its parts are numbered. */
static void join_distinct(const char **items, int n, char *out, size_t len)
{
    qsort(items, (size_t)n, sizeof *items, compare_strings);
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        if (items[i][0] && (i == 0 || strcmp(items[i], items[i - 1]) != 0))
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "", items[i]);
}

void env_hf_dimms(const env_record *r, char *out, size_t len)
{
    if (r->host.dimm_count > 0)
        snprintf(out, len, "%d", r->host.dimm_count);
    else
        out[0] = '\0';
}

void env_hf_cpu_topology(const env_record *r, char *out, size_t len)
{
    if (r->host.sockets > 0)
        snprintf(out, len, "%d socket%s, %d thread%s per core", r->host.sockets,
                 r->host.sockets == 1 ? "" : "s", r->host.threads_per_core,
                 r->host.threads_per_core == 1 ? "" : "s");
    else
        out[0] = '\0';
}

void env_hf_vbios(const env_record *r, char *out, size_t len)
{
    const char *items[ENV_MAX_GPUS];
    int n = 0;
    for (int i = 0; i < r->host.gpu_fw_count && i < ENV_MAX_GPUS; i++)
        items[n++] = r->host.gpu_fw[i].vbios;
    join_distinct(items, n, out, len);
}

void env_hf_inforom(const env_record *r, char *out, size_t len)
{
    const char *items[ENV_MAX_GPUS];
    int n = 0;
    for (int i = 0; i < r->host.gpu_fw_count && i < ENV_MAX_GPUS; i++)
        items[n++] = r->host.gpu_fw[i].inforom;
    join_distinct(items, n, out, len);
}

void env_hf_hca_fw(const env_record *r, char *out, size_t len)
{
    const char *items[ENV_MAX_NICS];
    int n = 0;
    for (int i = 0; i < r->host.hca_count && i < ENV_MAX_NICS; i++)
        items[n++] = r->host.hcas[i].fw_ver;
    join_distinct(items, n, out, len);
}

void env_hf_link_layer(const env_record *r, char *out, size_t len)
{
    const char *items[ENV_MAX_NICS];
    int n = 0;
    for (int i = 0; i < r->host.hca_count && i < ENV_MAX_NICS; i++)
        items[n++] = r->host.hcas[i].link_layer;
    join_distinct(items, n, out, len);
}

#define TEXT_FIELD(fname, member)                                                                            \
    void env_hf_##fname(const env_record *r, char *out, size_t len)                                          \
    {                                                                                                        \
        snprintf(out, len, "%s", r->host.member);                                                            \
    }
TEXT_FIELD(acs, acs)
TEXT_FIELD(iommu, iommu)
TEXT_FIELD(cmdline, cmdline)
TEXT_FIELD(hugepages, hugepages)
TEXT_FIELD(clocksource, clocksource)
TEXT_FIELD(time_sync, time_sync)

/* Whether v is one of the ", "-separated items of list. */
static int in_list(const char *v, const char *list)
{
    size_t n = strlen(v);
    for (const char *p = list; (p = strstr(p, v)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

/* Appends "name value" for each part whose value is set and not among the majority's. */
static void add_part(const char *name, const char *value, const char *majority, char *out, size_t len)
{
    size_t used = strlen(out);
    if (value[0] && !in_list(value, majority) && used < len)
        snprintf(out + used, len - used, "%s%s %s", used ? ", " : "", name, value);
}

void env_hf_vbios_detail(const env_record *r, const char *majority, char *out, size_t len)
{
    for (int i = 0; i < r->host.gpu_fw_count && i < ENV_MAX_GPUS; i++)
        add_part(r->host.gpu_fw[i].pci_bus_id, r->host.gpu_fw[i].vbios, majority, out, len);
}

void env_hf_inforom_detail(const env_record *r, const char *majority, char *out, size_t len)
{
    for (int i = 0; i < r->host.gpu_fw_count && i < ENV_MAX_GPUS; i++)
        add_part(r->host.gpu_fw[i].pci_bus_id, r->host.gpu_fw[i].inforom, majority, out, len);
}

void env_hf_hca_fw_detail(const env_record *r, const char *majority, char *out, size_t len)
{
    for (int i = 0; i < r->host.hca_count && i < ENV_MAX_NICS; i++)
        add_part(r->host.hcas[i].name, r->host.hcas[i].fw_ver, majority, out, len);
}

void env_hf_link_layer_detail(const env_record *r, const char *majority, char *out, size_t len)
{
    for (int i = 0; i < r->host.hca_count && i < ENV_MAX_NICS; i++)
        add_part(r->host.hcas[i].name, r->host.hcas[i].link_layer, majority, out, len);
}

void env_hf_acs_detail(const env_record *r, const char *required, char *out, size_t len)
{
    (void)required;
    const char *at = strncmp(r->host.acs, "on at ", 6) == 0 ? r->host.acs + 6 : "";
    snprintf(out, len, "%.*s", (int)strcspn(at, " "), at);
}
