// Constrained least squares with lsjit: a robot arm's joint angles, fitted to where its
// tip should be, with an equality and an inequality constraint.
//
//   lsjit_example_constrained
//
// A planar arm of three links (lengths 1.0, 0.8, 0.5, relative joint angles q) should
// bring its tip as close as it can to a target out of its reach, while
//   - its last link stays horizontal: q0 + q1 + q2 = 0 (equality), and
//   - its first joint angle stays at most 1.0 rad: q0 - 1 <= 0 (inequality).
// Unconstrained it would point straight at the target, q0 ≈ 1.64: the limit binds.
// A constraint is a cost of kind CostKind::Equality, InequalityLe or InequalityGe whose
// "residual" is c(x). lsjit solves the problem with an augmented Lagrangian around
// Levenberg–Marquardt (ALGENCAN's multiplier and penalty updates): the multipliers and
// penalties change between outer iterations as runtime data, so nothing recompiles.
//
// The program exits nonzero when a constraint is violated by more than 1e-8, when the
// inequality is not active (the unconstrained optimum violates it, so it must bind), or
// when a finite-difference check finds the cost still sloping along the feasible direction.
#include <lsjit/lsjit.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>

namespace {

constexpr std::array<double, 3> kLength = {1.0, 0.8, 0.5};

// Forward kinematics: the positions of the joints after `links` links, for angles q
// (relative angles, as joint encoders report them). Generic in the scalar: the same code
// runs on doubles here and on lsjit::Sym inside the costs.
template <class Q>
auto point_after(const Q& q, int links) {
  using S = std::decay_t<decltype(q(0))>;
  using std::cos;
  using std::sin;
  S x = S(0.0), y = S(0.0), angle = S(0.0);
  for (int i = 0; i < links; ++i) {
    angle = angle + q(i);
    x = x + kLength[i] * cos(angle);
    y = y + kLength[i] * sin(angle);
  }
  return std::array<S, 2>{x, y};
}

}  // namespace

int main() try {
  // The objective: the tip's distance to the target, a 2-vector residual. The target is
  // data, so another target would reuse the compiled kernels.
  auto reach = lsjit::cost("arm_reach", [](const auto& v, lsjit::VecVar<3> q, const auto& target) {
    const auto tip = point_after(v[q], 3);
    return std::array<lsjit::Sym, 2>{tip[0] - target(0), tip[1] - target(1)};
  });
  // Equality: the last link's absolute angle minus the wanted one (data: 0) must be 0.
  auto last_link_level = lsjit::cost("last_link_level", [](const auto& v, lsjit::VecVar<3> q, const auto& angle) {
    return v[q](0) + v[q](1) + v[q](2) - angle;
  }, lsjit::CostKind::Equality);
  // Inequality: q0 - 1.0 <= 0.
  auto joint_limit = lsjit::cost("joint_limit", [](const auto& v, lsjit::VecVar<3> q, const auto& limit) {
    return v[q](0) - limit;
  }, lsjit::CostKind::InequalityLe);

  const Eigen::Vector2d target(-0.2, 3.0);  // out of reach (the arm is 2.3 long)
  lsjit::Problem problem;
  problem.add(reach, lsjit::VecVar<3>(0), target);
  problem.add(last_link_level, lsjit::VecVar<3>(0), 0.0);
  problem.add(joint_limit, lsjit::VecVar<3>(0), 1.0);

  lsjit::Values initial;
  initial.set(lsjit::VecVar<3>(0), Eigen::Vector3d(0.5, 0.2, -0.7));  // feasible: level, q0 < 1
  lsjit::SolverOptions options;
  options.linear_solver = lsjit::LinearSolver::DenseCholesky;
  options.function_tolerance = 1e-12;
  options.constraints.violation_tolerance = 1e-10;
  const lsjit::AnalyzedProblem analyzed = problem.analyze();
  const lsjit::SolveResult result = analyzed.solve(initial, options);
  std::cout << result.summary.report();

  const Eigen::Vector3d q = result.values.get(lsjit::VecVar<3>(0));
  const auto tip = point_after(q, 3);
  std::printf("angles (%.6f, %.6f, %.6f)  tip (%.6f, %.6f)\n", q(0), q(1), q(2), tip[0], tip[1]);

  bool ok = lsjit::converged(result.summary.termination);
  if (std::abs(q.sum()) > 1e-8) {
    std::printf("FAILED: the last link is %.3e rad off level\n", q.sum());
    ok = false;
  }
  if (std::abs(q(0) - 1.0) > 1e-8) {  // the unconstrained arm would lift q0 above 1
    std::printf("FAILED: the joint limit should bind, q0 = %.9f\n", q(0));
    ok = false;
  }
  // First-order optimality on the constraints' tangent: with q0 at its limit, the feasible
  // moves keep q1 + q2 constant. The cost must be stationary along them.
  const double h = 1e-6;
  auto cost_at = [&](double d) {
    Eigen::Vector3d x = q;
    x(1) += d;
    x(2) -= d;
    const auto t = point_after(x, 3);
    return 0.5 * ((t[0] - target(0)) * (t[0] - target(0)) + (t[1] - target(1)) * (t[1] - target(1)));
  };
  const double slope = (cost_at(h) - cost_at(-h)) / (2 * h);
  if (std::abs(slope) > 1e-5) {
    std::printf("FAILED: the cost still changes along the feasible direction (slope %.3e)\n", slope);
    ok = false;
  }
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "constrained: " << e.what() << "\n";
  return 1;
}
