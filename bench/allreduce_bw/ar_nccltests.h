/* nccl-tests' output, so that allreduce_bw drops into scripts written for nccl-tests 2.19: the stdout table
 * (preamble, device lines, header, one line per size, footer) byte for byte, and the -J JSON (version 3 of
 * its util.cu: config, devices, results with per-iteration rows). Only the layout is nccl-tests'; the figures
 * come from ar_analysis.c. Pure: no MPI, no CUDA. */
#ifndef AR_NCCLTESTS_H
#define AR_NCCLTESTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ar_analysis.h"

#define AR_NT_VERSION "2.19.6" /* the nccl-tests release whose output this reproduces */
#define AR_NT_JSON_VERSION 3

/* The run's settings as nccl-tests prints them. */
typedef struct {
    const char *program;            /* basename of argv[0] */
    int nccl_headers, nccl_library; /* NCCL_VERSION_CODE and ncclGetVersion; 0 on the host path */
    uint64_t min_bytes, max_bytes, step_bytes, step_factor;
    int warmup, iters, agg_iters, check, blocking, per_iter_skip;
    int graph, unalign; /* -G launches and -u elements as applied (0 where the backend ignores -G) */
    bool per_iter, parallel_init, cputime, timestamps, show_slowest;
} ar_nt_config;

/* One rank's "#  Rank" line: fixed size, gathered as bytes. */
typedef struct {
    int32_t rank, group, pid, device; /* device -1 on the host path */
    uint32_t pci_domain, pci_bus, pci_device;
    char host[64];
    char name[96];
} ar_nt_device;

/* Splits "0000:17:00.0" into domain, bus and device; 0, or -1 when it does not parse. */
int ar_nt_parse_pci(const char *bus_id, uint32_t *domain, uint32_t *bus, uint32_t *device);

/* The lines before the table: version, settings, blocking/per-iteration/parallel-init notes, devices. */
void ar_nt_preamble(FILE *out, const ar_nt_config *c, const ar_nt_device *devs, int n);
void ar_nt_device_line(char *buf, size_t len, const ar_nt_device *d);
/* The three header lines (with -I: the per-iteration layout), after a "#" line. */
void ar_nt_header(FILE *out, const ar_nt_config *c);

/* The -I summary of one placement: nccl-tests' statistics of the iterations after skip. */
typedef struct {
    int skipped, n;         /* n: iterations in times */
    const double *times;    /* per iteration, seconds: the max over processes */
    const double *per_proc; /* nprocs x n, seconds, or NULL */
    int nprocs;
    double min, max, avg, p50, p95, p99, stdev, cv_pct; /* seconds, cv in percent */
} ar_nt_iter;

/* Computes the statistics of times[skip..n). */
void ar_nt_iter_stats(ar_nt_iter *it);

/* One table line. it: both placements' -I summaries or NULL; timestamp: NULL without -S; slowest: the
 * out-of-place slowest rank and host, printed with --show-slowest. Returns the length written. */
int ar_nt_line(char *buf, size_t len, const ar_nt_config *c, const char *type, const char *op, int root,
               const ar_line *l, const ar_nt_iter *it, const char *timestamp, int slowest_rank,
               const char *slowest_host);

/* The footer: out-of-bounds count, average busbw (checked against min_bw x 0.9 when min_bw >= 0, as
 * NCCL_TESTS_MIN_BW), -M's GPU memory line when mem_used is not NULL (bytes at init, of the buffers, during
 * the collectives: the largest of any rank), the concluding lines. */
void ar_nt_footer(FILE *out, const ar_nt_config *c, int out_of_bounds, double avg_busbw, double min_bw,
                  const int64_t *mem_used);
/* nccl-tests' way of writing an amount of memory: "512 B", "1.50 KB", "12.5 MB", "128 GB" (1024-based). */
void ar_nt_mem_string(int64_t bytes, char *buf, size_t len);

/* nccl-tests' number formats: a value in width characters, fewer decimals as it grows. */
void ar_nt_float(double v, int width, char *buf);
/* "YYYY-MM-DD HH:MM:SS", local time. */
void ar_nt_now(char *buf, size_t len);

/* ---- -J ---- */

/* The top of the document: version, start time, arguments, the NCCL/CUDA environment (secrets redacted),
 * config (its "devices" empty until set from ar_nt_json_devices). envp may be NULL. */
json_t *ar_nt_json_new(const ar_nt_config *c, int argc, char **argv, char **envp);
/* config.devices: one object per "#  Rank" line (rank, group, pid, hostname, device, device_hex,
 * device_info). */
json_t *ar_nt_json_devices(const ar_nt_device *devs, int n);
/* Appends one result (both placements) to the document. */
void ar_nt_json_result(json_t *doc, const ar_nt_config *c, const char *type, const char *op, int root,
                       const ar_line *l, const ar_nt_iter *it);
/* Closes the document: out_of_bounds, average_bus_bandwidth, errors, end_time. */
void ar_nt_json_finish(json_t *doc, int out_of_bounds, double avg_busbw, double min_bw);
/* Creates the file at the start of the run as nccl-tests does, never over an existing one (path.0, path.1,
 * ... instead). Returns 0 and the name taken in used, or -1 with a message. */
int ar_nt_json_reserve(const char *path, char *used, size_t usedlen, char *err, size_t errlen);
/* Writes the document into the file reserved. 0, or -1 with a message. */
int ar_nt_json_write(const json_t *doc, const char *used, char *err, size_t errlen);

#endif
