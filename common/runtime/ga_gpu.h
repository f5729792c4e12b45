/* GPU discovery and selection through the CUDA runtime. Built without CUDA, or run without a driver, every
 * query reports zero GPUs with the reason, so the host paths run unchanged. */
#ifndef GA_GPU_H
#define GA_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "ga_backend.h"
#include "ga_runtime.h"

typedef struct {
    int index;      /* the CUDA ordinal: 0 on every GPU of a node whose ranks are bound one GPU each */
    int node_index; /* among all of the node's GPUs, as NVML numbers them; -1 unknown (ga_gpu_node_index) */
    char name[96];
    char uuid[48];       /* "GPU-xxxxxxxx-..." as nvidia-smi prints it */
    char pci_bus_id[24]; /* normal form (ga_pci.h), "0000:1b:00.0": the GPU's name everywhere */
    double memory_gib;
    int sm_count;
    int cc_major, cc_minor;
} ga_gpu_info;

/* Sets CUDA_DEVICE_ORDER=PCI_BUS_ID unless the user set it, before anything starts the CUDA runtime (MPI may:
 * it is called before MPI_Init). CUDA's default order is FASTEST_FIRST (CUDA Programming Guide, section 5.2
 * "CUDA Environment Variables", CUDA_DEVICE_ORDER); nvidia-smi and NVML number GPUs by PCI bus id, and
 * CUDA_VISIBLE_DEVICES' integer indices are nvidia-smi's (same section). Issue 40, finding 4. */
void ga_gpu_set_device_order(void);

/* CUDA_DEVICE_ORDER as this process runs with it, and whether the user set it (then an ordinal may not be
 * the GPU's place in PCI order, and the report says so). */
const char *ga_gpu_device_order(bool *set_by_user);

/* The GPU's index among all of its node's GPUs, from its CUDA ordinal: the same number only where the rank
 * sees every GPU of the node (CUDA_VISIBLE_DEVICES unset, NVIDIA_VISIBLE_DEVICES unset or "all") and CUDA
 * numbers them in PCI bus order as nvidia-smi does. A rank that sees one GPU is taken as bound to it (a
 * cgroup or container shows it as device 0 whatever its place on the node). Else -1: node_health's NVML
 * index, matched by PCI bus id in the suite's merge, names it. NVML's reference (nvmlDeviceGetIndex) promises
 * no order and warns that "the NVML index may not correlate with ... the CUDA device index": the bus id is
 * the name, this index only what is shown beside it (docs/measured-on-gpu.md: what a real node must confirm).
 * Pure. */
int ga_gpu_node_index(int ordinal, int visible, const char *cuda_visible, const char *nvidia_visible,
                      const char *device_order);

/* Number of visible GPUs; 0 with the reason in why (no CUDA in this build, no driver, no device). */
int ga_gpu_count(char *why, size_t whylen);
/* 0, or -1 with a message. */
int ga_gpu_query(int index, ga_gpu_info *out, char *err, size_t errlen);

/* CUDA driver and runtime API versions (e.g. 13000); 0 with the reason when unavailable. */
int ga_cuda_driver_version(char *why, size_t whylen);
int ga_cuda_runtime_version(char *why, size_t whylen);

/* Decides the backend for the whole job, identically on every rank (collective): auto means GPU when every
 * rank sees a GPU and host when none does; a mix, or GPU asked for where none is visible, is fatal. */
ga_backend ga_backend_resolve(const ga_ctx *ctx, ga_backend requested);

/* No silent host fallback: gpu_only names what was asked that only a GPU does ("--dtype bf16",
 * "--min-efficiency 60"), NULL when nothing was. Where auto resolved to the host path (no rank sees a GPU),
 * that is one line from rank 0 and GA_EXIT_ENV to end with (every rank decides alike); else -1, go on. */
int ga_backend_gpu_only(const ga_ctx *ctx, ga_backend requested, ga_backend resolved, const char *program,
                        const char *gpu_only);

/* Picks and activates this rank's GPU (collective over the node): the node-local rank indexes the visible
 * devices; a rank that sees exactly one device uses it (Slurm --gpu-bind, CUDA_VISIBLE_DEVICES per rank).
 * Two ranks of a node landing on the same GPU is fatal. */
void ga_gpu_select(const ga_ctx *ctx, ga_gpu_info *out);
/* The same with the device index given (device >= 0: nccl-tests' NCCL_TESTS_DEVICE), or picked (-1). */
void ga_gpu_select_device(const ga_ctx *ctx, int device, ga_gpu_info *out);

/* The GPU ga_gpu_select chose for this rank, or NULL before (or on the host path). */
const ga_gpu_info *ga_gpu_selected(void);

/* Pure: the device index a node-local rank takes, or -1 with a message when there are too few. */
int ga_gpu_pick_index(int local_rank, int local_size, int visible, char *err, size_t errlen);

#endif
