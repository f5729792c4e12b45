# Warnings for every gpuaccept target; CI configures with -DGPUACCEPT_WERROR=ON.
function(ga_target_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wstrict-prototypes
                                                     -Wno-format-truncation>)
  # (fixed-size record fields truncate long strings by design: snprintf does it safely)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  if(GPUACCEPT_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Werror>
                                             $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
endfunction()

# One program of the suite: its sources, the common library, installed to bin/.
function(ga_add_program name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE gpuaccept_common)
  ga_target_warnings(${name})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()
