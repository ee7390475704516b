# The libraries of the supernodal sparse Cholesky as the imported target lsjit::sparse_deps:
# SuiteSparse's AMD and CAMD (and their libsuitesparseconfig) and METIS. OpenBLAS is found here too
# (LSJIT_OPENBLAS_LIBRARY) but not linked: supernodal_kernels.cpp loads it on first use
# (dlopen of LSJIT_OPENBLAS_PATH, the library's soname beside it), because loading it costs
# a short process several milliseconds that most small solves never need it for.
#
# Included twice over: by lsjit's own build, which links lsjit_runtime to it privately, and
# by the installed lsjitConfig.cmake, because a program that links the static lsjit_runtime
# must link them itself. Debian ships no CMake config for them, so both find the libraries
# by name, LSJIT_SPARSE_DEPS_HINTS (directories) first. OpenBLAS is looked for in Debian's
# pthread build directory only (NO_DEFAULT_PATH): the generic libopenblas/libblas names may
# be another BLAS through Debian's alternatives. Setting LSJIT_AMD_LIBRARY,
# LSJIT_SUITESPARSECONFIG_LIBRARY, LSJIT_METIS_LIBRARY or LSJIT_OPENBLAS_LIBRARY in the
# cache picks other copies.
#
# Leaves lsjit::sparse_deps undefined when a library is missing; the caller decides what
# to say.
find_library(LSJIT_AMD_LIBRARY amd HINTS ${LSJIT_SPARSE_DEPS_HINTS})
# CAMD (BSD, beside AMD in libsuitesparse-dev): the constrained ordering of the incremental
# factor (incremental_factor.h), which puts the newest variables last.
find_library(LSJIT_CAMD_LIBRARY camd HINTS ${LSJIT_SPARSE_DEPS_HINTS})
find_library(LSJIT_SUITESPARSECONFIG_LIBRARY suitesparseconfig HINTS ${LSJIT_SPARSE_DEPS_HINTS})
find_library(LSJIT_METIS_LIBRARY metis HINTS ${LSJIT_SPARSE_DEPS_HINTS})
find_library(LSJIT_OPENBLAS_LIBRARY openblas
             HINTS ${LSJIT_SPARSE_DEPS_HINTS} /usr/lib/x86_64-linux-gnu/openblas-pthread
                   /usr/lib/aarch64-linux-gnu/openblas-pthread
             NO_DEFAULT_PATH)
if(NOT LSJIT_OPENBLAS_LIBRARY)
  message(STATUS "OpenBLAS not found in Debian's openblas-pthread directory; looking for "
                 "libopenblas in the default paths")
  find_library(LSJIT_OPENBLAS_LIBRARY openblas)
endif()
mark_as_advanced(LSJIT_AMD_LIBRARY LSJIT_CAMD_LIBRARY LSJIT_SUITESPARSECONFIG_LIBRARY LSJIT_METIS_LIBRARY
                 LSJIT_OPENBLAS_LIBRARY)

if(LSJIT_AMD_LIBRARY AND LSJIT_CAMD_LIBRARY AND LSJIT_SUITESPARSECONFIG_LIBRARY AND LSJIT_METIS_LIBRARY AND
   LSJIT_OPENBLAS_LIBRARY AND NOT TARGET lsjit::sparse_deps)
  add_library(lsjit::sparse_deps INTERFACE IMPORTED)
  set_target_properties(lsjit::sparse_deps PROPERTIES INTERFACE_LINK_LIBRARIES
      "${LSJIT_AMD_LIBRARY};${LSJIT_CAMD_LIBRARY};${LSJIT_SUITESPARSECONFIG_LIBRARY};${LSJIT_METIS_LIBRARY}")
endif()
