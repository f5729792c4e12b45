# Warnings for every gpuaccept target; CI configures with -DGPUACCEPT_WERROR=ON.
function(ga_target_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wstrict-prototypes
                                                     -Wno-format-truncation -Wno-missing-field-initializers>)
  # (fixed-size record fields truncate long strings by design: snprintf does it safely; an option table row
  # written positionally leaves its typed fields zero, "untyped", by design: ga_cli.h)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  if(GPUACCEPT_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Werror>
                                             $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
endfunction()

# One program of the suite: its sources, the runtime (and through it the core), installed to bin/.
function(ga_add_program name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE gpuaccept_runtime)
  ga_target_warnings(${name})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

# A program that is no MPI program (the `gpuaccept` front-end): the core alone, checked by ga_check_layers.
function(ga_add_core_program name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE gpuaccept_core)
  ga_target_warnings(${name})
  ga_core_only(${name})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

# add_subdirectory() for every direct subfolder that has a CMakeLists.txt, in name order: a new program or test
# area is a new folder, with no shared list to edit.
function(ga_add_subdirectories)
  file(GLOB _dirs LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT _dirs)
  foreach(_d IN LISTS _dirs)
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${_d}/CMakeLists.txt)
      add_subdirectory(${_d})
    endif()
  endforeach()
endfunction()
