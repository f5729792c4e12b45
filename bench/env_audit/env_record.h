/* What env_audit records on each rank: a fixed-size record (gathered as bytes to rank 0). */
#ifndef ENV_RECORD_H
#define ENV_RECORD_H

#include <stdint.h>

#include "ga_record.h"

#define ENV_MAX_GPUS 16
#define ENV_MAX_NICS 16
#define ENV_MAX_VARS 32

/* Every version is filled, or says why it is absent. */
typedef enum {
    ENV_V_NVIDIA_DRIVER,
    ENV_V_CUDA_DRIVER,
    ENV_V_CUDA_RUNTIME,
    ENV_V_CUBLAS,
    ENV_V_NCCL_LIBRARY,
    ENV_V_NCCL_HEADER,
    ENV_V_MPI_LIBRARY,
    ENV_V_HWLOC,
    ENV_V_JANSSON,
    ENV_V_COUNT
} env_version_id;

extern const char *const env_version_names[ENV_V_COUNT];

typedef struct {
    char value[112]; /* "" when absent */
    char why[144];   /* why it is absent */
} env_version;

typedef struct {
    char name[96];
    char uuid[48];
    char pci_bus_id[24];
    float memory_gib;
    int32_t sm_count, cc_major, cc_minor;
    int32_t numa_node; /* -1 unknown */
} env_gpu;

typedef struct {
    char name[32];       /* mlx5_0, ib0, eth0 */
    char kind[16];       /* "rdma" (OpenFabrics device) or "net" */
    char link_layer[16]; /* InfiniBand or Ethernet (RoCE) for rdma devices, "" otherwise */
    char state[16];      /* port state for rdma devices (4 = active) */
    int32_t numa_node;
} env_nic;

typedef struct {
    char name[48];
    char value[160];
} env_var;

typedef struct {
    ga_record_header hdr;
    char os[96];
    char kernel[96];
    char cpu_model[96];
    int32_t cores, pus, numa_nodes;
    int32_t cpus_allowed; /* CPUs in this rank's affinity mask (sched_getaffinity), 0 unknown */
    double memory_gib;
    env_version versions[ENV_V_COUNT];
    int32_t gpu_count; /* visible to this rank */
    char gpu_why[160]; /* why none are visible */
    env_gpu gpus[ENV_MAX_GPUS];
    int32_t nic_count;
    env_nic nics[ENV_MAX_NICS];
    int32_t var_count, vars_dropped;
    env_var vars[ENV_MAX_VARS];
} env_record;

#endif
