# Usage: cmake -DCXX=... -DSOURCE=... -DINCLUDE=... -DEIGEN_INCLUDE=... -DWORK_DIR=... -P this
file(MAKE_DIRECTORY ${WORK_DIR})
set(flags -std=c++20 -fsyntax-only -I${INCLUDE} -I${EIGEN_INCLUDE})

execute_process(COMMAND ${CXX} ${flags} -DLSJIT_CONTROL ${SOURCE}
                RESULT_VARIABLE control_rc ERROR_VARIABLE control_err)
if(NOT control_rc EQUAL 0)
  message(FATAL_ERROR "control build (using lsjit::select) failed, so the test proves nothing:\n${control_err}")
endif()

execute_process(COMMAND ${CXX} ${flags} ${SOURCE}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "`if (sym < sym)` compiled, but it must not")
endif()
if(NOT err MATCHES "lsjit::select")
  message(FATAL_ERROR "the compile error does not name lsjit::select:\n${err}")
endif()
message(STATUS "`if (sym < sym)` is rejected and the error names lsjit::select")
