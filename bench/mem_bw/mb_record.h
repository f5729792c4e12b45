/* What mem_bw records on each rank: a fixed-size record (gathered as bytes to rank 0). */
#ifndef MB_RECORD_H
#define MB_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "ga_backend.h"
#include "ga_outlier.h"
#include "ga_record.h"

#define MB_MAX_MEASUREMENTS (1 + GA_REMEASURE_MAX)
/* --p2p: GPUs (local ranks) per node the copy matrix covers */
#define MB_P2P_MAX 16
/* A pair's state on the GPU path: copied, no peer access between the two GPUs (cudaDeviceCanAccessPeer), or
 * a CUDA call of its copy failed (the peer's IPC handle not opened, the copy not done). */
enum mb_p2p_state { MB_P2P_COPIED = 0, MB_P2P_NO_PEER_ACCESS = 1, MB_P2P_COPY_FAILED = 2 };

typedef enum { MB_DEVICE_COPY, MB_DEVICE_RW, MB_H2D, MB_D2H, MB_HOST_TRIAD, MB_TEST_COUNT } mb_test;

typedef enum { MB_NOT_RUN = 0, MB_MEASURED, MB_FAILED } mb_state;

typedef struct {
    int32_t state;  /* mb_state */
    char note[128]; /* why it failed */
    double bytes;   /* bytes counted per repetition (read + written) */
    int32_t reps;
    double best_s, median_s;
    double GBps;        /* bytes / best_s / 1e9: the best repetition, as STREAM reports (of the best
                         * measurement when it was measured again) */
    double median_GBps; /* bytes / median_s / 1e9 */
    int32_t check_ok;   /* the data arrived / the kernel computed the right values (in every measurement) */
    int32_t measured;   /* how many measurements: 1 + the remeasurements (--remeasure) */
    double measurements[MB_MAX_MEASUREMENTS]; /* GB/s of each, in order */
} mb_result;

typedef struct {
    ga_record_header hdr;
    char model[96];        /* GPU name, or CPU model on the host path */
    int32_t numa_node;     /* NUMA node the host buffers were bound to, -1 unknown */
    int32_t numa_bound;    /* the binding took */
    int32_t threads;       /* host triad threads */
    double pcie_link_GBps; /* the GPU's PCIe link as hwloc reads it now (0 unknown; idle GPUs downshift) */
    /* NVML, under the host-link tests' load (the best seen), and the most the GPU and its slot can do; -1 or
     * 0 unknown (no NVML, host path) */
    int32_t pcie_gen_load, pcie_width_load, pcie_max_gen, pcie_max_width;
    double buffer_bytes; /* size of each device / host array */
    double pinned_bytes; /* size of the pinned H2D/D2H buffer */
    mb_result t[MB_TEST_COUNT];
    /* --p2p (mb_p2p.h): this rank's row of its node's copy matrix, GB/s to each local rank (0: none, itself);
     * p2p_peers: the node's ranks, 0 when not measured */
    int32_t p2p_peers;
    double p2p_GBps[MB_P2P_MAX];
    /* GPU path: a pair this rank could not copy (mb_p2p_state), and why (the first such pair's reason) */
    int8_t p2p_state[MB_P2P_MAX];
    char p2p_note[96];
    int32_t triad_kernel; /* GPU path: the device_rw test's kernel (mb_triad_kernel, --triad-kernel) */
} mb_record;

typedef struct {
    uint64_t size;        /* bytes per array, 0: the backend's default */
    uint64_t pinned_size; /* bytes of the pinned transfer buffer, 0: default */
    int reps;
    int threads; /* host path, 0 automatic */
    double tolerance, min_efficiency, min_host_efficiency;
    ga_backend device;
    unsigned tests;        /* bit per mb_test to measure; 0: every test of the backend */
    int remeasure;         /* passes of remeasurement of a test with a suspect (--remeasure) */
    bool relative_warn;    /* --relative warn */
    double slow_factor;    /* test hook (host path): GPUACCEPT_TEST_SLOW_FACTOR on this rank, else 1 */
    double wait_timeout_s; /* -T/--wait-timeout, 0: none */
    bool p2p;              /* --p2p: the copy matrix between the GPUs (local ranks) of each node */
    double min_p2p;        /* --min-p2p GB/s: a pair's floor (the SKU's link figure), 0: none */
    int triad_kernel;      /* --triad-kernel (mb_triad.h's mb_triad_kernel), GPU path; default flat */
    bool triad_kernel_set; /* given on the command line: a GPU-only request */
} mb_opts;

const char *mb_test_name(int t);

/* --triad-kernel's names: "grid", "restrict", "flat" ("?" out of range). */
const char *mb_triad_kernel_name(int k);

/* Whether o asks for test t. */
bool mb_wants(const mb_opts *o, int t);

/* A measurement of a test into the result that keeps them all: the first is copied; a later one is appended
 * and replaces the figures when it is faster. Wrong data in any measurement stays wrong, and a test that
 * fails in any measurement has failed. */
void mb_result_add(mb_result *dst, const mb_result *src);

#endif
