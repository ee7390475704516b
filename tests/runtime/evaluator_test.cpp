// The Evaluator (runtime/evaluate/evaluator.h): kernels over instance ranges in waves, and
// H and g gathered from their outputs. Checked against the instances' own residuals and
// Jacobians (evaluate_instances) on a problem that exercises every kind of gather: many
// waves, a robust loss, a variable in two slots of one instance, constant variables; and
// for bit-identical results on any number of threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

constexpr int kEvaluatorPoses = 4000;

// SE2 poses in a ring with chords, a Cauchy loss on the chords, and a cost that takes one
// pose in both of its slots; pose 0 is held.
struct EvaluatorProblem {
  Problem problem;
  Values values;
};

EvaluatorProblem evaluator_problem() {
  EvaluatorProblem e;
  auto between = cost("evaluator_between", [](const auto& v, SE2Var a, SE2Var b, const auto& z) {
    return (z.inverse() * v[a].inverse() * v[b]).log().eval();
  });
  auto twice = cost("evaluator_twice", [](const auto& v, SE2Var a, SE2Var b) {
    return (v[a].inverse() * v[b]).log().eval();  // called with a == b: J_a and J_b of one pose
  });
  for (int i = 0; i < kEvaluatorPoses; ++i) {
    const int j = (i + 1) % kEvaluatorPoses, k = (i * 7 + 3) % kEvaluatorPoses;
    e.problem.add(between, SE2Var(i), SE2Var(j), SE2d::from_xy_theta(1.0, 0.0, 0.01 * i));
    if (k != i) e.problem.add(between, CauchyLoss(0.5), SE2Var(i), SE2Var(k), SE2d::from_xy_theta(0.3, -0.2, 1.0));
    e.values.set(SE2Var(i), SE2d::from_xy_theta(std::cos(0.003 * i), std::sin(0.001 * i), 0.02 * i));
  }
  for (int i = 0; i < 50; ++i) e.problem.add(twice, SE2Var(i), SE2Var(i));
  e.problem.set_constant(SE2Var(0));
  return e;
}

}  // namespace

TEST_CASE("evaluator: H, g and the cost are the sums of the instances' own terms") {
  EvaluatorProblem e = evaluator_problem();
  const AnalyzedProblem a = e.problem.analyze();
  std::map<int64_t, size_t> offset_of;
  for (const auto& f : a.free_variables()) offset_of[f.id] = f.offset;
  const size_t n = a.tangent_dim();
  std::vector<double> g(n);
  double cost = 0;
  const linear::BlockSparseSymmetric H = a.gauss_newton_matrix(e.values, g.data(), &cost);

  // The reference: robustified as Ceres does, ρ' Jᵀr and ρ' JᵀJ (the first-order
  // correction of lsjit's default loss handling), per instance.
  Eigen::VectorXd g_ref = Eigen::VectorXd::Zero(n);
  double cost_ref = 0;
  std::map<std::pair<size_t, size_t>, Eigen::Matrix3d> blocks;
  for (const InstanceEvaluation& ie : a.evaluate_instances(e.values, a.all_instances())) {
    cost_ref += ie.cost;
    for (const JacobianBlock& bs : ie.blocks) {
      if (bs.constant) continue;
      const size_t rs = offset_of.at(bs.id);
      g_ref.segment<3>(rs) += ie.weight * bs.jacobian.transpose() * ie.residuals;
      for (const JacobianBlock& bt : ie.blocks) {
        if (bt.constant) continue;
        const size_t cs = offset_of.at(bt.id);
        auto [it, fresh] = blocks.try_emplace({rs, cs}, Eigen::Matrix3d::Zero());
        it->second += ie.weight * bs.jacobian.transpose() * bt.jacobian;
      }
    }
  }
  CHECK(cost == doctest::Approx(cost_ref).epsilon(1e-13));
  Eigen::Map<const Eigen::VectorXd> g_map(g.data(), static_cast<Eigen::Index>(n));
  CHECK((g_map - g_ref).norm() <= 1e-10 * (1 + g_ref.norm()));
  // Every block of the reference against H's dense form, on the upper triangle it stores.
  const Eigen::MatrixXd dense = H.to_dense();
  double worst = 0;
  for (const auto& [at, block] : blocks) {
    if (at.first > at.second) continue;
    worst = std::max(worst, (dense.block<3, 3>(at.first, at.second) - block).norm() / (1 + block.norm()));
  }
  CHECK(worst <= 1e-10);
}

TEST_CASE("evaluator: the same bits on one thread and on several") {
  EvaluatorProblem e = evaluator_problem();
  const AnalyzedProblem a = e.problem.analyze();
  const size_t n = a.tangent_dim();
  std::vector<double> g1(n), g2(n);
  double c1 = 0, c2 = 0;
  const linear::BlockSparseSymmetric H1 = a.gauss_newton_matrix(e.values, g1.data(), &c1, 1);
  const linear::BlockSparseSymmetric H2 = a.gauss_newton_matrix(e.values, g2.data(), &c2, 2);
  CHECK(c1 == c2);
  CHECK(g1 == g2);
  REQUIRE(H1.values().size() == H2.values().size());
  CHECK(std::equal(H1.values().begin(), H1.values().end(), H2.values().begin()));
  CHECK(a.cost(e.values, 1) == a.cost(e.values, 2));
}
