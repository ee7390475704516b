# CHOLMOD's libraries as the imported target lsjit::cholmod.
#
# Included twice over: by lsjit's own build, which links lsjit_runtime to it privately, and
# by the installed lsjitConfig.cmake, because a program that links the static lsjit_runtime
# must link CHOLMOD itself. Debian's SuiteSparse 5 ships no CMake config, so both find the
# libraries by name, LSJIT_CHOLMOD_HINTS (directories) first. Setting LSJIT_CHOLMOD_LIBRARY
# and LSJIT_SUITESPARSECONFIG_LIBRARY in the cache picks other copies.
#
# Leaves lsjit::cholmod undefined when a library is missing; the caller decides whether
# that is an error.
find_library(LSJIT_CHOLMOD_LIBRARY cholmod HINTS ${LSJIT_CHOLMOD_HINTS})
find_library(LSJIT_SUITESPARSECONFIG_LIBRARY suitesparseconfig HINTS ${LSJIT_CHOLMOD_HINTS})
mark_as_advanced(LSJIT_CHOLMOD_LIBRARY LSJIT_SUITESPARSECONFIG_LIBRARY)

if(LSJIT_CHOLMOD_LIBRARY AND LSJIT_SUITESPARSECONFIG_LIBRARY AND NOT TARGET lsjit::cholmod)
  add_library(lsjit::cholmod INTERFACE IMPORTED)
  set_target_properties(lsjit::cholmod PROPERTIES
      INTERFACE_LINK_LIBRARIES "${LSJIT_CHOLMOD_LIBRARY};${LSJIT_SUITESPARSECONFIG_LIBRARY}")
endif()
