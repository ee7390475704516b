// Tangent-space Jacobians of every Lie group operation, traced through costs, against
// finite differences: exp, log, compose, inverse, act, matrix and params for SO2, SE2, SO3
// and SE3, at random points, at rotation angles near 0 and near π.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <string>

#include "../support/jacobian_check.h"
#include "../support/random_inputs.h"
#include "lsjit/runtime/cost.h"

using lsjit::Sym;
using lsjit::ir::InputValues;

namespace {


template <class G>
std::vector<double> params_of(const G& g) {
  const auto p = g.params();
  return std::vector<double>(p.data(), p.data() + p.size());
}

// Rotation angles that matter: zero, tiny, moderate, and approaching π from below.
const std::vector<double> kJacobianAngles = {0.0, 1e-9, 1e-5, 2e-3, 0.7, 2.5, std::numbers::pi - 1e-2, std::numbers::pi - 1e-3};

Eigen::Vector3d axis(std::mt19937_64& rng) {
  std::normal_distribution<double> n;
  return Eigen::Vector3d(n(rng), n(rng), n(rng)).normalized();
}

// Checks the Jacobian of a traced cost at each of `inputs`.
void check_all(const lsjit::ir::Trace& traced, const std::vector<InputValues>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    CAPTURE(i);
    lsjit::testing::check_jacobian(traced, inputs[i]);
  }
}

}  // namespace

TEST_CASE("SO2: exp, log, compose, inverse, act, matrix") {
  const auto exp_cost = lsjit::cost("so2_exp", [](const auto& v, lsjit::ScalarVar t) {
    return lsjit::SO2<Sym>::exp(Eigen::Matrix<Sym, 1, 1>(v[t])).params();
  });
  const auto ops = lsjit::cost("so2_ops", [](const auto& v, lsjit::SO2Var a, lsjit::SO2Var b,
                                             const auto& p) {
    const auto ab = v[a] * v[b].inverse();
    Eigen::Matrix<Sym, 8, 1> r;
    r << ab.log(), v[a].act(p), Eigen::Map<const Eigen::Matrix<Sym, 4, 1>>(v[b].matrix().data()),
        v[a].angle();
    return r;
  });
  std::vector<InputValues> exp_in, ops_in;
  for (double t : kJacobianAngles) {
    exp_in.push_back({{{t}}, {}, {}});
    exp_in.push_back({{{-t + 1e-3}}, {}, {}});
    ops_in.push_back({{params_of(lsjit::SO2d::from_angle(t)), params_of(lsjit::SO2d::from_angle(0.3))},
                      {{0.5, -1.5}}, {}});
  }
  check_all(lsjit::trace(exp_cost, lsjit::ScalarVar(0)), exp_in);
  check_all(lsjit::trace(ops, lsjit::SO2Var(0), lsjit::SO2Var(1), Eigen::Vector2d()), ops_in);
}

TEST_CASE("SE2: exp, log, compose, inverse, act, matrix") {
  const auto exp_cost = lsjit::cost("se2_exp", [](const auto& v, lsjit::VecVar<3> xi) {
    return lsjit::SE2<Sym>::exp(v[xi]).params();
  });
  const auto log_cost = lsjit::cost("se2_log", [](const auto& v, lsjit::SE2Var x) { return v[x].log(); });
  const auto ops = lsjit::cost("se2_ops", [](const auto& v, lsjit::SE2Var a, lsjit::SE2Var b,
                                             const auto& p) {
    const auto rel = v[a].inverse() * v[b];
    Eigen::Matrix<Sym, 18, 1> r;
    r << rel.params(), v[a].act(p), Eigen::Map<const Eigen::Matrix<Sym, 9, 1>>(v[b].matrix().data()),
        v[a].local(v[b]);
    return r;
  });
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<InputValues> exp_in, log_in, ops_in;
  for (double t : kJacobianAngles) {
    const Eigen::Vector3d xi(u(rng), u(rng), t);
    exp_in.push_back({{{xi(0), xi(1), xi(2)}}, {}, {}});
    log_in.push_back({{params_of(lsjit::SE2d::exp(xi))}, {}, {}});
    ops_in.push_back({{params_of(lsjit::SE2d::exp(xi)),
                       params_of(lsjit::SE2d::exp(Eigen::Vector3d(u(rng), u(rng), u(rng))))},
                      {{0.5, -1.5}}, {}});
  }
  check_all(lsjit::trace(exp_cost, lsjit::VecVar<3>(0)), exp_in);
  check_all(lsjit::trace(log_cost, lsjit::SE2Var(0)), log_in);
  check_all(lsjit::trace(ops, lsjit::SE2Var(0), lsjit::SE2Var(1), Eigen::Vector2d()), ops_in);
}

TEST_CASE("SO3: exp, log, compose, inverse, act, matrix near 0 and near pi") {
  const auto exp_cost = lsjit::cost("so3_exp", [](const auto& v, lsjit::VecVar<3> w) {
    return lsjit::SO3<Sym>::exp(v[w]).params();
  });
  const auto log_cost = lsjit::cost("so3_log", [](const auto& v, lsjit::SO3Var x) { return v[x].log(); });
  const auto ops = lsjit::cost("so3_ops", [](const auto& v, lsjit::SO3Var a, lsjit::SO3Var b,
                                             const auto& p) {
    const auto rel = v[a] * v[b].inverse();
    Eigen::Matrix<Sym, 16, 1> r;
    r << rel.params(), v[a].act(p), Eigen::Map<const Eigen::Matrix<Sym, 9, 1>>(v[b].matrix().data());
    return r;
  });
  std::mt19937_64 rng(31);
  std::vector<InputValues> exp_in, log_in, ops_in;
  for (double t : kJacobianAngles) {
    const Eigen::Vector3d w = t * axis(rng);
    exp_in.push_back({{{w(0), w(1), w(2)}}, {}, {}});
    log_in.push_back({{params_of(lsjit::SO3d::exp(w))}, {}, {}});
    ops_in.push_back({{params_of(lsjit::SO3d::exp(w)), params_of(lsjit::SO3d::exp(0.9 * axis(rng)))},
                      {{0.5, -1.5, 2.0}}, {}});
  }
  check_all(lsjit::trace(exp_cost, lsjit::VecVar<3>(0)), exp_in);
  check_all(lsjit::trace(log_cost, lsjit::SO3Var(0)), log_in);
  check_all(lsjit::trace(ops, lsjit::SO3Var(0), lsjit::SO3Var(1), Eigen::Vector3d()), ops_in);
}

TEST_CASE("SE3: exp, log, compose, inverse, act, matrix near 0 and near pi") {
  const auto exp_cost = lsjit::cost("se3_exp", [](const auto& v, lsjit::VecVar<6> xi) {
    return lsjit::SE3<Sym>::exp(v[xi]).params();
  });
  const auto log_cost = lsjit::cost("se3_log", [](const auto& v, lsjit::SE3Var x) { return v[x].log(); });
  const auto ops = lsjit::cost("se3_ops", [](const auto& v, lsjit::SE3Var a, lsjit::SE3Var b,
                                             const auto& p) {
    const auto rel = v[a].inverse() * v[b];
    Eigen::Matrix<Sym, 26, 1> r;
    r << rel.params(), v[a].act(p), Eigen::Map<const Eigen::Matrix<Sym, 16, 1>>(v[b].matrix().data());
    return r;
  });
  const auto local_cost = lsjit::cost("se3_local", [](const auto& v, lsjit::SE3Var a, lsjit::SE3Var b) {
    return v[a].local(v[b]);
  });
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<InputValues> exp_in, log_in, ops_in, local_in;
  for (double t : kJacobianAngles) {
    Eigen::Matrix<double, 6, 1> xi;
    xi << u(rng), u(rng), u(rng), t * axis(rng);
    exp_in.push_back({{std::vector<double>(xi.data(), xi.data() + 6)}, {}, {}});
    const auto g = lsjit::SE3d::exp(xi);
    log_in.push_back({{params_of(g)}, {}, {}});
    Eigen::Matrix<double, 6, 1> xi2;
    xi2 << u(rng), u(rng), u(rng), 0.8 * axis(rng);
    const auto h = lsjit::SE3d::exp(xi2);
    ops_in.push_back({{params_of(g), params_of(h)}, {{0.5, -1.5, 2.0}}, {}});
    // b = a * exp(small) so that local(a, b) is near 0, and b at a rotation near π from a
    local_in.push_back({{params_of(g), params_of(g * lsjit::SE3d::exp(xi * 1e-6))}, {}, {}});
    local_in.push_back({{params_of(h), params_of(h * g)}, {}, {}});
  }
  check_all(lsjit::trace(exp_cost, lsjit::VecVar<6>(0)), exp_in);
  check_all(lsjit::trace(log_cost, lsjit::SE3Var(0)), log_in);
  check_all(lsjit::trace(ops, lsjit::SE3Var(0), lsjit::SE3Var(1), Eigen::Vector3d()), ops_in);
  check_all(lsjit::trace(local_cost, lsjit::SE3Var(0), lsjit::SE3Var(1)), local_in);
}
