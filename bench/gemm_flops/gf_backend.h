/* The two ways gemm_flops measures: cuBLASLt on the rank's GPU, OpenBLAS on its cores. Each fills the rank's
 * record: one result per dtype asked for, and the burn intervals when --duration is given. */
#ifndef GF_BACKEND_H
#define GF_BACKEND_H

#include "gf_record.h"

/* Sizes, dtypes and burn dtype the backend uses when the command line leaves them open. */
void gf_host_defaults(gf_opts *o, bool quick);
void gf_gpu_defaults(gf_opts *o, bool quick);

/* Measures every dtype of o->dtypes; 0, or -1 with a message when the backend itself cannot start. */
/* The host path's return when its matrices cannot be allocated (err says so): the job then ends with exit 5
 * on every rank (docs/exit-codes.md), not a GEMM measured as failed. */
#define GF_OUT_OF_MEMORY (-2)

int gf_host_measure(const gf_opts *o, gf_record *r, char *err, size_t errlen);
int gf_host_burn(const gf_opts *o, gf_record *r, char *err, size_t errlen);
#if GA_HAVE_CUDA
int gf_gpu_measure(const gf_opts *o, gf_record *r, char *err, size_t errlen);
int gf_gpu_burn(const gf_opts *o, gf_record *r, char *err, size_t errlen);
#endif

/* A measurement of a dtype into the result that keeps them all: the first is copied; a later one is appended
 * and replaces the figures (iters, time, TFLOP/s) when it is faster. A wrong result in any measurement stays
 * wrong, and a GEMM that fails in any measurement has failed. */
void gf_result_add(gf_result *dst, const gf_result *src);

/* --algos: the index of the candidate to keep among n timed ones (seconds per GEMM, <= 0: it failed): the
 * fastest, unless it beats the first (cuBLASLt's own choice, what other callers get) by less than margin, a
 * fraction (noise). -1 when none ran. */
int gf_fastest_candidate(const double *seconds, int n, double margin);

/* Tolerance of the sampled-element check per dtype, relative to sqrt(sum (a_i b_i)^2). */
double gf_check_tolerance(int dtype);

/* Burn intervals for a duration: interval_s when given, else about a tenth of the duration (1 s to 60 s),
 * never more than GF_MAX_INTERVALS. */
int gf_burn_intervals(double duration_s, double interval_s, double *actual_interval_s);

/* Sampled (row, column) positions of the correctness check: corners and hashed interior points. */
#define GF_CHECK_SAMPLES 8
void gf_check_positions(int64_t m, int64_t n, uint64_t seed, int64_t *rows, int64_t *cols);

#endif
