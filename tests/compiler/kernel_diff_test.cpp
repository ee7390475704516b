// JIT kernels against the reference interpreter on every test graph, in every mode, for
// instance counts around the vector width and large, with shuffled, repeated indices.
#include <doctest/doctest.h>

#include <random>

#include "../support/kernel_check.h"
#include "../support/test_function_sampler.h"
#include "../support/test_functions.h"

using namespace lsjit::testing;
using lsjit::compiler::KernelMode;

TEST_CASE("JIT matches the interpreter on every test graph, mode and instance count") {
  std::mt19937_64 rng(2024);
  size_t compared = 0;
  const auto functions = test_functions();
  for (const TestFunction& t : functions) {
    CAPTURE(t.name);
    const lsjit::ir::Trace traced = trace_function(t);
    for (KernelMode mode : lsjit::compiler::kAllModes)
      for (int64_t count : {0, 1, 7, 8, 9, 1000})
        compared += check_kernel(traced, mode, count, sampler_for(t), rng);
  }
  CHECK(compared > 100000);
}

TEST_CASE("every vector width gives the interpreter's results") {
  std::mt19937_64 rng(7);
  const auto functions = test_functions();
  for (const TestFunction& t : functions) {
    CAPTURE(t.name);
    const lsjit::ir::Trace traced = trace_function(t);
    for (uint32_t width : {1u, 2u, 4u})
      for (bool vector_math : {true, false}) {
        lsjit::compiler::CompileOptions options;
        options.vector_width = width;
        options.vector_math = vector_math;
        check_kernel(traced, KernelMode::ResidualJacobian, 37, sampler_for(t), rng, options);
      }
  }
}
