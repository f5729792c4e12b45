#include "ga_gather.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gpu.h"

void ga_record_header_init(const ga_ctx *ctx, ga_record_header *hdr)
{
    memset(hdr, 0, sizeof *hdr);
    snprintf(hdr->host, sizeof hdr->host, "%s", ctx->host);
    /* Slurm's name for the node may not be its host name (NodeHostname differs): drain.sh needs Slurm's. */
    const char *slurm = getenv("SLURMD_NODENAME");
    snprintf(hdr->slurm_node, sizeof hdr->slurm_node, "%s", slurm ? slurm : "");
    snprintf(hdr->pod, sizeof hdr->pod, "%s", ctx->pod);
    hdr->world_rank = ctx->world_rank;
    hdr->local_rank = ctx->local_rank;
    hdr->local_size = ctx->local_size;
    hdr->node_index = ctx->node_index;
    hdr->device_index = -1;
    hdr->device_node_index = -1;
    hdr->status = GA_EXIT_PASS;
    const ga_gpu_info *gpu = ga_gpu_selected();
    if (gpu) {
        hdr->device_index = gpu->index;
        hdr->device_node_index = gpu->node_index;
        snprintf(hdr->device_name, sizeof hdr->device_name, "%s", gpu->name);
        snprintf(hdr->device_uuid, sizeof hdr->device_uuid, "%s", gpu->uuid);
        snprintf(hdr->device_pci_bus_id, sizeof hdr->device_pci_bus_id, "%s", gpu->pci_bus_id);
    }
}

void ga_gather_records(const ga_ctx *ctx, const void *mine, size_t record_size, void **all)
{
    *all = NULL;
    if (record_size > (size_t)1 << 30)
        GA_FATAL(GA_EXIT_INTERNAL, "record of %zu bytes is too large to gather", record_size);
    if (ctx->world_rank == 0) {
        *all = malloc(record_size * (size_t)ctx->world_size);
        if (!*all)
            GA_FATAL(GA_EXIT_INTERNAL, "cannot allocate %zu bytes for %d records",
                     record_size * ctx->world_size, ctx->world_size);
    }
    GA_MPI_CHECK(
        MPI_Gather(mine, (int)record_size, MPI_BYTE, *all, (int)record_size, MPI_BYTE, 0, MPI_COMM_WORLD));
}
