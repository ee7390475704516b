# The package test: installs lsjit's build tree into a fresh prefix, checks the installed
# headers, then configures, builds and runs tests/package/consumer against that prefix
# only, and runs the installed CLI. Any failure is a FATAL_ERROR (the test fails).
#
#   cmake -DLSJIT_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=...
#         -DMAKE_PROGRAM=... -DCXX=... -DLAUNCHER=... -DBUILD_TYPE=... -DLIBDIR=...
#         -P install_and_build.cmake
#
# WORK_DIR is emptied first: files left by an earlier run (a header no longer installed, a
# cached lsjit_DIR) would hide what this install lacks.
cmake_minimum_required(VERSION 3.25)

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${status}): ${command}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${LSJIT_BUILD_DIR} --prefix ${prefix})

# Each installed header may include only standard headers, Eigen and installed lsjit
# headers; anything else (LLVM, CHOLMOD, a build-tree path) would break users' builds,
# even of headers that lsjit.h does not include and so the consumer does not compile.
set(include_root ${prefix}/include/lsjit)
file(GLOB_RECURSE installed RELATIVE ${include_root} ${include_root}/*)
if(NOT "lsjit.h" IN_LIST installed)
  message(FATAL_ERROR "${include_root}/lsjit.h was not installed")
endif()
foreach(file IN LISTS installed)
  if(NOT file MATCHES "\\.h$")
    message(FATAL_ERROR "installed ${include_root}/${file}, which is not a header")
  endif()
  file(STRINGS ${include_root}/${file} includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS includes)
    if(line MATCHES "[<\"]lsjit/([^>\"]+)[>\"]")
      if(NOT EXISTS ${include_root}/${CMAKE_MATCH_1})
        message(FATAL_ERROR "${file} includes lsjit/${CMAKE_MATCH_1}, which is not installed")
      endif()
    elseif(file STREQUAL "interop/ceres.h" AND line MATCHES "<ceres/[a-z_]+\\.h>")
      # the Ceres adapter includes Ceres' own headers, and only it
    elseif(NOT line MATCHES "<(Eigen/[A-Za-z]+|[a-z_]+)>")
      message(FATAL_ERROR "${file}: '${line}' names neither a standard header, Eigen nor lsjit")
    endif()
  endforeach()
endforeach()

# The consumer sees the prefix and nothing else of lsjit (no package registry).
set(configure ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${consumer_build} -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
if(MAKE_PROGRAM)
  list(APPEND configure -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(LAUNCHER)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
# find_package(lsjit) must be quiet (issue 19, item 18): no "Could NOT find" lines from
# dependencies a program does not need (LLVM's LibEdit, zstd, CURL, ... when the config
# still looked for LLVM).
execute_process(COMMAND ${configure} COMMAND_ECHO STDOUT RESULT_VARIABLE status
                OUTPUT_VARIABLE configure_out ERROR_VARIABLE configure_out)
message("${configure_out}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "failed (${status}): configuring the consumer")
endif()
if(configure_out MATCHES "Could NOT find|CMake Warning")
  message(FATAL_ERROR "find_package(lsjit) is not quiet: the consumer's configure printed\n${configure_out}")
endif()
file(STRINGS ${consumer_build}/CMakeCache.txt lsjit_dir REGEX "^lsjit_DIR:")
if(NOT lsjit_dir STREQUAL "lsjit_DIR:PATH=${prefix}/${LIBDIR}/cmake/lsjit")
  message(FATAL_ERROR "the consumer found lsjit elsewhere than the prefix: ${lsjit_dir}")
endif()
run(${CMAKE_COMMAND} --build ${consumer_build})
# With an empty kernel cache the consumer compiles, through the installed LLVM module.
if(NOT EXISTS ${prefix}/${LIBDIR}/lsjit/liblsjit_llvm.so)
  message(FATAL_ERROR "the LLVM compiler module was not installed in ${prefix}/${LIBDIR}/lsjit")
endif()
run(${CMAKE_COMMAND} -E env LSJIT_CACHE_DIR=${WORK_DIR}/kernel-cache ${consumer_build}/fit_circle)
# Where lsjit was built with Ceres, the adapter is installed and a consumer links it
# (issue 19, item 6: docs/porting_from_ceres.md step 2).
if(EXPECT_CERES)
  if(NOT EXISTS ${prefix}/include/lsjit/interop/ceres.h OR NOT EXISTS ${consumer_build}/ceres_adapter)
    message(FATAL_ERROR "lsjit was built with Ceres, but the installed package gave no lsjit::ceres "
                        "(interop/ceres.h installed: ${prefix}/include/lsjit/interop/ceres.h)")
  endif()
  run(${CMAKE_COMMAND} -E env LSJIT_CACHE_DIR=${WORK_DIR}/kernel-cache ${consumer_build}/ceres_adapter)
endif()

# The installed CLI runs from the prefix (libLLVM, OpenBLAS and, in builds with
# LSJIT_WITH_CHOLMOD, CHOLMOD found at run time).
run(${prefix}/bin/lsjit generate pose-graph --dim 2 --poses 30 --loop-closures 5
    --out ${WORK_DIR}/graph.g2o)
run(${prefix}/bin/lsjit solve ${WORK_DIR}/graph.g2o)

# Where the Python package was built: the installed one imports from the prefix's site
# directory alone and compiles through the installed LLVM module (python/src/module.cpp
# finds it relative to itself), not the build tree's.
if(PYTHON)
  set(site ${prefix}/${PYTHON_INSTALL_DIR})
  if(NOT EXISTS ${site}/lsjit/__init__.py)
    message(FATAL_ERROR "the Python package was not installed in ${site}/lsjit")
  endif()
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${site} LSJIT_CACHE_DIR=${WORK_DIR}/python-kernel-cache
      ${PYTHON} ${CMAKE_CURRENT_LIST_DIR}/installed_python.py ${site} ${prefix}/${LIBDIR}/lsjit/liblsjit_llvm.so)
endif()
