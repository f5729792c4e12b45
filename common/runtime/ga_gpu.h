/* GPU discovery and selection through the CUDA runtime. Built without CUDA, or run without a driver, every
 * query reports zero GPUs with the reason, so the host paths run unchanged. */
#ifndef GA_GPU_H
#define GA_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "ga_backend.h"
#include "ga_runtime.h"

typedef struct {
    int index;
    char name[96];
    char uuid[48]; /* "GPU-xxxxxxxx-..." as nvidia-smi prints it */
    char pci_bus_id[24];
    double memory_gib;
    int sm_count;
    int cc_major, cc_minor;
} ga_gpu_info;

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
