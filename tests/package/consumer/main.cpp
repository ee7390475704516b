// A program outside lsjit, compiled against an installed lsjit: its cost lives in a
// translation unit of its own that includes only <lsjit/costs.h> (circle_cost.cpp); this
// one includes <lsjit/lsjit.h> from the install tree, solves, and exits nonzero when the
// answer is wrong (tests/package/install_and_build.cmake runs it).
//
// The problem: fit a circle to points that lie exactly on one, so the fit must recover
// its center and radius to rounding.
#include <lsjit/lsjit.h>

#include <cmath>
#include <iostream>
#include <vector>

// circle_cost.cpp
void add_points_on_circle(lsjit::Problem& problem, lsjit::VecVar<2> center, lsjit::ScalarVar radius,
                          const std::vector<Eigen::Vector2d>& points);

int main() {
  const Eigen::Vector2d true_center(1.0, -2.0);
  const double true_radius = 3.0;
  std::vector<Eigen::Vector2d> points;
  for (int k = 0; k < 12; ++k) {
    const double angle = 0.1 + 0.4 * k;  // most of a turn, so the circle is well determined
    points.push_back(true_center + true_radius * Eigen::Vector2d(std::cos(angle), std::sin(angle)));
  }

  lsjit::Problem problem;
  const lsjit::VecVar<2> center(0);
  const lsjit::ScalarVar radius(0);
  add_points_on_circle(problem, center, radius, points);

  lsjit::Values initial;
  initial.set(center, Eigen::Vector2d(0.0, 0.0));
  initial.set(radius, 1.0);

  // The default linear solver, LinearSolver::Auto, picks dense_schur here (the one cost
  // has one variable of each type, so one type can be eliminated): this exercises lsjit's
  // libraries and LLVM (the JIT); the sparse Cholesky (supernodal, OpenBLAS) is not called.
  const lsjit::SolveResult result = problem.analyze().solve(initial);
  std::cout << result.summary.report();

  const Eigen::Vector2d c = result.values.get(center);
  const double r = result.values.get(radius);
  std::cout << "center " << c.transpose() << ", radius " << r << "\n";
  const bool ok = lsjit::converged(result.summary.termination) &&
                  (c - true_center).norm() < 1e-6 && std::abs(r - true_radius) < 1e-6 &&
                  result.summary.final_cost < 1e-12;
  if (!ok) {
    std::cerr << "fit_circle: expected center (1, -2) and radius 3\n";
    return 1;
  }
  return 0;
}
