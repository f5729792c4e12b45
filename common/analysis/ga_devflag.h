/* Flagging across the cluster, written once for every throughput figure (TFLOP/s of a dtype, GB/s of a
 * memory test): each GPU (or host rank) is compared with the GPUs of its own model by the one outlier rule of
 * every relative check (common/core/ga_outlier.h: below their median by more than the tolerance and beyond
 * their noise, leave one out in small groups, two never blame one), and with the datasheet peak of that model
 * when the model is known. Pure: no MPI, no CUDA. */
#ifndef GA_DEVFLAG_H
#define GA_DEVFLAG_H

#include <stdbool.h>

#include <jansson.h>

#include "ga_findings.h"

typedef struct {
    const char *host;
    int node_index, rank, gpu; /* gpu: CUDA device index, -1 on the host path */
    const char
        *pci_bus_id;   /* the GPU's PCI bus id, its name in findings and metrics; NULL on the host path */
    const char *group; /* model name: a GPU is compared only with GPUs of the same model */
    double value;      /* the measured figure (the best of its measurements); < 0 when not measured */
    double peak;       /* the model's peak for this figure; <= 0 when unknown */
    const double *measurements; /* every measurement of it, in order (NULL: only value) */
    int measured;               /* how many */
} ga_dev_sample;

typedef struct {
    double tolerance;      /* a sample more than this fraction below its group's median may be flagged */
    double min_efficiency; /* a sample below this fraction of its peak is flagged; 0: no such check */
    bool relative_warn;    /* --relative warn: deviations from the group are warnings (the quick profile) */
} ga_dev_policy;

typedef struct {
    double group_median; /* median of the sample's group (the sample's own value when alone) */
    double efficiency;   /* value / peak, or -1 when the peak is unknown or nothing was measured */
    bool below_median;   /* an outlier of its group by the outlier rule */
    bool below_peak;
    bool differs;     /* one of a group of two whose figures differ by more than the tolerance */
    bool screened;    /* below its group's median by more than the tolerance alone: measured again */
    int other;        /* differs: the other sample's index, else -1 */
    double bound;     /* below this it is an outlier of its group; 0 when not judged (alone, or two) */
    double spread;    /* the noise its bound allowed for: scaled MAD of the logarithms of the group */
    bool noisy;       /* the noise was wider than GA_OUTLIER_FAR allows: smaller gaps were not judged */
    bool unconfirmed; /* past its bound by less than its own measurements' noise: not named, warned */
    double own_noise; /* that noise, as a fraction (0 when not computed) */
} ga_dev_verdict;

/* One throughput figure over the cluster as analysis returns it, typed, so that main and the report read it
 * without digging in JSON: the median of the measured samples and the peak they share. */
typedef struct {
    char name[24];   /* "bf16", "device_copy" */
    char metric[40]; /* the per-device metric in the report: "tflops_bf16", "GBps_device_copy" */
    const char *unit;
    double median; /* -1 when nothing was measured */
    double peak;   /* the peak every measured sample shares; -1 when unknown or mixed */
    int measured;  /* samples measured */
    bool on_gpus;  /* false on the host path: the samples are ranks */
} ga_dev_figure;

/* Fills out[i] for every sample and returns the median over all measured samples (-1 if none). Returns -2
 * when memory runs out. */
double ga_dev_flag(const ga_dev_sample *s, int n, const ga_dev_policy *p, ga_dev_verdict *out);

/* Names of what is being flagged, for the findings' messages and codes. */
typedef struct {
    const char *metric;      /* "bf16 GEMM", "device_copy" */
    const char *unit;        /* "TFLOP/s", "GB/s" */
    const char *code_median; /* "GEMM_BELOW_MEDIAN" */
    const char *code_peak;   /* "GEMM_BELOW_PEAK" */
    const char *code_differ; /* "GEMM_PEERS_DIFFER" */
    const char *code_noisy;  /* "GEMM_TOO_NOISY": a warning that the noise left a gap unjudged */
} ga_dev_labels;

/* One finding per flagged sample, naming its node, rank and GPU: FAIL, or WARN for an outlier of its group
 * under relative_warn; one WARN naming both samples of a group of two that differ. Returns the number
 * flagged (below the median or the peak). */
int ga_dev_add_findings(ga_findings *f, const ga_dev_labels *l, const ga_dev_sample *s,
                        const ga_dev_verdict *v, int n, const ga_dev_policy *p);

/* Sample indices in device order: by node, then GPU index (then rank, for the host path). */
void ga_dev_order(const ga_dev_sample *s, int n, int *idx);

/* Whether any sample would make a finding (an outlier, below its peak, or one of two that differ) or is
 * below its group's median by more than the tolerance alone: what is measured again before it is called. */
bool ga_dev_any_suspect(const ga_dev_verdict *v, int n);

/* The "gpus" array of a report's summary, in device order: {host, node_index, rank, gpu, model, <value_key>,
 * efficiency, flagged, bound, differs, measurements}; measured-nothing samples are left out. */
json_t *ga_dev_gpus_json(const ga_dev_sample *s, const ga_dev_verdict *v, int n, const char *value_key);

#endif
