#include "ga_peaks.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

static const char *const dtype_names[GA_DTYPE_COUNT] = {"fp64", "fp32", "tf32", "fp16",
                                                        "bf16", "fp8",  "int8"};

const char *ga_dtype_name(int d)
{
    return d >= 0 && d < GA_DTYPE_COUNT ? dtype_names[d] : "?";
}

int ga_dtype_parse(const char *name)
{
    for (int d = 0; d < GA_DTYPE_COUNT; d++)
        if (strcasecmp(name, dtype_names[d]) == 0)
            return d;
    return -1;
}

/* Order matters: the first entry that matches wins, so the specific names (H100 NVL, H100 PCIe) come before
 * the general ones. Figures: docs/gpu-peaks.md (NVIDIA datasheets, sparsity figures halved). fp64 is the FP64
 * Tensor Core rate where the GPU has one (cuBLAS DGEMM uses it), fp32 the non-tensor FP32 rate (SGEMM without
 * TF32). Columns: fp64, fp32, tf32, fp16, bf16, fp8, int8. */
static const ga_gpu_peaks table[] = {
    {"H100 NVL", {"H100 NVL", NULL}, NULL, {60, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5}, 3900, 5, 16},
    {"H100 PCIe", {"H100 PCIe", NULL}, NULL, {51, 51, 378, 756, 756, 1513, 1513}, 2000, 5, 16},
    {"H100 SXM", {"H100", "HBM3"}, NULL, {67, 67, 494.5, 989.5, 989.5, 1979, 1979}, 3350, 5, 16},
    {"H100 SXM", {"H100", "SXM"}, NULL, {67, 67, 494.5, 989.5, 989.5, 1979, 1979}, 3350, 5, 16},
    {"H200 NVL", {"H200 NVL", NULL}, "GH200", {60, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5}, 4800, 5, 16},
    {"H200 SXM", {"H200", NULL}, "GH200", {67, 67, 494.5, 989.5, 989.5, 1979, 1979}, 4800, 5, 16},
    {"A100 SXM4 80GB", {"A100", "SXM4-80GB"}, NULL, {19.5, 19.5, 156, 312, 312, 0, 624}, 2039, 4, 16},
    {"A100 SXM4 40GB", {"A100", "SXM4-40GB"}, NULL, {19.5, 19.5, 156, 312, 312, 0, 624}, 1555, 4, 16},
    {"A100 PCIe 80GB", {"A100", "80GB PCIe"}, NULL, {19.5, 19.5, 156, 312, 312, 0, 624}, 1935, 4, 16},
    {"A100 PCIe 40GB", {"A100", "PCIE-40GB"}, NULL, {19.5, 19.5, 156, 312, 312, 0, 624}, 1555, 4, 16},
    {"L40S", {"L40S", NULL}, NULL, {0, 91.6, 183, 362, 362, 733, 733}, 864, 4, 16},
    {"B200", {"B200", NULL}, "GB200", {37, 75, 1100, 2250, 2250, 4500, 4500}, 8000, 5, 16},
};

const ga_gpu_peaks *ga_peaks_lookup(const char *device_name)
{
    if (!device_name || !*device_name)
        return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const ga_gpu_peaks *t = &table[i];
        int ok = 1;
        for (int j = 0; j < 2 && ok; j++)
            if (t->match[j] && !strcasestr(device_name, t->match[j]))
                ok = 0;
        if (ok && t->exclude && strcasestr(device_name, t->exclude))
            ok = 0;
        if (ok)
            return t;
    }
    return NULL;
}

double ga_pcie_GBps(int gen, int width)
{
    static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
    if (gen < 3 || gen > 6 || width <= 0)
        return 0;
    double enc = gen == 6 ? 242.0 / 256.0 : 128.0 / 130.0;
    return gts[gen] * width * enc / 8.0;
}
