/* The GPU path: forward and backward with cuBLAS GEMMs and the kernels of ddp_gpu_kernels.cu on a compute
 * stream; each gradient bucket is allreduced with NCCL on a communication stream as soon as the backward pass
 * has produced it (an event orders the two), so communication overlaps the rest of the backward pass. */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <nccl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddp_gpu_kernels.h"
#include "ddp_trainer.h"
#include "ga_exit.h"
#include "ga_fatal.h"
#include "ga_cuda.h"
#include "ga_nccl.h"
#include "ga_time.h"

typedef struct {
    ddp_trainer base; /* first: the interface pointer is the object */
    ddp_trainer_config cfg;
    cudaStream_t compute, comm;
    cudaEvent_t bucket_ready[DDP_MAX_LINEAR], backward_done, comm_done;
    cublasHandle_t blas;
    ncclComm_t nccl;
    float *params, *grad, *velocity, *delta, *delta2, *row_loss, *row_hit;
    float *act[DDP_MAX_LINEAR + 1];
    int32_t *labels;
    float *pinned_x, *pinned_stats;
    int32_t *pinned_labels;
    float *host_params;
} gpu_trainer;

/* Row-major C (M x N) = op(A) op(B), through cuBLAS's column-major view (C^T = op(B)^T op(A)^T). */
static void gemm_rm(gpu_trainer *g, bool ta, bool tb, int M, int N, int K, const float *A, int lda,
                    const float *B, int ldb, float *C, int ldc)
{
    const float one = 1.0f, zero = 0.0f;
    GA_CUBLAS_CHECK(cublasSgemm(g->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M,
                                K, &one, B, ldb, A, lda, &zero, C, ldc));
}

static void launch_bucket(gpu_trainer *g, int k)
{
    const ddp_bucket *b = &g->base.plan.b[k];
    GA_CUDA_CHECK(cudaEventRecord(g->bucket_ready[k], g->compute));
    GA_CUDA_CHECK(cudaStreamWaitEvent(g->comm, g->bucket_ready[k], 0));
    ga_nccl_bound(g->nccl, g->cfg.comm_timeout_s, "ncclAllReduce of a gradient bucket");
    ncclResult_t r = ncclAllReduce(g->grad + b->offset, g->grad + b->offset, b->count, ncclFloat, ncclSum,
                                   g->nccl, g->comm);
    ga_nccl_unbound();
    ga_nccl_enqueued(g->nccl, r, g->cfg.comm_timeout_s, "ncclAllReduce of a gradient bucket");
}

static void gpu_step(ddp_trainer *t, const float *x, const int32_t *labels, ddp_step_result *out)
{
    gpu_trainer *g = (gpu_trainer *)t;
    const ddp_layout *m = g->cfg.layout;
    const int B = g->cfg.local_batch, L = m->n_linear;
    const float scale = 1.0f / (float)g->cfg.global_batch;

    memcpy(g->pinned_x, x, (size_t)B * (size_t)m->dims[0] * sizeof *x);
    memcpy(g->pinned_labels, labels, (size_t)B * sizeof *labels);
    GA_CUDA_CHECK(cudaMemcpyAsync(g->act[0], g->pinned_x, (size_t)B * (size_t)m->dims[0] * sizeof(float),
                                  cudaMemcpyHostToDevice, g->compute));
    GA_CUDA_CHECK(cudaMemcpyAsync(g->labels, g->pinned_labels, (size_t)B * sizeof(int32_t),
                                  cudaMemcpyHostToDevice, g->compute));

    for (int i = 0; i < L; i++) {
        int in = m->dims[i], o = m->dims[i + 1];
        gemm_rm(g, false, true, B, o, in, g->act[i], in, g->params + m->w_off[i], in, g->act[i + 1], o);
        GA_CUDA_CHECK(ddp_k_bias_act(g->act[i + 1], g->params + m->b_off[i], B, o, i + 1 < L, g->compute));
    }
    GA_CUDA_CHECK(ddp_k_softmax_xent(g->act[L], g->labels, B, m->dims[L], scale, g->delta, g->row_loss,
                                     g->row_hit, g->compute));
    GA_CUDA_CHECK(ddp_k_sum_stats(g->row_loss, g->row_hit, B, scale, g->grad + m->n_params, g->compute));

    float *d = g->delta, *d_prev = g->delta2;
    for (int i = L - 1; i >= 0; i--) {
        int in = m->dims[i], o = m->dims[i + 1];
        gemm_rm(g, true, false, o, in, B, d, o, g->act[i], in, g->grad + m->w_off[i], in);
        GA_CUDA_CHECK(ddp_k_bias_grad(d, B, o, g->grad + m->b_off[i], g->compute));
        int k = ddp_bucket_completed_by(&t->plan, i);
        if (k >= 0)
            launch_bucket(g, k);
        if (i == 0)
            break;
        gemm_rm(g, false, false, B, in, o, d, o, g->params + m->w_off[i], in, d_prev, in);
        GA_CUDA_CHECK(ddp_k_relu_backward(d_prev, g->act[i], (size_t)B * (size_t)in, g->compute));
        float *tmp = d;
        d = d_prev;
        d_prev = tmp;
    }
    GA_CUDA_CHECK(cudaEventRecord(g->backward_done, g->compute));
    GA_CUDA_CHECK(cudaEventRecord(g->comm_done, g->comm));
    GA_CUDA_CHECK(cudaStreamWaitEvent(g->compute, g->comm_done, 0));
    GA_CUDA_CHECK(ddp_k_sgd(g->params, g->velocity, g->grad, m->n_params, (float)g->cfg.sgd.lr,
                            (float)g->cfg.sgd.momentum, g->compute));
    GA_CUDA_CHECK(cudaMemcpyAsync(g->pinned_stats, g->grad + m->n_params, DDP_N_STATS * sizeof(float),
                                  cudaMemcpyDeviceToHost, g->compute));
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "training step (gradient allreduce)");

    /* Blocked on communication: from the end of the backward pass to the end of the last allreduce. */
    float ms = 0.0f;
    GA_CUDA_CHECK(cudaEventElapsedTime(&ms, g->backward_done, g->comm_done));
    out->comm_wait_s = ms > 0.0f ? ms / 1000.0 : 0.0;
    out->compute_s = -1; /* the wall clock, step less wait, is the GPU path's figure */
    out->loss = g->pinned_stats[DDP_STAT_LOSS];
    out->accuracy = g->pinned_stats[DDP_STAT_CORRECT];
}

static const void *gpu_params(ddp_trainer *t)
{
    gpu_trainer *g = (gpu_trainer *)t;
    GA_CUDA_CHECK(cudaMemcpy(g->host_params, g->params, g->cfg.layout->n_params * sizeof(float),
                             cudaMemcpyDeviceToHost));
    return g->host_params;
}

static void gpu_perturb(ddp_trainer *t)
{
    gpu_trainer *g = (gpu_trainer *)t;
    float p0 = 0.0f;
    GA_CUDA_CHECK(cudaMemcpy(&p0, g->params, sizeof p0, cudaMemcpyDeviceToHost));
    p0 = nextafterf(p0, INFINITY);
    /* On the compute stream, which reads the parameters: a pageable cudaMemcpy may return before its DMA
     * lands, and a cudaStreamNonBlocking stream does not wait for the legacy stream. */
    GA_CUDA_CHECK(cudaMemcpyAsync(g->params, &p0, sizeof p0, cudaMemcpyHostToDevice, g->compute));
    ga_nccl_wait(g->nccl, g->compute, g->cfg.comm_timeout_s, "parameter perturbation");
}

static void gpu_destroy(ddp_trainer *t)
{
    gpu_trainer *g = (gpu_trainer *)t;
    ga_nccl_comm_destroy(g->nccl, g->cfg.comm_timeout_s);
    cublasDestroy(g->blas);
    for (int k = 0; k < DDP_MAX_LINEAR; k++)
        cudaEventDestroy(g->bucket_ready[k]);
    cudaEventDestroy(g->backward_done);
    cudaEventDestroy(g->comm_done);
    float *dev[] = {g->params, g->grad, g->velocity, g->delta, g->delta2, g->row_loss, g->row_hit};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++)
        cudaFree(dev[k]);
    for (int i = 0; i <= g->cfg.layout->n_linear; i++)
        cudaFree(g->act[i]);
    cudaFree(g->labels);
    cudaFreeHost(g->pinned_x);
    cudaFreeHost(g->pinned_labels);
    cudaFreeHost(g->pinned_stats);
    cudaStreamDestroy(g->compute);
    cudaStreamDestroy(g->comm);
    free(g->host_params);
    free(g);
}

ddp_trainer *ddp_gpu_trainer_create(const ddp_trainer_config *cfg, MPI_Comm comm)
{
    gpu_trainer *g = calloc(1, sizeof *g);
    if (!g)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory");
    const ddp_layout *m = cfg->layout;
    const size_t B = (size_t)cfg->local_batch, wide = B * (size_t)m->max_dim;
    g->cfg = *cfg;
    GA_CUDA_CHECK(cudaStreamCreateWithFlags(&g->compute, cudaStreamNonBlocking));
    GA_CUDA_CHECK(cudaStreamCreateWithFlags(&g->comm, cudaStreamNonBlocking));
    for (int k = 0; k < DDP_MAX_LINEAR; k++)
        GA_CUDA_CHECK(cudaEventCreateWithFlags(&g->bucket_ready[k], cudaEventDisableTiming));
    GA_CUDA_CHECK(cudaEventCreate(&g->backward_done));
    GA_CUDA_CHECK(cudaEventCreate(&g->comm_done));
    GA_CUBLAS_CHECK(cublasCreate(&g->blas));
    GA_CUBLAS_CHECK(cublasSetStream(g->blas, g->compute));

    GA_CUDA_CHECK(cudaMalloc((void **)&g->params, m->n_params * sizeof(float)));
    GA_CUDA_CHECK(cudaMalloc((void **)&g->grad, m->n_grad * sizeof(float)));
    GA_CUDA_CHECK(cudaMalloc((void **)&g->velocity, m->n_params * sizeof(float)));
    GA_CUDA_CHECK(cudaMemsetAsync(g->velocity, 0, m->n_params * sizeof(float), g->compute));
    GA_CUDA_CHECK(cudaMalloc((void **)&g->delta, wide * sizeof(float)));
    GA_CUDA_CHECK(cudaMalloc((void **)&g->delta2, wide * sizeof(float)));
    GA_CUDA_CHECK(cudaMalloc((void **)&g->row_loss, B * sizeof(float)));
    GA_CUDA_CHECK(cudaMalloc((void **)&g->row_hit, B * sizeof(float)));
    for (int i = 0; i <= m->n_linear; i++)
        GA_CUDA_CHECK(cudaMalloc((void **)&g->act[i], B * (size_t)m->dims[i] * sizeof(float)));
    GA_CUDA_CHECK(cudaMalloc((void **)&g->labels, B * sizeof(int32_t)));
    GA_CUDA_CHECK(cudaMallocHost((void **)&g->pinned_x, B * (size_t)m->dims[0] * sizeof(float)));
    GA_CUDA_CHECK(cudaMallocHost((void **)&g->pinned_labels, B * sizeof(int32_t)));
    GA_CUDA_CHECK(cudaMallocHost((void **)&g->pinned_stats, DDP_N_STATS * sizeof(float)));
    g->host_params = malloc(m->n_params * sizeof(float));
    double *init = malloc(m->n_params * sizeof *init);
    if (!g->host_params || !init)
        GA_FATAL(GA_EXIT_INTERNAL, "out of memory for a model of %zu parameters", m->n_params);
    ddp_params_init(m, cfg->seed, init);
    for (size_t k = 0; k < m->n_params; k++)
        g->host_params[k] = (float)init[k];
    free(init);
    /* On the compute stream: a non-blocking stream does not wait for the legacy default stream. */
    GA_CUDA_CHECK(cudaMemcpyAsync(g->params, g->host_params, m->n_params * sizeof(float),
                                  cudaMemcpyHostToDevice, g->compute));

    g->nccl = ga_nccl_comm_init(comm, cfg->comm_timeout_s, "ddp_smoke gradients");
    ga_nccl_bound(g->nccl, cfg->comm_timeout_s, "ncclBroadcast of the initial parameters");
    ncclResult_t r = ncclBroadcast(g->params, g->params, m->n_params, ncclFloat, 0, g->nccl, g->compute);
    ga_nccl_unbound();
    ga_nccl_enqueued(g->nccl, r, cfg->comm_timeout_s, "ncclBroadcast of the initial parameters");
    ga_nccl_wait(g->nccl, g->compute, cfg->comm_timeout_s, "broadcast of the initial parameters");

    g->base.backend = "gpu";
    g->base.dtype = "fp32";
    g->base.elem_size = sizeof(float);
    ddp_bucket_plan_build(m, sizeof(float), cfg->bucket_cap_bytes, &g->base.plan);
    g->base.step = gpu_step;
    g->base.params = gpu_params;
    g->base.perturb = gpu_perturb;
    g->base.destroy = gpu_destroy;
    return &g->base;
}
