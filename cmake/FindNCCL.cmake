# Finds NCCL. Search order: NCCL_ROOT / NCCL_HOME (CMake or environment), then the CUDA toolkit's folders,
# then the system. Defines NCCL_FOUND, NCCL_VERSION, NCCL_INCLUDE_DIR, NCCL_LIBRARY and target NCCL::NCCL.
set(_nccl_hints)
foreach(_v NCCL_ROOT NCCL_HOME)
  if(DEFINED ${_v})
    list(APPEND _nccl_hints "${${_v}}")
  endif()
  if(DEFINED ENV{${_v}})
    list(APPEND _nccl_hints "$ENV{${_v}}")
  endif()
endforeach()
set(_nccl_cuda_dirs)
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _nccl_cuda_dirs "${CUDAToolkit_LIBRARY_ROOT}")
endif()
if(CUDAToolkit_TARGET_DIR)
  list(APPEND _nccl_cuda_dirs "${CUDAToolkit_TARGET_DIR}")
endif()

# Hints first and alone, so an explicit NCCL_ROOT wins over a system copy.
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_library(NCCL_LIBRARY nccl HINTS ${_nccl_hints} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_cuda_dirs} PATH_SUFFIXES include targets/x86_64-linux/include
          targets/sbsa-linux/include)
find_library(NCCL_LIBRARY nccl HINTS ${_nccl_cuda_dirs} PATH_SUFFIXES lib lib64 targets/x86_64-linux/lib
             targets/sbsa-linux/lib)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  string(REGEX REPLACE ".*NCCL_MAJOR +([0-9]+).*" "\\1" _maj "${_nccl_ver}")
  string(REGEX REPLACE ".*NCCL_MINOR +([0-9]+).*" "\\1" _min "${_nccl_ver}")
  string(REGEX REPLACE ".*NCCL_PATCH +([0-9]+).*" "\\1" _pat "${_nccl_ver}")
  set(NCCL_VERSION "${_maj}.${_min}.${_pat}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR VERSION_VAR NCCL_VERSION)
if(NCCL_FOUND AND NOT TARGET NCCL::NCCL)
  add_library(NCCL::NCCL UNKNOWN IMPORTED)
  set_target_properties(NCCL::NCCL PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                                              INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
