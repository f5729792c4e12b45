/* allreduce_bw's command line: nccl-tests' flags where they exist, and the sweep's defaults. */
#ifndef AR_OPTS_H
#define AR_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ar_coll.h"
#include "ar_setup.h"
#include "ga_cli.h"
#include "ga_backend.h"
#include "ga_transport.h"

/* --pattern: the world sweep, one sweep per node at once, pairs of members over rounds, and rails (GPU i of
 * pairs of nodes, ar_rails.h). */
typedef enum {
    AR_PATTERN_WORLD,
    AR_PATTERN_NODE,
    AR_PATTERN_PAIRS,
    AR_PATTERN_RAILS,
    AR_PATTERNS
} ar_pattern_id;
const char *ar_pattern_name(ar_pattern_id p);
#define AR_ROUNDS_ALL (-1)

/* nccl-tests flags that gpuaccept accepts and, where set to anything but their default and meaningless on
 * the backend that runs (the device API everywhere; streams, graphs, registration, CTA policy and GPU memory
 * on the host path), ignores with one warning line each (ar_ignored_warning). */
#define AR_N_IGNORED_MAX 7
typedef struct {
    int key;
    const char *what; /* why it has no effect here */
} ar_ignored_flag;
extern const ar_ignored_flag ar_ignored_flags[AR_N_IGNORED_MAX];

typedef struct {
    uint64_t min_bytes, max_bytes, step_bytes, step_factor;
    bool set_min, set_max, set_step, set_factor, set_iters, set_warmup;
    int iters, warmup, check;
    unsigned type_mask, op_mask; /* bit per ar_dtype / ar_op */
    bool all_types, all_ops;     /* -d all, -o all: what a backend cannot run is left out */
    ar_coll_id coll;
    bool set_coll; /* --collective given (else the program's name may choose: all_gather_perf) */
    int root;
    int average;      /* ar_time_mode */
    double timeout_s; /* -T/--wait-timeout: each wait (the whole run is the common --timeout) */
    ga_backend backend;
    double min_busbw;
    bool pairs;     /* pairs among the patterns: what the world-only flags are refused for */
    int n_patterns; /* --pattern LIST, run in its order */
    ar_pattern_id patterns[AR_PATTERNS]; /* no pattern twice */
    int rounds;                          /* 0: default, AR_ROUNDS_ALL: every pair once */
    double tolerance;                    /* --tolerance, as a fraction */
    int remeasure;                       /* --remeasure: times a figure below its bound is measured again */
    double min_node_busbw;               /* --min-node-busbw GB/s, 0 none */
    ga_expect_net expect_net;            /* --expect-net: what must carry traffic between nodes */
    bool allow_sockets;                  /* --allow-sockets: sockets between nodes are intended */
    char ib_hcas[1024];                  /* --ib-hcas: the compute ports (NCCL_IB_HCA's syntax), "" none */
    /* nccl-tests' flags (docs/allreduce_bw.md, "nccl-tests compatibility") */
    int agg_iters;            /* -m: operations per timed iteration (1) */
    int cycles;               /* -N: sweeps printed, 0 forever (1) */
    int blocking;             /* -z 0-3 (0) */
    bool per_iter;            /* -I 1: per-iteration times */
    int per_iter_skip;        /* -K */
    bool cputime, timestamps; /* -C 1, -S 1: the time column's label, a timestamp column */
    bool parallel_init;       /* -p: accepted; one GPU per rank leaves nothing to initialise in parallel */
    char json_path[1024];     /* -J FILE: nccl-tests' JSON, "" none */
    bool show_slowest;        /* --show-slowest: the slowest-rank columns after nccl-tests' 13 */
    ar_backend_setup setup;   /* -u -G -R -x -y -M (ar_setup.h) */
    unsigned ignored;         /* bit per flag of ar_ignored_flags given a value gpuaccept cannot honour */
    char ignored_value[AR_N_IGNORED_MAX][16];
} ar_opts;

#define AR_N_OPTIONS 43
extern const ga_option ar_options[AR_N_OPTIONS];

void ar_opts_defaults(ar_opts *o);
/* What the figures depend on (gpuaccept compare): backend, collective, the first combination's type and op,
 * the sweep, the iterations and the patterns. */
json_t *ar_conditions_json(const ar_opts *o, const char *backend, const char *dtype, const char *op);
int ar_on_option(void *opts, int key, const char *arg, char *err, size_t errlen);
/* The warning line of ignored flag i (ar_opts.ignored bit i). */
void ar_ignored_warning(const ar_opts *o, int i, char *buf, size_t len);
/* Applies the defaults that depend on the backend and --quick, decides which flags are ignored on it, and
 * builds the sizes. Returns how many, or -1 with a message. */
int ar_opts_finish(ar_opts *o, bool gpu, bool quick, uint64_t *sizes, char *err, size_t errlen);

#endif
