/* The figures the estimates assume and the models behind estimate.h, apart so that the unit tests can give
 * the models figures of their own (simple enough to compute a case by hand). */
#ifndef ESTIMATE_MODEL_H
#define ESTIMATE_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "estimate.h"

/* One slow node: its links this many times slower (issue 24's case: a node shaped 50-100x below its peers).
 */
#define EST_SLOW_FACTOR 60.0

/* What the models take as given, per backend (est_figures_for states the sources). Times in seconds,
 * bandwidths in GB/s (1e9 B/s). */
typedef struct {
    bool gpu;
    double launch_s, launch_per_node_s;     /* mpirun/srun until MPI_Init returns everywhere */
    double busbw_intra, busbw_inter;        /* allreduce busbw within a node, and of a job across nodes */
    double alpha_intra, alpha_inter;        /* latency of one collective: in a node, across two nodes */
    double alpha_per_doubling;              /* added per doubling of the nodes beyond two (a tree) */
    double comm_init_s, comm_init_per_rank; /* a communicator: NCCL's init (GPU); the host path needs none */
    double split_s, split_per_rank;         /* MPI_Comm_split over the world */
    double check_per_byte;                  /* the check's fill and compare on one CPU core, per byte */
    double copy_GBps;                       /* the check's copies (H2D, D2H), a one-rank "collective" */
    double mpi_alpha;                       /* one step of a small MPI collective (log2(ranks) steps) */
    double mpi_GBps;                        /* rank 0's intake of a gather */
    double report_s;                        /* analysis, report write, MPI_Finalize */
    double slow_factor;                     /* EST_SLOW_FACTOR, or 1 (the fault-free case) */
    /* the other programs */
    double nh_s, ea_s;          /* node_health's and env_audit's checks, fixed */
    double gemm_setup_s;        /* per dtype: buffers, inputs, the check */
    double gemm_TFLOPs;         /* GPU: bf16 (baseline), else 0 (then set-up and the time target alone) */
    double host_GFLOPs[2];      /* host, one core: fp32, fp64 */
    double mem_setup_s;         /* mem_bw's buffers and pinning */
    double hbm_GBps, pcie_GBps; /* GPU: device copy, host link per GPU with its neighbours busy */
    double host_mem_GBps;       /* host: a node's memory bandwidth, shared by its ranks */
    double host_llc_bytes;      /* host: last-level cache assumed (mem_bw sizes its arrays from it) */
    double ddp_GFLOPs;          /* ddp_smoke: a rank's training FLOP rate */
    double ddp_step_floor_s;    /* ddp_smoke: a step's least time (kernel launches, Python-free as it is) */
} est_figures;

/* The figures for cluster c (its SKU's where the baseline gives them). */
void est_figures_for(const suite_est_cluster *c, est_figures *f);

/* The launch of one step on nodes nodes. */
double est_launch_s(const est_figures *f, int nodes);
/* A small MPI collective over ranks ranks. */
double est_mpi_small_s(const est_figures *f, int ranks);

/* The time of one allreduce-family operation of size_bytes (nccl-tests' counting) on a communicator of ranks
 * ranks over nodes nodes (1: within a node), slow: it crosses the slow node's links. The alpha-beta model:
 * alpha(nodes) + bus_factor(ranks) * bytes / busbw. */
double est_op_s(const est_figures *f, int coll, int type, size_t size_bytes, int ranks, int nodes, bool slow);

/* allreduce_bw's plan on a virtual clock (estimate_ar.c). */
typedef struct {
    double total_s;                            /* the program's run, launch excluded */
    double screen_s, world_s, node_s, pairs_s; /* its phases */
    int rounds_asked, rounds_run, pairs_tested, pairs_total, members;
    bool by_rank;
    char cut[512];    /* what the plan cut, as the program's not_covered says it ("; " between) */
    int n_sizes;      /* the sweep's sizes */
    double timeout_s; /* the --timeout it ran under (the profile's words may give their own), 0 none */
} est_ar_plan;

/* Models allreduce_bw run with argv (argc words, argv[0] the program) on nodes x ranks_per_node, with
 * timeout_s its --timeout (0: none, the whole plan) and slow: one node slow. rounds_override > 0 replaces
 * --rounds. 0, or -1 with a message (the program would refuse the arguments). */
int est_allreduce_bw(const est_figures *f, int argc, char **argv, int nodes, int ranks_per_node,
                     double timeout_s, bool slow, int rounds_override, est_ar_plan *out, char *err,
                     size_t errlen);

/* The argv of a program's args (json strings), argv[0] = program; free with est_argv_free. NULL when out of
 * memory. */
char **est_argv(const char *program, const json_t *args, int *argc);
void est_argv_free(char **argv, int argc);

#endif
