# The layering rule, checked when the build is configured: the core (common/core/, gpuaccept_core), every
# analysis library (a target named *_core) and every target marked with ga_core_only() link neither the
# runtime nor MPI, CUDA, NCCL or hwloc, however indirectly. A link line that breaks the rule stops the
# configuration with the chain that brought the dependency in.

# Marks a target as one that must link the core alone.
function(ga_core_only target)
  set_property(TARGET ${target} PROPERTY GA_CORE_ONLY ON)
endfunction()

# What a core-only target may never reach: the runtime library, and the imported targets or library files
# of MPI, CUDA (toolkit libraries included), NCCL and hwloc.
set(GA_FORBIDDEN_LINK_REGEX "^(gpuaccept_runtime|MPI::.*|CUDA::.*|NCCL::.*|PkgConfig::HWLOC)$|(^|/)lib(mpi|cuda|cudart|cublas|cublasLt|nccl|hwloc)[._]")

# Follows the link dependencies of target depth first; stops the configuration at a forbidden one.
function(_ga_walk_links root target chain)
  get_target_property(_aliased ${target} ALIASED_TARGET)
  if(_aliased)
    set(target ${_aliased})
  endif()
  get_property(_seen GLOBAL PROPERTY _GA_LAYERS_SEEN)
  if("${root}>${target}" IN_LIST _seen)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY _GA_LAYERS_SEEN "${root}>${target}")
  set(_deps "")
  get_target_property(_type ${target} TYPE)
  if(NOT _type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(_direct ${target} LINK_LIBRARIES)
    if(_direct)
      list(APPEND _deps ${_direct})
    endif()
  endif()
  get_target_property(_iface ${target} INTERFACE_LINK_LIBRARIES)
  if(_iface)
    list(APPEND _deps ${_iface})
  endif()
  foreach(_d IN LISTS _deps)
    # Static libraries record their private dependencies as $<LINK_ONLY:...>: they still reach the link.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" _d "${_d}")
    if(_d MATCHES "${GA_FORBIDDEN_LINK_REGEX}")
      message(FATAL_ERROR "gpuaccept: ${root} must link the core alone, but ${chain} -> ${_d} "
                          "(the runtime, MPI, CUDA, NCCL and hwloc belong to gpuaccept_runtime and the programs)")
    endif()
    if(TARGET ${_d})
      _ga_walk_links(${root} ${_d} "${chain} -> ${_d}")
    endif()
  endforeach()
endfunction()

# Every target below dir, recursively.
function(_ga_targets_below dir out)
  get_property(_t DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(_s IN LISTS _subs)
    _ga_targets_below(${_s} _more)
    list(APPEND _t ${_more})
  endforeach()
  set(${out} ${_t} PARENT_SCOPE)
endfunction()

# Called once every target exists (the end of the top-level CMakeLists.txt). Sets GA_CORE_ONLY_TARGETS in
# the caller's scope, for the test that checks the built binaries as well.
function(ga_check_layers)
  _ga_targets_below(${PROJECT_SOURCE_DIR} _all)
  set(_checked "")
  foreach(_t IN LISTS _all)
    get_target_property(_marked ${_t} GA_CORE_ONLY)
    if(_t MATCHES "_core$" OR _marked)
      _ga_walk_links(${_t} ${_t} ${_t})
      list(APPEND _checked ${_t})
    endif()
  endforeach()
  if(NOT "gpuaccept_core" IN_LIST _checked)
    message(FATAL_ERROR "gpuaccept: the layering check found no gpuaccept_core target")
  endif()
  message(STATUS "gpuaccept: core-only targets (no MPI, CUDA, NCCL, hwloc): ${_checked}")
  set(GA_CORE_ONLY_TARGETS ${_checked} PARENT_SCOPE)
endfunction()
