/* What node_health records on each rank: a fixed-size record gathered as bytes to rank 0. Every rank fills
 * the GPU part for the GPUs it checks (NVML); the node's checker (local rank 0) also fills the node part
 * (kernel log, InfiniBand ports, GPUDirect RDMA). A value that could not be read is -1 (or ""), and the
 * field's name is listed in an `unreadable` string, so the analysis can say what it could not check. */
#ifndef NH_RECORD_H
#define NH_RECORD_H

#include <stdint.h>

#include "ga_record.h"

#define NH_MAX_GPUS 16     /* GPUs one rank checks (all of a node's when one rank runs per node) */
#define NH_MAX_NVLINKS 18  /* NVML_NVLINK_MAX_LINKS on Hopper */
#define NH_MAX_PORTS 32    /* InfiniBand / RoCE ports of a node */
#define NH_MAX_XIDS 32     /* distinct (GPU, Xid) pairs of a node's kernel log */
#define NH_MAX_SXIDS 16    /* distinct (NVSwitch, SXid) pairs of a node's kernel log */
#define NH_CLOCK_SAMPLES 5 /* reads of the clock event reasons, NH_CLOCK_SAMPLE_MS apart */
#define NH_CLOCK_SAMPLE_MS 100
#define NH_UNREADABLE_LEN 160

/* NVML's clock event (throttle) reason bits, as nvml.h defines them (nvmlClocksEventReason*). */
#define NH_CLOCK_SW_POWER_CAP 0x4ULL
#define NH_CLOCK_HW_SLOWDOWN 0x8ULL
#define NH_CLOCK_SW_THERMAL 0x20ULL
#define NH_CLOCK_HW_THERMAL 0x40ULL
#define NH_CLOCK_HW_POWER_BRAKE 0x80ULL

/* nvmlReturn_t answers that say the GPU itself is gone (nvml.h: NVML_ERROR_GPU_IS_LOST, _RESET_REQUIRED). */
#define NH_NVML_GPU_IS_LOST 15
#define NH_NVML_RESET_REQUIRED 16

/* nvmlGpuFabricState_t */
#define NH_FABRIC_NOT_SUPPORTED 0
#define NH_FABRIC_COMPLETED 3

/* nh_port.role: what the port is to the checks (nh_ports.h chooses it on rank 0 from the node's ports, the
 * expectation and the list of compute ports). Only compute ports are held to the state, rate and error rules
 * and counted against the expected HCAs. */
#define NH_PORT_ROLE_UNSET 0
#define NH_PORT_ROLE_COMPUTE 1
#define NH_PORT_ROLE_OTHER 2 /* storage, management, front-end: reported, not judged */
#define NH_PORT_ROLE_VF 3    /* an SR-IOV virtual function not chosen as compute: reported, not judged */

typedef struct {
    int32_t index; /* NVML index on the node */
    char name[96];
    char uuid[96];       /* NVML_DEVICE_UUID_V2_BUFFER_SIZE: NVML documents up to 96 with the NUL */
    char pci_bus_id[24]; /* as NVML writes it: 00000000:1B:00.0 */
    int32_t handle_rc;   /* nvmlReturn_t of nvmlDeviceGetHandleByIndex: 0, or why the GPU has no handle */
    int32_t lost_rc;     /* NH_NVML_GPU_IS_LOST or NH_NVML_RESET_REQUIRED when the handle or any call answered
                          * it (the GPU is gone until a reset), else 0 */
    int32_t numa_node;   /* from sysfs; -1 unknown */
    int32_t ecc_mode;    /* 1 on, 0 off, -1 unknown */
    int64_t ecc_uncorrected_volatile, ecc_uncorrected_aggregate;
    int64_t ecc_corrected_volatile, ecc_corrected_aggregate;
    int32_t remap_pending, remap_failed; /* 0/1, -1 unknown */
    int32_t retired_pages_pending;       /* 0/1, -1 unknown */
    int32_t pcie_width, pcie_max_width, pcie_gen, pcie_max_gen;
    int64_t pcie_replay; /* nvmlDeviceGetPcieReplayCounter, -1 unknown */
    int32_t
        recovery_action; /* NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (nvmlDeviceGpuRecoveryAction_t), -1 unknown */
    int32_t nvlinks;     /* links the GPU has (NVML answers for them), -1 unknown */
    int32_t nvlinks_active; /* of those, active */
    uint32_t nvlink_down_mask;
    uint32_t nvlink_sleep_mask; /* links read inactive in their low-power state: asleep, counted active */
    int64_t nvlink_replay, nvlink_recovery, nvlink_crc; /* summed over links, -1 unknown */
    int64_t nvlink_crc_data, nvlink_ecc_data;           /* DL CRC data and ECC data counters (3, 4), -1 */
    int64_t clock_event_reasons;                        /* bits seen in any of the samples, -1 unknown */
    int64_t clock_event_persistent;                     /* bits set in every sample, -1 unknown */
    int32_t clock_event_samples;                        /* reads of the reasons that answered */
    int32_t power_limit_mw, power_default_limit_mw;
    int32_t temperature_c, temperature_slowdown_c;
    int32_t persistence_mode;           /* 0/1, -1 unknown */
    int32_t mig_mode;                   /* 0/1, -1 unknown */
    int32_t fabric_state;               /* nvmlGpuFabricState_t, -1 unknown */
    int32_t fabric_status;              /* nvmlReturn_t of the registration, when the state is completed */
    char unreadable[NH_UNREADABLE_LEN]; /* fields NVML failed to answer, comma-separated */
} nh_gpu;

typedef struct {
    char hca[32]; /* mlx5_0 */
    int32_t port;
    int32_t state; /* 4 = ACTIVE, -1 unreadable */
    char state_name[24];
    int32_t phys_state; /* 5 = LinkUp, -1 unreadable */
    char phys_state_name[24];
    char link_layer[16]; /* InfiniBand or Ethernet (RoCE); "" unreadable */
    double rate_gbps;    /* -1 unreadable */
    int64_t symbol_error, link_downed, link_error_recovery, port_rcv_errors; /* -1 unreadable */
    int32_t numa_node;                                                       /* of the HCA, -1 unknown */
    int32_t is_vf; /* 1: the HCA is an SR-IOV virtual function (its device/physfn link exists), 0 not */
    int32_t role;  /* NH_PORT_ROLE_*, filled on rank 0 before the report (the probe leaves it unset) */
    char unreadable[NH_UNREADABLE_LEN];
} nh_port;

typedef struct {
    int32_t xid;
    char pci[24]; /* as the kernel log names the GPU: 0000:1b:00 */
    int32_t count;
    char first_line[128];
} nh_xid;

/* An NVSwitch error of the kernel log ("nvidia-nvswitchN: SXid (PCI:...): NNNNN, Fatal|Non-fatal, ..."). */
typedef struct {
    int32_t sxid;
    char pci[24];  /* the NVSwitch's PCI address as the log writes it */
    int32_t fatal; /* 1: a line said "Fatal", 0: "Non-fatal", -1: neither was seen */
    int32_t count;
    char first_line[128];
} nh_sxid;

typedef struct {
    ga_record_header hdr;
    /* GPU part: every rank */
    int32_t nvml_loaded;     /* 1 when NVML could be loaded and initialised */
    char nvml_why[192];      /* why not */
    int32_t nvml_gpus_total; /* GPUs NVML sees on the node, -1 unknown */
    int32_t gpu_count;       /* GPUs this rank checked */
    nh_gpu gpus[NH_MAX_GPUS];
    /* node part: the node's checker (local rank 0) only */
    int32_t node_checker;
    int32_t kernel_log_read; /* 1 read, 0 not */
    char kernel_log_source[96];
    char kernel_log_why[192];
    int32_t xid_count, xids_dropped;
    int32_t xids_older; /* Xid lines older than --xid-since, not judged */
    double xid_since_s; /* the window, 0: since boot */
    nh_xid xids[NH_MAX_XIDS];
    int32_t sxid_count, sxids_dropped, sxids_older;
    nh_sxid sxids[NH_MAX_SXIDS];
    int32_t ib_read; /* 1 when the sysfs InfiniBand class could be listed (even empty) */
    char ib_why[192];
    int32_t hca_count, port_count, ports_dropped;
    nh_port ports[NH_MAX_PORTS];
    char ib_hca_env[128]; /* NCCL_IB_HCA as the node's checker sees it ("" unset): the job's compute ports */
    /* GPUDirect RDMA paths the node shows (docs/node_health.md, "GPUDirect RDMA"): 1, 0, -1 unknown */
    int32_t peermem;     /* module/nvidia_peermem/version: the nvidia-peermem module is loaded */
    int32_t nv_mem;      /* kernel/mm/memory_peers/nv_mem{,_nc}/version: the legacy nv_peer_mem module */
    int32_t nvidia_open; /* module/nvidia/taint without P: the open kernel modules (DMA-BUF export of GPU
                            memory); 0 proprietary; -1 nvidia not loaded or its taint unreadable */
} nh_record;

#endif
