/* lm_train's preparation and phases on every rank (lm_setup.h). */
#include "lm_setup.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ga_deadline.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_gpu.h"
#include "ga_log.h"
#include "ga_time.h"
#include "ga_train_budget.h"

/* One collective decision on a local failure: -1 when no rank failed; 2 on every rank when rank 0 failed
 * (the file or sizes are wrong: rank 0 prints the one line); else 3 on the ranks that failed (the data is not
 * visible there) and 0 on the others, so that the agreed exit names them. */
static int agree_on_failure(const ga_ctx *ctx, bool failed, const char *err)
{
    int mine = failed, any = 0, rank0 = failed;
    GA_MPI_CHECK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (!any)
        return -1;
    GA_MPI_CHECK(MPI_Bcast(&rank0, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank0) {
        ga_error_once("lm_train", "%s", err);
        return GA_EXIT_USAGE;
    }
    if (!failed)
        return GA_EXIT_PASS;
    fprintf(stderr, "lm_train: %s rank %d: %s\n", ctx->host, ctx->world_rank, err);
    fflush(stderr);
    return GA_EXIT_ENV;
}

int lm_data_prepare(const ga_ctx *ctx, const lm_opts *o, const lm_config *cfg, lm_dataset *ds)
{
    memset(ds, 0, sizeof *ds);
    char err[GA_PATH_MAX + 256] = "";
    bool failed;
    if (o->data[0]) {
        failed = lm_shard_load(o->data, cfg->vocab, cfg->seq_len, &ds->shard, err, sizeof err) != 0;
        ds->have_shard = !failed;
        ds->src.shard = &ds->shard;
        snprintf(ds->what, sizeof ds->what, "shard %s (%zu tokens)", o->data, ds->shard.n_tokens);
    } else {
        int active = cfg->vocab < LM_MARKOV_ACTIVE_MAX ? cfg->vocab : LM_MARKOV_ACTIVE_MAX;
        failed =
            lm_markov_init_active(&ds->markov, cfg->vocab, active, (uint64_t)o->seed, err, sizeof err) != 0;
        ds->have_markov = !failed;
        ds->src.markov = &ds->markov;
        ds->loss_floor = ds->markov.entropy;
        snprintf(ds->what, sizeof ds->what,
                 "synthetic order-1 Markov stream over %d of %d tokens (seed %lld, entropy %.4f nats/token)",
                 active, cfg->vocab, (long long)o->seed, ds->markov.entropy);
    }
    int rc = agree_on_failure(ctx, failed, err);
    if (rc >= 0)
        lm_data_free(ds);
    return rc;
}

void lm_data_free(lm_dataset *ds)
{
    if (ds->have_markov)
        lm_markov_free(&ds->markov);
    if (ds->have_shard)
        lm_shard_free(&ds->shard);
    ds->have_markov = ds->have_shard = false;
}

/* Ranks of a node share its cores: unless told otherwise, each rank's OpenBLAS gets its share. */
static int host_blas_threads(const ga_ctx *ctx)
{
    if (getenv("OPENBLAS_NUM_THREADS") || getenv("OMP_NUM_THREADS"))
        return openblas_get_num_threads();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int share = (int)(cores / (ctx->local_size > 0 ? ctx->local_size : 1));
    openblas_set_num_threads(share > 0 ? share : 1);
    return share > 0 ? share : 1;
}

lm_trainer *lm_make_trainer(const ga_ctx *ctx, const lm_trainer_config *cfg, ga_backend backend,
                            MPI_Comm comm, char *err, size_t errlen)
{
#if GA_HAVE_CUDA && LM_HAVE_GPU_TRAINER
    if (backend == GA_BACKEND_GPU)
        return lm_gpu_trainer_create(cfg, comm, err, errlen);
#endif
    if (backend == GA_BACKEND_GPU) {
        /* every rank alike: the backend was resolved for the whole job */
        snprintf(err, errlen, "this lm_train was built without the GPU trainer: use --backend host");
        return NULL;
    }
    static bool said;
    if (!said) {
        int threads = host_blas_threads(ctx);
        ga_log("TRAIN", "host path: fp32, OpenBLAS with %d thread%s per rank, MPI_Iallreduce per block",
               threads, threads == 1 ? "" : "s");
        said = true;
    }
    return lm_host_trainer_create(cfg, comm, err, errlen);
}

double lm_phase_end(double share)
{
    return ga_train_phase_end(share); /* the budget ddp_smoke plans by too */
}

/* This rank's group in the scaling phase: its node's ranks, or --scaling-ranks consecutive world ranks. The
 * communicator is new (free it). */
static MPI_Comm scaling_group(const ga_ctx *ctx, const lm_opts *o, int *index, int *groups)
{
    MPI_Comm comm;
    if (o->scaling_ranks > 0) {
        *index = ctx->world_rank / o->scaling_ranks;
        *groups = (ctx->world_size + o->scaling_ranks - 1) / o->scaling_ranks;
    } else {
        *index = ctx->node_index;
        *groups = ctx->node_count;
    }
    GA_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, *index, ctx->world_rank, &comm));
    return comm;
}

bool lm_scaling_phase(const ga_ctx *ctx, const lm_opts *o, const lm_trainer_config *tc, const lm_source *src,
                      ga_backend backend, lm_record *mine, char *why, size_t why_len)
{
    int index, groups, size;
    MPI_Comm comm = scaling_group(ctx, o, &index, &groups);
    GA_MPI_CHECK(MPI_Comm_size(comm, &size));
    if (groups < 2) {
        snprintf(why, why_len, "scaling efficiency: the job is one %s; nothing to compare it with",
                 o->scaling_ranks > 0 ? "group of --scaling-ranks" : "node");
        MPI_Comm_free(&comm);
        return false;
    }
    ga_phase("scaling phase: each group trains alone");
    ga_log("TRAIN", "scaling phase: %d groups of %d rank%s train alone first", groups, size,
           size == 1 ? "" : "s");
    char err[1024] = "";
    lm_trainer *t = lm_make_trainer(ctx, tc, backend, comm, err, sizeof err);
    if (!t)
        GA_FATAL(GA_EXIT_INTERNAL, "the scaling group's trainer: %s", err);
    /* a third of the time left: the whole job's training, which the verdict needs most, gets the rest */
    lm_loop_config lc = {.steps = o->steps,
                         .micro_batch = tc->micro_batch,
                         .grad_accum = tc->grad_accum,
                         .seq_len = tc->cfg.seq_len,
                         .first_sequence = 1ull << 40,
                         .warmup = o->steps >= 10 ? 2 : 0,
                         .phase_end = lm_phase_end(1.0 / 3.0),
                         .comm = comm,
                         .quiet = true,
                         .what = "scaling group"};
    lm_loop_result res;
    if (lm_loop_run(t, src, &lc, &res, err, sizeof err) != 0)
        GA_FATAL(GA_EXIT_INTERNAL, "the scaling group's training: %s", err);
    mine->group_size = size;
    mine->group_index = index;
    mine->group_steps = res.steps_done;
    double tokens = (double)res.timed_steps * tc->micro_batch * tc->grad_accum * tc->cfg.seq_len;
    mine->group_tokens_per_s = res.train_s > 0 ? tokens / res.train_s : 0;
    lm_loop_result_free(&res);
    t->destroy(t);
    MPI_Comm_free(&comm);
    GA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* the job's phase starts together */
    return true;
}
