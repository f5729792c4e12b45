/* Checks for CUDA, cuBLAS and NCCL calls in the GPU paths (GPU builds only). A failing call is fatal: the
 * host, rank, call and library message are printed and the job taken down; no rank is left waiting. */
#ifndef GA_CUDA_H
#define GA_CUDA_H

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "ga_exit.h"
#include "ga_fatal.h"

#define GA_CUDA_CHECK(call)                                                                                  \
    do {                                                                                                     \
        cudaError_t ga_e_ = (call);                                                                          \
        if (ga_e_ != cudaSuccess)                                                                            \
            GA_FATAL(GA_EXIT_ENV, "%s: %s", #call, cudaGetErrorString(ga_e_));                               \
    } while (0)

#define GA_CUBLAS_CHECK(call)                                                                                \
    do {                                                                                                     \
        cublasStatus_t ga_s_ = (call);                                                                       \
        if (ga_s_ != CUBLAS_STATUS_SUCCESS)                                                                  \
            GA_FATAL(GA_EXIT_ENV, "%s: %s", #call, cublasGetStatusString(ga_s_));                            \
    } while (0)

#endif
