# <lsjit/costs.h> is what a cost translation unit includes: it must compile on its own (a
# cost defined and added to a Problem) and must not pull in the solver's headers, which
# is its reason to exist (costs.h, issue 19 item 19).
# Usage: cmake -DCXX=... -DINCLUDE=... -DEIGEN_INCLUDE=... -DWORK_DIR=... -P this
file(MAKE_DIRECTORY ${WORK_DIR})
set(source ${WORK_DIR}/costs_only.cpp)
file(WRITE ${source} [=[
#include <lsjit/costs.h>
void add_offsets(lsjit::Problem& problem) {
  auto offset = lsjit::cost("offset", [](const auto& v, lsjit::VecVar<2> x, const auto& t) {
    return Eigen::Matrix<lsjit::Sym, 2, 1>(v[x] - t);
  }).named({"x"}, {"target"});
  problem.add(offset, lsjit::HuberLoss(1.0), lsjit::VecVar<2>(0), Eigen::Vector2d(1, 2));
  problem.set_constant(lsjit::VecVar<2>(1));
}
]=])
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -H -I${INCLUDE} -I${EIGEN_INCLUDE} ${source}
                RESULT_VARIABLE rc ERROR_VARIABLE headers)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a cost translation unit with only <lsjit/costs.h> does not compile:\n${headers}")
endif()
foreach(solver_header analyzed_problem.h solver_options.h solve/ io/g2o.h io/bal.h)
  if(headers MATCHES "lsjit/runtime/${solver_header}")
    message(FATAL_ERROR "<lsjit/costs.h> includes runtime/${solver_header}, a header of the solver")
  endif()
endforeach()
message(STATUS "<lsjit/costs.h> compiles a cost translation unit without the solver's headers")
