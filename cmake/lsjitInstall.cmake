# `cmake --install` makes a CMake package (README.md, "Using lsjit from another CMake project"):
#   include/lsjit/...               lsjit.h, costs.h and the headers of common/, ir/, compiler/, runtime/
#   lib/liblsjit_*.a                the four static libraries (common, ir, compiler, runtime)
#   bin/lsjit                       the CLI
#   lib/lsjit/liblsjit_llvm.so      the LLVM compiler module, loaded on the first compile
#                                   (compiler/llvm/llvm_backend.h)
#   lib/cmake/lsjit/                lsjitConfig.cmake, its version file, the exported targets
# and, where lsjit was built with Ceres, the Ceres adapter (docs/porting_from_ceres.md):
#   include/lsjit/interop/ceres.h   lib/liblsjit_ceres.a   lib/cmake/lsjit/lsjitCeresTargets.cmake
# Included by the top-level CMakeLists.txt once every installed target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LSJIT_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lsjit)

# Every header of the four libraries: they include only the standard library, Eigen and
# each other (the package test checks this), so each is usable from the install tree. The
# build tree sees the same files as <lsjit/...> through its include/lsjit symlink.
install(FILES ${PROJECT_SOURCE_DIR}/lsjit.h ${PROJECT_SOURCE_DIR}/costs.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lsjit)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/common ${PROJECT_SOURCE_DIR}/ir ${PROJECT_SOURCE_DIR}/compiler ${PROJECT_SOURCE_DIR}/runtime
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lsjit
        FILES_MATCHING PATTERN "*.h")

# Consumers see lsjit::ir, lsjit::compiler, lsjit::runtime, lsjit::lsjit and lsjit::cli.
set_target_properties(lsjit_ir PROPERTIES EXPORT_NAME ir)
set_target_properties(lsjit_compiler PROPERTIES EXPORT_NAME compiler)
set_target_properties(lsjit_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(lsjit_cli PROPERTIES EXPORT_NAME cli
                      # keeps an RPATH to libLLVM, OpenBLAS and CHOLMOD when they are outside the
                      # system's library directories
                      INSTALL_RPATH_USE_LINK_PATH ON)
# The include directory goes on lsjit::common; the other libraries get it by linking it.
set_target_properties(lsjit_common PROPERTIES EXPORT_NAME common)
install(TARGETS lsjit_common EXPORT lsjitTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS lsjit_ir EXPORT lsjitTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS lsjit_compiler lsjit_runtime lsjit lsjit_cli EXPORT lsjitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT lsjitTargets NAMESPACE lsjit:: DESTINATION ${LSJIT_CMAKE_INSTALL_DIR})
# Not exported: programs never link it. The installed lsjit finds it beside itself
# (bin/../lib/lsjit), and a program built with find_package(lsjit) through the source the
# config adds (lsjitConfig.cmake.in).
set_target_properties(lsjit_llvm PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS lsjit_llvm LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/lsjit)

# lsjit::ceres, in an export set of its own: the config includes it only where it finds
# Ceres, so that find_package(lsjit) needs no Ceres unless a program uses the adapter.
if(TARGET lsjit_ceres)
  install(FILES ${PROJECT_SOURCE_DIR}/interop/ceres.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lsjit/interop)
  set_target_properties(lsjit_ceres PROPERTIES EXPORT_NAME ceres)
  install(TARGETS lsjit_ceres EXPORT lsjitCeresTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT lsjitCeresTargets NAMESPACE lsjit:: DESTINATION ${LSJIT_CMAKE_INSTALL_DIR})
endif()

# The config re-finds the static libraries' private dependencies, hinted at the
# directories this build used (lsjitConfig.cmake.in says why).
# lsjit_runtime always links lsjit::sparse_deps (AMD, METIS, OpenBLAS) and, with
# LSJIT_WITH_CHOLMOD, lsjit::cholmod (CMakeLists.txt).
set(LSJIT_SPARSE_DEPS_HINTS)
foreach(library IN ITEMS ${LSJIT_AMD_LIBRARY} ${LSJIT_SUITESPARSECONFIG_LIBRARY}
                         ${LSJIT_METIS_LIBRARY} ${LSJIT_OPENBLAS_LIBRARY})
  get_filename_component(directory ${library} DIRECTORY)
  list(APPEND LSJIT_SPARSE_DEPS_HINTS ${directory})
endforeach()
list(REMOVE_DUPLICATES LSJIT_SPARSE_DEPS_HINTS)
set(LSJIT_CHOLMOD_HINTS)
if(LSJIT_WITH_CHOLMOD)
  foreach(library IN ITEMS ${LSJIT_CHOLMOD_LIBRARY} ${LSJIT_SUITESPARSECONFIG_LIBRARY})
    get_filename_component(directory ${library} DIRECTORY)
    list(APPEND LSJIT_CHOLMOD_HINTS ${directory})
  endforeach()
  list(REMOVE_DUPLICATES LSJIT_CHOLMOD_HINTS)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lsjitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/lsjitConfig.cmake
                              INSTALL_DESTINATION ${LSJIT_CMAKE_INSTALL_DIR})
# Before 1.0 a minor version may change the API, so only the same minor version matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lsjitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lsjitConfig.cmake ${PROJECT_BINARY_DIR}/lsjitConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/lsjitCHOLMOD.cmake
              ${PROJECT_SOURCE_DIR}/cmake/lsjitSparseDeps.cmake
        DESTINATION ${LSJIT_CMAKE_INSTALL_DIR})
