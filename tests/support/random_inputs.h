// Random, valid inputs for a traced cost's signature: Lie group variables and data are
// exp() of a random tangent (so quaternions are unit and unit complexes are unit),
// vectors and matrices are uniform in [-1, 1] (square matrices get a dominant diagonal, so
// square-root information matrices are well conditioned).
#pragma once

#include <random>
#include <string>
#include <vector>

#include "lsjit/ir/graph.h"
#include "lsjit/ir/interpreter.h"
#include "lsjit/runtime/lie/lie.h"

namespace lsjit::testing {

template <class G>
std::vector<double> random_group(std::mt19937_64& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  typename G::Tangent xi;
  for (int i = 0; i < G::kTangent; ++i) xi(i) = u(rng);
  const auto p = G::exp(xi).params();
  return std::vector<double>(p.data(), p.data() + p.size());
}

inline std::vector<double> random_for_type(const std::string& type, uint32_t rows, uint32_t cols,
                                           std::mt19937_64& rng) {
  if (type == "SO2") return random_group<SO2d>(rng, 3.0);
  if (type == "SE2") return random_group<SE2d>(rng, 3.0);
  if (type == "SO3") return random_group<SO3d>(rng, 1.5);
  if (type == "SE3") return random_group<SE3d>(rng, 1.5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(rows * cols);
  for (double& x : v) x = u(rng);
  if (rows == cols && rows > 1)
    for (uint32_t i = 0; i < rows; ++i) v[i * rows + i] = 2.0 + std::abs(v[i * rows + i]);
  return v;
}

inline ir::InputValues random_inputs(const ir::Signature& sig, std::mt19937_64& rng) {
  ir::InputValues in;
  for (const ir::VarSlot& v : sig.vars) in.vars.push_back(random_for_type(v.type, v.ambient, 1, rng));
  for (const ir::DataSlot& d : sig.data) in.data.push_back(random_for_type(d.type, d.rows, d.cols, rng));
  return in;
}

}  // namespace lsjit::testing
