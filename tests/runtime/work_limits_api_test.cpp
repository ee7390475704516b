// A user's cost that traces to a graph too large to lower meets the same limits as an IR
// file (ir/work_limits.h, compiler/kernel.h): analyze() throws lsjit::Error naming the
// cost before LLVM or the tier-0 code generator sees it, and a cost within them is
// unaffected.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "lsjit/compiler/kernel.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

// x_{k+1} = sin(x_k)·c, `links` times, a deep chain of the kind that hung the compiler.
template <int Links>
auto chain_cost() {
  return cost("deep_chain_" + std::to_string(Links), [](const auto& v, VecVar<1> x) {
    auto y = v[x](0);
    for (int k = 0; k < Links; ++k) y = sin(y) * 0.999;
    return Eigen::Matrix<decltype(y), 1, 1>(y);
  });
}

}  // namespace

TEST_CASE("work limits: analyze() refuses a cost whose kernels would be too large, naming it, at once") {
  Problem p;
  p.add(chain_cost<100000>(), VecVar<1>(0));
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    (void)p.analyze();
  } catch (const Error& e) {
    message = e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CAPTURE(message);
  CHECK(message.find("cost 'deep_chain_100000': its residual kernel (nodes and outputs) would take") == 0);
  CHECK(message.find("more than lsjit's limit of " + std::to_string(compiler::kMaxKernelOps)) != std::string::npos);
  INFO("refused after " << seconds << " s");  // not timed: a correctness test, not a benchmark

  // Within the limits, the same kind of cost analyzes and solves.
  Problem small;
  small.add(chain_cost<200>(), VecVar<1>(0));
  Values v;
  v.set(VecVar<1>(0), Eigen::Matrix<double, 1, 1>(0.5));
  CHECK(small.analyze().solve(v).summary.usable());
}
