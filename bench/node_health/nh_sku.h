/* Expectations per SKU: what a healthy node of a given GPU platform has (GPUs, NVLinks per GPU, PCIe link,
 * HCAs and their rate), read from a JSON file (skus.json, built into the program, or --sku-file), matched
 * by GPU model name and overridden by the command line. Pure: jansson only. */
#ifndef NH_SKU_H
#define NH_SKU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NH_MAX_SKUS 16
#define NH_MAX_MATCH 4

/* -1 (or < 0) where nothing is expected. */
typedef struct {
    char name[48]; /* "" when no SKU applies */
    int gpus, nvlinks_per_gpu, pcie_gen, pcie_width, hcas;
    double ib_rate_gbps;
    char compute_hcas[256]; /* the compute ports in NCCL_IB_HCA's syntax ("" none: see nh_ports.h) */
    /* Traffic between nodes must go by GPUDirect RDMA: the suite gives allreduce_bw --expect-net ib-gdr,
     * whose evidence is NCCL's own connection lines. Never a node_health failure: a node shows some of the
     * paths NCCL can take (peer-memory modules, DMA-BUF), not whether NCCL takes one. The SKU file's
     * "require_gdr" ("require_peermem", its old name, is read as the same). */
    bool require_gdr;
} nh_expect;

typedef struct {
    int64_t ecc_corrected_volatile; /* correctable ECC errors since boot above which a GPU warns */
    int64_t ib_port_counter;        /* an IB error counter above which a port warns */
    int64_t nvlink_counter;         /* NVLink CRC / replay / recovery sum above which a GPU warns */
    int64_t pcie_replay_counter;    /* PCIe replays above which a GPU warns (optional in the file: 100) */
} nh_thresholds;

typedef struct {
    nh_expect skus[NH_MAX_SKUS];
    char match[NH_MAX_SKUS][NH_MAX_MATCH][64];   /* substrings of the GPU name, one of which it must have */
    char exclude[NH_MAX_SKUS][NH_MAX_MATCH][64]; /* substrings it must not have ("GH200" for "H200") */
    int n;
    nh_thresholds thresholds;
} nh_sku_table;

/* The SKU file built into the program (bench/node_health/skus.json). */
extern const char nh_builtin_skus[];

/* Parses a SKU file's text into t. 0, or -1 with a one-line reason (unknown keys, wrong types). */
int nh_sku_table_parse(const char *json_text, nh_sku_table *t, char *err, size_t errlen);

/* The SKU called name, or NULL. */
const nh_expect *nh_sku_by_name(const nh_sku_table *t, const char *name);
/* The first SKU one of whose match strings the GPU name contains and none of whose exclude strings, or NULL.
 */
const nh_expect *nh_sku_match(const nh_sku_table *t, const char *gpu_name);

/* An expectation with nothing expected. */
nh_expect nh_expect_none(void);

#endif
