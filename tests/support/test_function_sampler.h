// Inputs for a test function (support/test_functions.h) drawn from its range, shared by the
// kernel tests that compare tiers and backends on every test graph.
#pragma once

#include <cstddef>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "kernel_check.h"
#include "test_functions.h"

namespace lsjit::testing {

// Inputs uniform in [t.lo, t.hi], or with probability `special` one of the values where
// implementations differ if they differ anywhere. With `special` 0 no draw is spent on it.
inline InstanceSampler sampler_for(const TestFunction& t, double special = 0) {
  return [&t, special](std::mt19937_64& rng) {
    static const double kSpecial[] = {0.0, -0.0, std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN(), 1e308, -1e-310,
                                      1.0, -1.0};
    std::uniform_real_distribution<double> u(t.lo, t.hi), p(0, 1);
    std::uniform_int_distribution<size_t> pick(0, std::size(kSpecial) - 1);
    lsjit::ir::InputValues in;
    in.vars = {std::vector<double>(t.inputs)};
    for (double& v : in.vars[0]) v = special > 0 && p(rng) < special ? kSpecial[pick(rng)] : u(rng);
    in.data = {{0.7, -1.3}};
    return in;
  };
}

}  // namespace lsjit::testing
