// Rosenbrock's function as a least-squares cost (Moré, Garbow & Hillstrom's problem 1),
// r = (10 (x₁ − x₀²), 1 − x₀), minimum 0 at (1, 1); standard start (−1.2, 1). A curved
// valley: the tests that need a solve with rejected and accepted steps of every ratio use it.
#pragma once

#include <array>

#include "lsjit/lsjit.h"

namespace lsjit::testing {

inline auto rosenbrock_cost(const char* name) {
  return lsjit::cost(name, [](const auto& v, lsjit::VecVar<2> x) {
    const auto p = v[x];
    return std::array<lsjit::Sym, 2>{10.0 * (p(1) - p(0) * p(0)), 1.0 - p(0)};
  });
}

}  // namespace lsjit::testing
