// Per-factor evaluation and the gradient checker: a robust circle fit, its outliers listed
// after the solve, one instance's residual and Jacobian blocks, and a check of every
// Jacobian against central differences.
//
//   lsjit_example_factor_evaluation
//
// 40 points on a circle of centre (1, -2) and radius 3, with a little noise, and 5 points
// thrown far off it. Each point is an instance of one cost, r = ‖p − c‖ − R, under a Cauchy
// loss so that the thrown points barely pull. After the solve, evaluate_instances gives
// every instance's cost ½ρ(r²) and loss weight ρ'(r²), the same numbers the solver summed:
// the thrown points are those with weight below 0.1 (Ceres users: Problem::Evaluate;
// GTSAM users: error() and linearize()).
//
// The program exits nonzero when the outliers listed are not the thrown points, when the
// instance costs do not add up to the solver's final cost, or when the gradient check
// fails.
#include <lsjit/lsjit.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <set>
#include <vector>

namespace {

// r = ‖p − c‖ − R: the centre c is a VecVar<2>, the radius a ScalarVar, the point data.
const auto circle_distance = lsjit::cost(
    "circle_distance", [](const auto& v, lsjit::VecVar<2> c, lsjit::ScalarVar R, const auto& p) {
      return (p - v[c]).norm() - v[R];
    });

int run() {
  std::vector<Eigen::Vector2d> points;
  std::set<size_t> thrown;
  for (size_t k = 0; k < 45; ++k) {
    const double angle = 0.14 * static_cast<double>(k);
    const double noise = 0.02 * std::sin(13.0 * static_cast<double>(k));
    const double radius = k % 9 == 4 ? 7.0 : 3.0 + noise;  // every 9th point thrown off
    if (k % 9 == 4) thrown.insert(k);
    points.emplace_back(1.0 + radius * std::cos(angle), -2.0 + radius * std::sin(angle));
  }

  lsjit::Problem problem;
  problem.add(circle_distance, lsjit::CauchyLoss(0.3), lsjit::VecVar<2>(0), lsjit::ScalarVar(0), points);
  const lsjit::AnalyzedProblem analyzed = problem.analyze();
  lsjit::Values initial;
  initial.set(lsjit::VecVar<2>(0), Eigen::Vector2d(0.5, -1.5));
  initial.set(lsjit::ScalarVar(0), 2.5);
  const lsjit::SolveResult result = analyzed.solve(initial);
  const Eigen::Vector2d centre = result.values.get(lsjit::VecVar<2>(0));
  std::printf("centre (%.4f, %.4f), radius %.4f, final cost %.6g\n", centre(0), centre(1),
              result.values.get(lsjit::ScalarVar(0)), result.summary.final_cost);

  // 1. Every instance's residual, cost and loss weight at the solution, without Jacobians.
  //    Instance k of group 0 is the k-th point added.
  const std::vector<lsjit::InstanceEvaluation> all =
      analyzed.evaluate_instances(result.values, analyzed.all_instances(), /*jacobians=*/false);
  std::set<size_t> outliers;
  double total = 0;
  for (const lsjit::InstanceEvaluation& e : all) {
    total += e.cost;
    if (e.weight < 0.1) {
      outliers.insert(e.which.instance);
      std::printf("outlier: point %zu, residual %.3f, cost %.4f, weight %.4f\n", e.which.instance,
                  e.residuals(0), e.cost, e.weight);
    }
  }

  // 2. One instance with its Jacobian blocks: one per variable argument, residual_dim x
  //    tangent, row-major, in the variables' tangent spaces.
  const lsjit::InstanceEvaluation one = analyzed.evaluate_instances(result.values, {{0, 0}})[0];
  for (const lsjit::JacobianBlock& b : one.blocks)
    std::cout << "d r / d " << b.type << " " << b.id << " = " << b.jacobian << "\n";

  // 3. The gradient checker: every instance's Jacobian against central differences.
  //    report() lists the worst entries, failed or not, by instance, variable and entry.
  lsjit::GradientCheckOptions check_options;
  check_options.max_reported = 3;
  const lsjit::GradientCheckResult check = analyzed.check_gradients(result.values, check_options);
  std::cout << check.report();

  const bool ok = outliers == thrown && std::abs(total - result.summary.final_cost) <= 1e-12 * total &&
                  check.passed && one.blocks.size() == 2 && one.blocks[0].jacobian.cols() == 2;
  if (!ok) std::cerr << "factor_evaluation: unexpected result\n";
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "factor_evaluation: " << e.what() << "\n";
    return 1;
  }
}
