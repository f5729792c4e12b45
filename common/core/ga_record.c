#include "ga_record.h"

#include <stdio.h>

#include "ga_log.h"

void ga_record_header_fail(ga_record_header *hdr, int status, const char *tag, const char *message)
{
    hdr->status = status;
    snprintf(hdr->message, sizeof hdr->message, "%s", message);
    ga_log_rank(tag, "%s", message);
}

ga_where ga_record_where(const ga_record_header *hdr)
{
    return (ga_where){hdr->host, hdr->node_index, hdr->world_rank, hdr->device_index,
                      hdr->device_index >= 0 && hdr->device_pci_bus_id[0] ? hdr->device_pci_bus_id : NULL};
}
