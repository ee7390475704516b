// Every built-in cost compiled in every mode, against the reference interpreter, and tier 0
// against the compiled kernels.
#include <doctest/doctest.h>

#include <functional>
#include <random>

#include "../support/builtin_inputs.h"
#include "../support/kernel_check.h"
#include "lsjit/runtime/builtin_costs.h"

namespace {

using Check = std::function<size_t(const lsjit::ir::Trace&, lsjit::compiler::KernelMode, int64_t,
                                   const lsjit::testing::InstanceSampler&, std::mt19937_64&)>;

// `check` on every built-in cost, mode and instance count 0, 1, 7, 8, 9, 1000.
void for_every_builtin_case(uint64_t seed, const Check& check) {
  std::mt19937_64 rng(seed);
  for (const lsjit::BuiltinCost& c : lsjit::builtin_costs()) {
    CAPTURE(c.name);
    const lsjit::ir::Trace traced = c.trace();
    const lsjit::testing::InstanceSampler sample = [&traced](std::mt19937_64& r) {
      return lsjit::testing::inputs_for(traced, r);
    };
    for (auto mode : lsjit::compiler::kAllModes)
      for (int64_t count : {0, 1, 7, 8, 9, 1000}) check(traced, mode, count, sample, rng);
  }
}

}  // namespace

TEST_CASE("JIT matches the interpreter on every built-in cost, mode and instance count") {
  for_every_builtin_case(77, [](const auto& traced, auto mode, int64_t count, const auto& sample, auto& rng) {
    return lsjit::testing::check_kernel(traced, mode, count, sample, rng);
  });
}

TEST_CASE("tier 0 computes the compiled kernel's bits on every built-in cost and mode") {
  for_every_builtin_case(78, [](const auto& traced, auto mode, int64_t count, const auto& sample, auto& rng) {
    return lsjit::testing::check_tier0(traced, mode, count, sample, rng);
  });
}
