/* The fixed-size per-rank record. Every program's record starts with a ga_record_header, followed by its own
 * fixed-size metrics, so that one MPI_Gather of bytes (ga_gather) brings every rank's result to rank 0. The
 * records themselves are plain data: the analyses read them without MPI. */
#ifndef GA_RECORD_H
#define GA_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "ga_findings.h"
#include "ga_job.h" /* GA_HOST_MAX */

typedef struct {
    char host[GA_HOST_MAX]; /* the machine: Kubernetes' node name (GA_NODE_NAME), else gethostname() */
    int32_t world_rank, local_rank, local_size, node_index;
    int32_t device_index; /* CUDA device the rank used, -1 on the host path */
    /* The same GPU among all of its node's GPUs, as NVML numbers them; -1 when the rank cannot know it (its
     * CUDA_VISIBLE_DEVICES hides some GPUs): ga_gpu_node_index says when it can. */
    int32_t device_node_index;
    char device_name[96];
    char device_uuid[48];
    char
        device_pci_bus_id[24]; /* normal form (ga_pci.h): the GPU's name in findings, reports and the merge */
    int32_t status;            /* ga_exit_code of this rank's own measurement */
    char message[192];         /* why, when status is not GA_EXIT_PASS */
    char slurm_node[GA_HOST_MAX]; /* SLURMD_NODENAME: the node's name to Slurm (drain.sh), "" outside Slurm */
    char pod[GA_HOST_MAX]; /* the rank's own host name where host is the machine's and differs (a pod), else
                              "" */
} ga_record_header;

/* Marks this rank's own measurement as failed (status, message) and says so on its log, so that rank 0
 * can report it by node and rank after the gather. */
void ga_record_header_fail(ga_record_header *hdr, int status, const char *tag, const char *message);

/* Where a finding about this rank's GPU applies: its node, rank, CUDA ordinal and PCI bus id. */
ga_where ga_record_where(const ga_record_header *hdr);

/* The record of rank i in a gathered array. */
static inline const void *ga_record_at(const void *all, size_t record_size, int i)
{
    return (const char *)all + (size_t)i * record_size;
}

#endif
