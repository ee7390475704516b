// Every built-in cost compiled in every mode, against the reference interpreter.
#include <doctest/doctest.h>

#include <random>

#include "../support/builtin_inputs.h"
#include "../support/kernel_check.h"
#include "lsjit/runtime/builtin_costs.h"

TEST_CASE("JIT matches the interpreter on every built-in cost, mode and instance count") {
  std::mt19937_64 rng(77);
  for (const lsjit::BuiltinCost& c : lsjit::builtin_costs()) {
    CAPTURE(c.name);
    const lsjit::ir::Trace traced = c.trace();
    const lsjit::testing::InstanceSampler sample = [&traced](std::mt19937_64& r) {
      return lsjit::testing::inputs_for(traced, r);
    };
    for (auto mode : lsjit::compiler::kAllModes)
      for (int64_t count : {0, 1, 7, 8, 9, 1000})
        lsjit::testing::check_kernel(traced, mode, count, sample, rng);
  }
}

TEST_CASE("tier 0 computes the compiled kernel's bits on every built-in cost and mode") {
  std::mt19937_64 rng(78);
  for (const lsjit::BuiltinCost& c : lsjit::builtin_costs()) {
    CAPTURE(c.name);
    const lsjit::ir::Trace traced = c.trace();
    const lsjit::testing::InstanceSampler sample = [&traced](std::mt19937_64& r) {
      return lsjit::testing::inputs_for(traced, r);
    };
    for (auto mode : lsjit::compiler::kAllModes)
      for (int64_t count : {0, 1, 7, 8, 9, 1000})
        lsjit::testing::check_tier0(traced, mode, count, sample, rng);
  }
}
