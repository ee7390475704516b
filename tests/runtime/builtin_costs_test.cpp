// Every built-in cost: tangent-space Jacobians against finite differences, residuals
// against direct double implementations of the conventions (docs/architecture.md,
// "Conventions").
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "../support/jacobian_check.h"
#include "../support/builtin_inputs.h"
#include "../support/random_inputs.h"
#include "../support/round_trip.h"
#include "lsjit/runtime/builtin_costs.h"

using lsjit::ir::InputValues;


TEST_CASE("built-in cost Jacobians match finite differences in the tangent space") {
  std::mt19937_64 rng(7);
  REQUIRE(lsjit::builtin_costs().size() >= 8);
  for (const lsjit::BuiltinCost& c : lsjit::builtin_costs()) {
    CAPTURE(c.name);
    const lsjit::ir::Trace traced = c.trace();
    for (int k = 0; k < 5; ++k) lsjit::testing::check_jacobian(traced, lsjit::testing::inputs_for(traced, rng));
  }
}

TEST_CASE("built-in costs print, parse back and evaluate identically at every stage") {
  std::mt19937_64 rng(11);
  for (const lsjit::BuiltinCost& c : lsjit::builtin_costs()) {
    CAPTURE(c.name);
    const lsjit::ir::Trace traced = c.trace();
    const InputValues in = lsjit::testing::inputs_for(traced, rng);
    lsjit::testing::check_round_trip(traced, in);
    lsjit::testing::check_round_trip(lsjit::ir::simplify_residual(traced), in);
    lsjit::testing::check_round_trip(lsjit::ir::differentiate(traced), in);
  }
}

TEST_CASE("snavely_reprojection near a zero rotation uses Ceres' first-order branch consistently") {
  const lsjit::ir::Trace traced = lsjit::find_builtin_cost("snavely_reprojection")->trace();
  InputValues in;
  in.vars = {{1e-9, -2e-9, 1e-9, 0.1, -0.2, -10, 500, 1e-3, 1e-6}, {0.5, -0.3, 0.2}};
  in.data = {{3.0, -4.0}};
  lsjit::testing::check_jacobian(traced, in);
}

TEST_CASE("se2_between follows the g2o convention") {
  const lsjit::ir::Trace traced = lsjit::find_builtin_cost("se2_between")->trace();
  const double xa = 1, ya = 2, tha = 3.0, xb = -0.5, yb = 0.7, thb = -3.0;
  const double dx = 0.3, dy = -0.1, dth = 0.2;
  InputValues in;
  in.vars = {{xa, ya, std::cos(tha), std::sin(tha)}, {xb, yb, std::cos(thb), std::sin(thb)}};
  in.data = {{dx, dy, std::cos(dth), std::sin(dth)}, {2, 0, 0, 0.5, 3, 0, 0.25, 0.1, 4}};
  const auto r = lsjit::ir::evaluate(lsjit::ir::simplify_residual(traced), in).residual;
  // e = [R(θa)ᵀ(t_b − t_a) − d_t ; wrap(θ_b − θ_a − dθ)], r = U·e (U column-major above)
  const double c = std::cos(tha), s = std::sin(tha);
  const double ex = c * (xb - xa) + s * (yb - ya) - dx;
  const double ey = -s * (xb - xa) + c * (yb - ya) - dy;
  double eth = thb - tha - dth;
  while (eth > M_PI) eth -= 2 * M_PI;
  while (eth <= -M_PI) eth += 2 * M_PI;
  Eigen::Matrix3d U;
  U << 2, 0.5, 0.25, 0, 3, 0.1, 0, 0, 4;
  const Eigen::Vector3d expected = U * Eigen::Vector3d(ex, ey, eth);
  for (int i = 0; i < 3; ++i) CHECK(r[i] == doctest::Approx(expected(i)).epsilon(1e-12));
}

TEST_CASE("se3_between follows the g2o convention") {
  const lsjit::ir::Trace traced = lsjit::find_builtin_cost("se3_between")->trace();
  std::mt19937_64 rng(3);
  InputValues in = lsjit::testing::random_inputs(traced.signature, rng);
  const auto r = lsjit::ir::evaluate(lsjit::ir::simplify_residual(traced), in).residual;
  auto quat = [](const std::vector<double>& p) { return Eigen::Quaterniond(p[6], p[3], p[4], p[5]); };
  auto pos = [](const std::vector<double>& p) { return Eigen::Vector3d(p[0], p[1], p[2]); };
  const Eigen::Quaterniond qa = quat(in.vars[0]), qb = quat(in.vars[1]), qz = quat(in.data[0]);
  const Eigen::Quaterniond q_ab = qa.conjugate() * qb;
  const Eigen::Vector3d p_ab = qa.conjugate() * (pos(in.vars[1]) - pos(in.vars[0]));
  Eigen::Matrix<double, 6, 1> e;
  e.head<3>() = p_ab - pos(in.data[0]);
  e.tail<3>() = 2.0 * (qz * q_ab.conjugate()).vec();
  const Eigen::Map<const Eigen::Matrix<double, 6, 6>> U(in.data[1].data());
  const Eigen::Matrix<double, 6, 1> expected = U * e;
  for (int i = 0; i < 6; ++i) CHECK(r[i] == doctest::Approx(expected(i)).epsilon(1e-12));
}

TEST_CASE("snavely_reprojection follows the BAL convention") {
  const lsjit::ir::Trace traced = lsjit::find_builtin_cost("snavely_reprojection")->trace();
  InputValues in;
  in.vars = {{0.1, -0.2, 0.3, 0.5, -0.4, -9, 480, 1e-3, -2e-6}, {0.3, -0.6, 0.9}};
  in.data = {{12.0, -7.0}};
  const auto r = lsjit::ir::evaluate(lsjit::ir::simplify_residual(traced), in).residual;
  const auto& c = in.vars[0];
  const Eigen::Vector3d w(c[0], c[1], c[2]);
  const Eigen::Vector3d X(in.vars[1][0], in.vars[1][1], in.vars[1][2]);
  const Eigen::Vector3d P = Eigen::AngleAxisd(w.norm(), w.normalized()) * X + Eigen::Vector3d(c[3], c[4], c[5]);
  const Eigen::Vector2d p = -P.head<2>() / P.z();
  const double r2 = p.squaredNorm();
  const Eigen::Vector2d pred = c[6] * (1 + c[7] * r2 + c[8] * r2 * r2) * p;
  CHECK(r[0] == doctest::Approx(pred(0) - 12.0).epsilon(1e-12));
  CHECK(r[1] == doctest::Approx(pred(1) + 7.0).epsilon(1e-12));
}

TEST_CASE("unknown built-in cost names are not found") {
  CHECK(lsjit::find_builtin_cost("no_such_cost") == nullptr);
  CHECK(lsjit::find_builtin_cost("se3_between") != nullptr);
}
