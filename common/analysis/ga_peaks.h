/* Datasheet limits of known GPU models: dense (no sparsity) TFLOP/s per GEMM dtype, memory bandwidth and the
 * PCIe link. One table, sources and caveats in docs/gpu-peaks.md. Pure. */
#ifndef GA_PEAKS_H
#define GA_PEAKS_H

typedef enum { GA_FP64, GA_FP32, GA_TF32, GA_FP16, GA_BF16, GA_FP8, GA_INT8, GA_DTYPE_COUNT } ga_dtype;

typedef struct {
    const char *model; /* our name for the model, e.g. "H100 SXM" */
    const char
        *match[2];       /* case-insensitive substrings of the CUDA device name, all present (NULL: unused) */
    const char *exclude; /* a substring that must be absent (NULL: none) */
    double tflops[GA_DTYPE_COUNT]; /* dense peak per dtype (TOP/s for int8); 0 when not published */
    double mem_GBps;               /* device memory bandwidth, GB/s (1e9 bytes/s) */
    int pcie_gen, pcie_width;      /* the GPU's host link */
} ga_gpu_peaks;

/* The entry whose patterns match a CUDA device name ("NVIDIA H100 80GB HBM3"), or NULL when unknown. */
const ga_gpu_peaks *ga_peaks_lookup(const char *device_name);

/* Peak one-direction data rate of a PCIe link in GB/s after line encoding (gen 3 to 5: 128b/130b; gen 6:
 * FLIT mode, 242/256), or 0 for an unknown generation or width. */
double ga_pcie_GBps(int gen, int width);

const char *ga_dtype_name(int d);
/* -1 when the name is not a dtype. */
int ga_dtype_parse(const char *name);

#endif
