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

/* An RDMA adapter as sysfs shows it (/sys/class/infiniband/<name>). */
typedef struct {
    char name[32];
    char fw_ver[32];     /* fw_ver, "" unreadable */
    char link_layer[16]; /* ports/<lowest>/link_layer */
} env_hca;

/* A GPU's firmware (env_host.c, env_nvml.c). */
typedef struct {
    char pci_bus_id[24];
    char vbios[32];   /* NVML's nvmlDeviceGetVbiosVersion, else the driver's information file */
    char inforom[24]; /* NVML's nvmlDeviceGetInforomImageVersion; "" not covered */
} env_gpu_fw;

/* Host settings read from procfs and sysfs under a root that tests redirect (env_host.h). A text field that
 * is
 * "" was not readable ("not covered"): it is left out of the comparisons. */
typedef struct {
    int32_t dimm_count; /* EDAC DIMMs with a size, -1 not covered */
    int32_t sockets, threads_per_core;
    int32_t hca_count, gpu_fw_count;
    env_hca hcas[ENV_MAX_NICS];
    env_gpu_fw gpu_fw[ENV_MAX_GPUS];
    char fw_why[96];      /* why NVML did not answer: the InfoROM is then not covered */
    char acs[96];         /* "off", "on at <bridge> (ACSCtl 0x..)", "" not covered */
    char acs_why[96];     /* why not covered, or what was checked */
    char iommu[48];       /* "off", "on (GPU domain identity)", ... */
    char cmdline[256];    /* the audited keys of /proc/cmdline, sorted; "none" when it has none of them */
    char hugepages[64];   /* "HugePages 0 x 2048 kB, THP madvise" */
    char clocksource[32]; /* current_clocksource */
    char time_sync[24];   /* "synchronized" or "unsynchronized" (adjtimex) */
} env_host;

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
    env_host host;
} env_record;

#endif
