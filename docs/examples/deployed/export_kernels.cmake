# Steps 1 and 2 of deployed_pose_graph.cpp, as one build step: run the problem once with
# `lsjit solve` in a cache of its own, logging its kernels, then export those kernels.
#   cmake -DLSJIT=<lsjit CLI> -DINPUT=<g2o file> -DNAME=<name> -DOUT=<directory>
#         -DCPU_LEVEL=<host|x86-64|x86-64-v2|x86-64-v3|x86-64-v4> -P export_kernels.cmake
foreach(var LSJIT INPUT NAME OUT CPU_LEVEL)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "export_kernels.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${OUT}/cache)
set(ENV{LSJIT_CACHE_DIR} ${OUT}/cache)
set(ENV{LSJIT_LOG_COMPILES} 1)
execute_process(COMMAND ${LSJIT} solve ${INPUT} --cpu-level ${CPU_LEVEL} OUTPUT_QUIET ERROR_FILE ${OUT}/compile.log
                RESULT_VARIABLE solved)
if(NOT solved EQUAL 0)
  file(READ ${OUT}/compile.log log)
  message(FATAL_ERROR "lsjit solve ${INPUT} failed (${solved}):\n${log}")
endif()
unset(ENV{LSJIT_LOG_COMPILES})
execute_process(COMMAND ${LSJIT} cache export --from-log ${OUT}/compile.log --name ${NAME} --out ${OUT}
                RESULT_VARIABLE exported)
if(NOT exported EQUAL 0)
  message(FATAL_ERROR "lsjit cache export failed (${exported})")
endif()
