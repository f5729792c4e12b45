# lm_train's core library: the host model (config, layers, passes, AdamW, data) is core-only, so that the unit
# tests and the finite-difference checks link it without MPI or CUDA, and lm_math.h's element formulas are the
# ones the CUDA kernels will include.
#
# Included, not a CMakeLists.txt, until the program lands: every bench/<p>/ with a CMakeLists.txt is a program
# and must carry its roles (lm_record.h, lm_opts.c, lm_analysis.c, lm_json.c, main.c; lint.file_roles). The
# program's CMakeLists.txt includes this file first and then adds ga_add_program(lm_train main.c ...) linking
# lm_train_core; ctest/lm_train/ includes it itself while no program has.
pkg_check_modules(LM_OPENBLAS REQUIRED IMPORTED_TARGET openblas)

add_library(lm_train_core STATIC
            ${CMAKE_CURRENT_LIST_DIR}/lm_config.c ${CMAKE_CURRENT_LIST_DIR}/lm_data.c
            ${CMAKE_CURRENT_LIST_DIR}/lm_layers.c ${CMAKE_CURRENT_LIST_DIR}/lm_model.c
            ${CMAKE_CURRENT_LIST_DIR}/lm_optim.c ${CMAKE_CURRENT_LIST_DIR}/lm_pass.c)
target_include_directories(lm_train_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(lm_train_core PUBLIC gpuaccept_core PkgConfig::LM_OPENBLAS m)
ga_core_only(lm_train_core)
ga_target_warnings(lm_train_core)
