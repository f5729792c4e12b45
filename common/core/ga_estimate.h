/* The contract between `gpuaccept run`'s dry-run estimate and each program's model of its own run time: the
 * cluster an estimate is for, the figures every model takes as given, and the one function signature a
 * program's model has (`<program>_estimate`, named by the registry, suite/registry/programs.json, and called
 * through the table generated from it). Here so that the front-end sees no program's header and a program
 * sees no front-end header; the helpers every model shares (the launch, small collectives, the gather of
 * records, the alpha-beta time of an allreduce, the arguments as words) are ga_estimate.c. Pure: no MPI, no
 * clock, no file. */
#ifndef GA_ESTIMATE_H
#define GA_ESTIMATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* One slow node: its links this many times slower (issue 24's case: a node shaped 50-100x below its peers).
 */
#define GA_EST_SLOW_FACTOR 60.0

/* The cluster an estimate is for. */
typedef struct {
    int nodes, ranks_per_node; /* >= 1 each */
    bool gpu;                  /* the GPU paths (the SKU is known), else the host paths */
    char sku[128];             /* the baseline's model ("" on the host paths) */
    double step_limit_s;       /* the suite's kill of a step */
    double program_timeout_s;  /* each program's --timeout (cmd_run: a little below the limit) */
    /* the SKU's figures from its baseline, 0 when it gives none (the model's own then) */
    double node_busbw_GBps;  /* allreduce_bw busbw_at_max: one node's GPUs over NVLink */
    double gemm_bf16_TFLOPs; /* gemm_flops tflops_bf16 */
    double mem_copy_GBps;    /* mem_bw GBps_device_copy */
} ga_est_cluster;

/* What the models take as given, per backend (the front-end's est_figures_for states the sources). Times in
 * seconds, bandwidths in GB/s (1e9 B/s). */
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
    double dev_check_GBps, dev_check_s;     /* GPU: the device check's memory traffic rate, its fixed cost */
    double mpi_alpha;                       /* one step of a small MPI collective (log2(ranks) steps) */
    double mpi_GBps;                        /* rank 0's intake of a gather */
    double report_s;                        /* analysis, report write, MPI_Finalize */
    double slow_factor;                     /* GA_EST_SLOW_FACTOR, or 1 (the fault-free case) */
    /* the programs' own */
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
} ga_est_figures;

enum { GA_EST_CUT_LEN = 512, GA_EST_MODEL_LEN = 640, GA_EST_NOTE_LEN = 512 };

/* One case of one step: the fault-free one, or with one slow node (slow; f->slow_factor is then
 * GA_EST_SLOW_FACTOR). args: the program's words (a JSON array of strings, the profile's and --args'). */
typedef struct {
    const ga_est_figures *f;
    const ga_est_cluster *c;
    const json_t *args;
    bool slow;
} ga_estimate_in;

/* A model's answer for one case; the front-end adds the launch and keeps the fault-free case's lines. */
typedef struct {
    double run_s;                 /* the program's run as its plan runs, the launch excluded */
    double whole_s;               /* the same with no time limit (0: run_s, the plan cuts nothing) */
    char cut[GA_EST_CUT_LEN];     /* what the plan cuts to fit its --timeout ("" nothing) */
    char model[GA_EST_MODEL_LEN]; /* the model in one line (the fault-free case's is printed), or why not */
    char note[GA_EST_NOTE_LEN];   /* a further line ("" none) */
} ga_estimate_out;

/* A program's model: `int <program>_estimate(const ga_estimate_in *, ga_estimate_out *)`, declared in its own
 * file as `ga_estimate_fn <program>_estimate;`. 0, or -1 with why in out->model (arguments the program would
 * refuse). */
typedef int ga_estimate_fn(const ga_estimate_in *in, ga_estimate_out *out);

/* The launch of one step on nodes nodes. */
double ga_est_launch_s(const ga_est_figures *f, int nodes);
/* A small MPI collective over ranks ranks. */
double ga_est_mpi_small_s(const ga_est_figures *f, int ranks);
/* Rank 0 gathers bytes_each from each of ranks ranks. */
double ga_est_gather_s(const ga_est_figures *f, int ranks, double bytes_each);
/* One collective that moves bytes (a rank's buffer) and puts carried_GB on the bus (nccl-tests' busbw at a
 * time of 1 s), on ranks ranks over nodes nodes (1: within a node); slow: through the slow node's links. The
 * alpha-beta model: alpha(nodes) + carried / busbw. */
double ga_est_bus_s(const ga_est_figures *f, size_t bytes, double carried_GB, int ranks, int nodes,
                    bool slow);
/* An allreduce of size_bytes in elements of elem_size bytes (rounded down to whole ones, as nccl-tests
 * counts them). */
double ga_est_allreduce_s(const ga_est_figures *f, size_t size_bytes, size_t elem_size, int ranks, int nodes,
                          bool slow);

/* A run that takes the same time whatever its arguments: the launch aside, work_s, the gather and the
 * report; its model line (fault-free case). Returns 0. */
int ga_est_fixed(const ga_estimate_in *in, double work_s, ga_estimate_out *out);

/* The arguments as the models read them: the last value given to --long_name or -short_key (also
 * --long_name=V; short_key 0: none), NULL when none; a flag's presence; a number or size (K/M/G) with dflt
 * when absent or unreadable. */
const char *ga_est_arg_value(const json_t *args, const char *long_name, char short_key);
bool ga_est_arg_flag(const json_t *args, const char *word);
double ga_est_arg_num(const json_t *args, const char *long_name, char short_key, double dflt);
double ga_est_arg_size(const json_t *args, const char *long_name, char short_key, double dflt);

/* The argv of a program's args (json strings), argv[0] = program; free with ga_est_argv_free. NULL when out
 * of memory. */
char **ga_est_argv(const char *program, const json_t *args, int *argc);
void ga_est_argv_free(char **argv, int argc);

#endif
