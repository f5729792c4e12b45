# lm_train's GPU trainer (CUDA trees only): the kernels (lm_gpu_*.cu, each formula from lm_math.h), the
# cuBLASLt GEMMs, the GPU model and its passes, and lm_gpu_trainer_create (lm_trainer.h). A library of its
# own, so that the program links it when GA_HAVE_CUDA and the GPU double's test driver links it alone.
# Included after lm_train_core.cmake (the program's CMakeLists.txt, or ctest/lm_train/ while there is none).
if(NOT GA_HAVE_CUDA)
  return()
endif()

add_library(lm_train_gpu STATIC
            ${CMAKE_CURRENT_LIST_DIR}/lm_gpu_kernels.cu ${CMAKE_CURRENT_LIST_DIR}/lm_gpu_attn.cu
            ${CMAKE_CURRENT_LIST_DIR}/lm_gpu_optim.cu ${CMAKE_CURRENT_LIST_DIR}/lm_gpu_blas.c
            ${CMAKE_CURRENT_LIST_DIR}/lm_gpu_model.c ${CMAKE_CURRENT_LIST_DIR}/lm_gpu_pass.c
            ${CMAKE_CURRENT_LIST_DIR}/lm_gpu_trainer.c)
target_include_directories(lm_train_gpu PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(lm_train_gpu PUBLIC lm_train_core gpuaccept_runtime MPI::MPI_C CUDA::cudart CUDA::cublas CUDA::cublasLt
                                          NCCL::NCCL)
ga_target_warnings(lm_train_gpu)
